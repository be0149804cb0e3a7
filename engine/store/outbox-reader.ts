import { execPerSlot, groupBySlot, type RedisClient as Redis } from '../redis/redis-client.js';
import { keys, OUTBOX_GROUP } from '../redis/keys.js';
import { outboxFields, RECORD_TYPES, type OutboxFields } from './outbox-record.js';

// fields is null for an entry deleted while it was pending.
type StreamEntry = [id: string, fields: string[] | null];
/** An outbox entry read from its stream; `error` once Postgres refused it, or when it could not be read. */
export interface StreamRecord {
  key: string;
  id: string;
  f: OutboxFields;
  error?: string;
}
type StreamReply = [key: string, entries: StreamEntry[]][] | null;

/** Entries a lane has read: to store, and to acknowledge only (deleted while pending). */
export class Read {
  readonly entries: StreamRecord[] = [];
  readonly stale: { key: string; id: string }[] = [];
  /** Streams that gave entries. */
  readonly withEntries = new Set<string>();
  private readonly taken = new Set<string>();

  /** Adds a reply; `redelivered` for pending and claimed entries, which can overlap within one read (new ones cannot). */
  collect(reply: StreamReply, redelivered: boolean): void {
    for (const [key, list] of reply ?? []) {
      for (const [id, fields] of list) {
        if (redelivered) {
          if (this.taken.has(`${key} ${id}`)) continue;
          this.taken.add(`${key} ${id}`);
        }
        if (!fields) { this.stale.push({ key, id }); continue; } // deleted while pending: only the acknowledgement is left to do
        let entry: StreamRecord;
        try {
          entry = { key, id, f: outboxFields(fields) };
          if (!RECORD_TYPES.has(entry.f.type ?? '')) entry.error = `unknown outbox record type ${JSON.stringify(entry.f.type ?? null)}`;
        } catch (err) {
          // Not a record (a hand-edited stream, a bug): kept as it was, with why, among the dead letters.
          entry = { key, id, f: { unreadable: fields.join(' ') }, error: `unreadable outbox entry: ${(err as Error).message}` };
        }
        this.entries.push(entry);
        this.withEntries.add(key);
      }
    }
  }
}

const BATCH = 2000;
/** Streams in one XREADGROUP; also the most tenants a lane takes at once. */
export const STREAMS_PER_READ = 256;
// A live consumer holds entries for milliseconds; ten seconds idle means its process is gone.
const CLAIM_IDLE_MS = 10_000;

/**
 * Reads the tenants' outbox streams through the consumer group as one
 * consumer: its own pending entries, entries a dead consumer left pending
 * (claimed after CLAIM_IDLE_MS), and new ones; and acknowledges what was
 * stored.
 *
 * A tenant's own pending entries are read again, oldest first, before any
 * new one of its stream (at start, and after `recheck`): a failed batch is
 * retried in stream order, and the backlog of unacknowledged entries never
 * grows past one batch while Postgres is away.
 */
export class OutboxReader {
  /** Tenants known to have no entries pending with this consumer; the others' are read again first. */
  private readonly noPending = new Set<string>();
  /** When each tenant's stream was last searched for entries a dead consumer left pending. */
  private readonly lastClaim = new Map<string, number>();

  constructor(private readonly redis: Redis, private readonly consumer: string) {}

  /** What was read of these tenants stays pending (a failed batch): their pending entries are read again first. */
  recheck(tenants: string[]): void {
    for (const t of tenants) this.noPending.delete(t);
  }

  /** A lane's first read of its tenants: pending entries where there may be some, claimed ones, then new ones. */
  async read(tenants: string[]): Promise<Read> {
    const got = new Read();
    const recheck = tenants.filter((t) => !this.noPending.has(t));
    if (recheck.length > 0) {
      // All of them (a tenant has at most a batch or two pending), and none taken for empty unless read.
      const read = await this.readGroup(recheck.map((t) => keys.outbox(t)), '0', (reply) => got.collect(reply, true), Infinity);
      for (const t of recheck) if (read.has(keys.outbox(t)) && !got.withEntries.has(keys.outbox(t))) this.noPending.add(t);
    }
    for (const t of tenants) {
      if (Date.now() - (this.lastClaim.get(t) ?? 0) <= CLAIM_IDLE_MS / 2) continue;
      this.lastClaim.set(t, Date.now());
      const key = keys.outbox(t);
      const claimed = (await this.redis.xautoclaim(key, OUTBOX_GROUP, this.consumer, CLAIM_IDLE_MS, '0', 'COUNT', BATCH)) as [string, StreamEntry[]];
      got.collect([[key, claimed[1]]], true);
    }
    // While a tenant's failed batch is being retried, nothing new of its joins it.
    const fresh = tenants.filter((t) => this.noPending.has(t) && !got.withEntries.has(keys.outbox(t)));
    if (fresh.length > 0 && got.entries.length < BATCH) {
      await this.readGroup(fresh.map((t) => keys.outbox(t)), '>', (reply) => got.collect(reply, false), BATCH - got.entries.length);
    }
    // Entries claimed from a dead consumer are older than our own pending ones: each stream's in its order.
    got.entries.sort(byStreamOrder);
    return got;
  }

  /** New entries of those of the tenants with none pending with us (a read ahead, beside a write). */
  async readNew(tenants: string[]): Promise<Read> {
    const got = new Read();
    const fresh = tenants.filter((t) => this.noPending.has(t));
    if (fresh.length > 0) await this.readGroup(fresh.map((t) => keys.outbox(t)), '>', (reply) => got.collect(reply, false));
    return got;
  }

  /**
   * Reads the group from `id` on the streams: '>' for entries never delivered,
   * '0' for this consumer's pending ones. Streams go STREAMS_PER_READ to a
   * command; `budget` is how many entries to ask for in all, split evenly
   * over a command's streams (at least 16 each), BATCH a stream when
   * unbounded. Returns the streams read: a command refused for a missing
   * group (a Redis that lost its data) has its groups created, and its
   * streams are not among them.
   */
  private async readGroup(streams: string[], id: '0' | '>', collect: (reply: StreamReply) => void, budget = BATCH): Promise<Set<string>> {
    const read = new Set<string>();
    let left = budget;
    for (let i = 0; i < streams.length && left > 0; i += STREAMS_PER_READ) {
      const chunk = streams.slice(i, i + STREAMS_PER_READ);
      const count = left === Infinity ? BATCH : Math.max(16, Math.ceil(left / chunk.length));
      // One command on one server. On a cluster a command's keys must share a slot (CROSSSLOT), and each
      // tenant's stream has its own: one XREADGROUP per slot, all sent at once (in flight together on each
      // master's connection: about one round trip, not one per tenant).
      const replies = await Promise.all(groupBySlot(this.redis, chunk, (k) => k).map(async (group) => {
        try {
          const reply = (await this.redis.xreadgroup('GROUP', OUTBOX_GROUP, this.consumer, 'COUNT', count, 'STREAMS', ...group, ...group.map(() => id))) as StreamReply;
          return { group, reply };
        } catch (err) {
          if (!(err as Error).message.includes('NOGROUP')) throw err;
          for (const key of group) {
            await this.redis.xgroup('CREATE', key, OUTBOX_GROUP, '0', 'MKSTREAM').catch(() => undefined);
          }
          return null;
        }
      }));
      for (const r of replies) {
        if (!r) continue;
        for (const [, list] of r.reply ?? []) left -= list.length;
        for (const key of r.group) read.add(key);
        collect(r.reply);
      }
    }
    return read;
  }

  /** Acknowledges and deletes stored entries (only after their transaction committed). */
  async acknowledge(done: { key: string; id: string }[]): Promise<void> {
    const byKey = new Map<string, string[]>();
    for (const e of done) {
      let ids = byKey.get(e.key);
      if (!ids) byKey.set(e.key, (ids = []));
      ids.push(e.id);
    }
    // One pipeline, or one per slot on a cluster (the streams are of several tenants).
    await execPerSlot(this.redis, [...byKey], ([key]) => key, (p, [key, ids]) => {
      p.xack(key, OUTBOX_GROUP, ...ids);
      p.xdel(key, ...ids);
    });
  }
}

/** The tenant of an outbox stream's key. */
export function tenantOfKey(key: string): string {
  // {t:<tenant>}:outbox
  return key.slice(3, key.indexOf('}'));
}

/** Orders entries by stream, then by id (milliseconds, then sequence, as numbers). */
function byStreamOrder(a: StreamRecord, b: StreamRecord): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  const [am, as] = a.id.split('-');
  const [bm, bs] = b.id.split('-');
  return Number(am) - Number(bm) || Number(as) - Number(bs);
}
