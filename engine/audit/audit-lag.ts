import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys, OUTBOX_GROUP } from '../redis/keys.js';
import { ensureReadScript, ReadBatch, type Slot, type StreamBacklog } from '../redis/read-batch.js';

/** The ms part of a stream id ("<ms>-<seq>"). */
const idMs = (id: string): number => Number(id.split('-')[0]);

/**
 * How far the tenant's durable audit chain is behind its queue: the oldest
 * outbox entry (keys.outbox) not yet written to Postgres. Two kinds are not
 * written: entries delivered to the sink's consumer group and not yet
 * acknowledged (XPENDING's smallest id), and entries not yet delivered (the
 * first after the group's last-delivered-id). Stream ids are the ms the
 * entry was queued, so the oldest of the two dates the backlog.
 *
 * The reads are the read script's `lag` (lua/read-batch-n.lua), so a
 * dashboard answer queues them in its own batch (`queue`): no round trip of
 * their own, and the second XRANGE that once needed a second one is in the
 * script.
 */
export class AuditLag {
  constructor(private readonly redis: Redis) {
    ensureReadScript(redis);
  }

  /** Queues the reads in `batch`; the slot holds when the oldest unwritten entry was queued (ms), or null. */
  queue(batch: ReadBatch, tenantId: string): Slot<number | null> {
    const backlog = batch.streamBacklog(keys.outbox(tenantId), OUTBOX_GROUP);
    return () => oldestOf(backlog());
  }

  /** When the oldest entry not yet in Postgres was queued (ms), or null when everything is written. */
  async oldestUnwritten(tenantId: string): Promise<number | null> {
    const batch = new ReadBatch(this.redis);
    const oldest = this.queue(batch, tenantId);
    await batch.run();
    return oldest();
  }

  /** Minutes (one decimal) since the oldest entry not yet in Postgres was queued; 0 when all are written. */
  async lagMinutes(tenantId: string, now: number): Promise<number> {
    return lagMinutesOf(await this.oldestUnwritten(tenantId), now);
  }
}

/** Minutes (one decimal) from `oldest` (ms, or null: nothing unwritten) to `now`. */
export function lagMinutesOf(oldest: number | null, now: number): number {
  return oldest === null ? 0 : Math.max(0, Math.round((now - oldest) / 6_000) / 10);
}

function oldestOf(b: StreamBacklog): number | null {
  if (b.first === null) return null; // an empty stream (or none): nothing queued
  // No group yet (a Redis that lost its data, before the sink's first read): nothing was delivered.
  if (!b.hasGroup) return idMs(b.first);
  const candidates = [b.pending, b.undelivered].filter((x): x is string => x !== null).map(idMs);
  return candidates.length ? Math.min(...candidates) : null;
}
