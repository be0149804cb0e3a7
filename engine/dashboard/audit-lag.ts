import type { Redis } from 'ioredis';
import { keys, OUTBOX_GROUP } from '../redis/keys.js';

/** The ms part of a stream id ("<ms>-<seq>"). */
const idMs = (id: string): number => Number(id.split('-')[0]);

/** a < b for stream ids. */
function idBefore(a: string, b: string): boolean {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am < bm || (am === bm && as < bs);
}

type Entries = [id: string, fields: string[]][];

/**
 * How far the tenant's durable audit chain is behind its queue: the oldest
 * outbox entry (keys.outbox) not yet written to Postgres. Two kinds are not
 * written: entries delivered to the sink's consumer group and not yet
 * acknowledged (XPENDING's smallest id), and entries not yet delivered (the
 * first after the group's last-delivered-id). Stream ids are the ms the
 * entry was queued, so the oldest of the two dates the backlog.
 *
 * One round trip, and a second only when the first entry of the stream was
 * already delivered (the sink deletes what it wrote, so that first entry is
 * usually the one sought).
 */
export class AuditLag {
  constructor(private readonly redis: Redis) {}

  /** When the oldest entry not yet in Postgres was queued (ms), or null when everything is written. */
  async oldestUnwritten(tenantId: string): Promise<number | null> {
    const key = keys.outbox(tenantId);
    const replies = (await this.redis.pipeline()
      .xpending(key, OUTBOX_GROUP)
      .xinfo('GROUPS', key)
      .xrange(key, '-', '+', 'COUNT', 1)
      .exec()) ?? [];
    const [pending, groups, first] = replies;
    const firstId = ((first?.[1] ?? []) as Entries)[0]?.[0] ?? null;
    if (firstId === null) return null; // an empty stream (or none): nothing queued
    // No group yet (a Redis that lost its data, before the sink's first read): nothing was delivered.
    const lastDelivered = groups?.[0] ? null : deliveredUpTo(groups?.[1]);
    if (lastDelivered === null) return idMs(firstId);

    const oldestPending = pending?.[0] ? null : ((pending?.[1] as [number, string | null] | undefined)?.[1] ?? null);
    let undelivered: string | null = firstId;
    if (!idBefore(lastDelivered, firstId)) {
      const next = (await this.redis.xrange(key, `(${lastDelivered}`, '+', 'COUNT', 1)) as Entries;
      undelivered = next[0]?.[0] ?? null;
    }
    const candidates = [oldestPending, undelivered].filter((x): x is string => x !== null).map(idMs);
    return candidates.length ? Math.min(...candidates) : null;
  }

  /** Minutes (one decimal) since the oldest entry not yet in Postgres was queued; 0 when all are written. */
  async lagMinutes(tenantId: string, now: number): Promise<number> {
    const oldest = await this.oldestUnwritten(tenantId);
    return oldest === null ? 0 : Math.max(0, Math.round((now - oldest) / 6_000) / 10);
  }
}

/** The sink group's last-delivered-id from XINFO GROUPS (a flat field list per group), or null without the group. */
function deliveredUpTo(groups: unknown): string | null {
  for (const g of (groups ?? []) as unknown[][]) {
    const f = new Map<string, unknown>();
    for (let i = 0; i + 1 < g.length; i += 2) f.set(String(g[i]), g[i + 1]);
    if (f.get('name') === OUTBOX_GROUP) return String(f.get('last-delivered-id') ?? '0-0');
  }
  return null;
}
