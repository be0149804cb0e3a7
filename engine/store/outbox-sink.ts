import { Redis } from 'ioredis';
import { keys, OUTBOX_GROUP, tenantOfKey } from '../redis/keys.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { daysToFile, PartitionCache } from '../audit/chain-writer.js';
import { outboxFields, RECORD_TYPES, type OutboxFields } from './outbox-record.js';
import { applyWaiting, auditEntriesOf, writeOutbox, type OutboxRecord, type VoucherCount } from './outbox-writer.js';
import type { Pool } from './postgres.js';

// fields is null for an entry deleted while it was pending.
type StreamEntry = [id: string, fields: string[] | null];
/** An outbox entry read from its stream; `error` once Postgres refused it, or when it could not be read. */
interface StreamRecord {
  key: string;
  id: string;
  f: OutboxFields;
  error?: string;
}
type StreamReply = [key: string, entries: StreamEntry[]][] | null;

/** Entries a lane has read: to store, and to acknowledge only (deleted while pending). */
class Read {
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
/** How often lane 0 applies session ends and extensions that wait for a start already stored (see applyWaiting). */
const WAITING_MS = 5_000;
/** Dead letters kept per tenant (approximately: MAXLEN ~). */
const DEAD_LETTER_MAXLEN = 100_000;
const IDLE_POLL_MS = 50;
/** Streams in one XREADGROUP; also the most tenants a lane takes at once. */
const STREAMS_PER_READ = 256;
/**
 * How long a lane goes on with the same tenants, batch after batch, before it
 * lets them go and takes again (lane 0 then also applies waiting ends).
 */
const HOLD_MS = 1_000;
// A live consumer holds entries for milliseconds; ten seconds idle means its process is gone.
const CLAIM_IDLE_MS = 10_000;
/**
 * Independent drain loops per process. A lane takes a share of the tenants
 * no other lane is working on (take), drains them batch after batch for up
 * to HOLD_MS and lets them go: a tenant's records go one batch at a time, in stream order
 * (its chain's head lock would serialise them anyway), while one lane's
 * Postgres work overlaps the others' reading and hashing. Lanes used to own
 * tenants by a hash of their ids, and four tenants often fell on two or three
 * lanes, leaving the others idle.
 */
export const LANES = 4;

/** The sink's counters and their help texts. */
export const SINK_COUNTERS = {
  outbox_records_written_total: 'Rows written to Postgres from outbox records (duplicates excluded)',
  outbox_sink_errors_total: 'Failed outbox drain attempts (retried)',
  outbox_dead_letters_total: 'Outbox records Postgres refused on their own, moved to the tenant\'s dead-letter stream',
} as const;

/** One drain loop's state. */
interface Lane {
  index: number;
  wake: (() => void) | undefined;
}

/**
 * Drains the tenants' outbox streams into Postgres.
 *
 * Delivery is at least once: entries are read through a consumer group,
 * written in one transaction whose rows are keyed by the id chosen in Redis
 * (ON CONFLICT DO NOTHING), and only then acknowledged and deleted. A crash
 * between commit and XACK re-delivers entries that are then ignored, so each
 * record lands exactly once in effect. Entries left pending by a consumer that
 * died are claimed after CLAIM_IDLE_MS.
 *
 * After a failed write, and at start (a restart under the same NODE_ID), a
 * tenant's own pending entries are read again, oldest first, before any new
 * one of its stream: a failed batch is retried at once and in stream order,
 * the backlog of unacknowledged entries never grows past one batch while
 * Postgres is away, and the lag gauge keeps measuring from the oldest record
 * not yet stored.
 */
export class OutboxSink {
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly lanes: Lane[] = Array.from({ length: LANES }, (_, index) => ({ index, wake: undefined }));
  /** Tenants a lane is working on now: no other lane reads their streams meanwhile. */
  private readonly busy = new Set<string>();
  /** Where the next lane starts looking for tenants to take (round robin). */
  private cursor = 0;
  /** Tenants known to have no entries pending with this consumer; the others' are read again first. */
  private readonly noPending = new Set<string>();
  /**
   * Stream time (ms) of each tenant's oldest record read and not yet stored.
   * Kept by tenant, not by lane: after a failed batch another lane may take
   * the tenant, and its records stay unstored until that lane stores them.
   */
  private readonly unstored = new Map<string, number>();
  /** When each tenant's stream was last searched for entries a dead consumer left pending. */
  private readonly lastClaim = new Map<string, number>();
  private knownTenants: string[] = [];
  private lastWaiting = 0;
  private readonly partitions = new PartitionCache();

  constructor(
    private readonly redis: Redis,
    private readonly pool: Pool,
    private readonly tenantIds: () => Promise<string[]>,
    private readonly consumer: string,
    private readonly log: Logger,
    metrics: Metrics,
  ) {
    for (const [name, help] of Object.entries(SINK_COUNTERS)) metrics.counter(name, help);
    metrics.gauge('outbox_sink_lag_seconds', 'Age of the oldest record the sink has read but not yet stored', () => lagSeconds(this.oldestPendingMs));
    this.metrics = metrics;
  }

  private readonly metrics: Metrics;

  /** Stream time (ms) of the oldest record read and not yet stored, over all tenants; 0 when none. */
  get oldestPendingMs(): number {
    let oldest = 0;
    for (const ms of this.unstored.values()) if (oldest === 0 || ms < oldest) oldest = ms;
    return oldest;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loops = this.lanes.map((lane) => this.run(lane));
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const lane of this.lanes) lane.wake?.();
    await Promise.all(this.loops);
  }

  private async run(lane: Lane): Promise<void> {
    let backoff = IDLE_POLL_MS;
    while (this.running) {
      try {
        const n = await this.cycle(lane);
        backoff = IDLE_POLL_MS;
        if (n > 0) continue;
      } catch (err) {
        this.metrics.inc('outbox_sink_errors_total');
        this.log.warn({ err: (err as Error).message, lane: lane.index }, 'outbox drain failed; will retry');
        backoff = Math.min(backoff * 2, 5_000);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, backoff);
        lane.wake = () => { clearTimeout(t); resolve(); };
      });
    }
  }

  /** One batch of a lane: take tenants, read, store, acknowledge, let the tenants go. */
  private async cycle(lane: Lane): Promise<number> {
    // Waiting ends and extensions are everyone's, not one tenant's: lane 0 applies them.
    if (lane.index === 0 && Date.now() - this.lastWaiting > WAITING_MS) {
      this.lastWaiting = Date.now();
      // Its failure (Postgres away) must not hold up reading the streams: the batch meets the same error soon enough.
      await applyWaiting(this.pool).catch((err: Error) => this.log.warn({ err: err.message }, 'applying waiting session ends and extensions failed; will retry'));
    }
    const tenants = this.take(await this.tenants());
    if (tenants.length === 0) return 0;
    try {
      return await this.batch(tenants);
    } catch (err) {
      // Whatever was read stays pending: read it again first.
      for (const t of tenants) this.noPending.delete(t);
      throw err;
    } finally {
      for (const t of tenants) this.busy.delete(t);
    }
  }

  /**
   * The tenants a lane works on next, marked busy: free ones in round-robin
   * order, up to an even share and at most one read command's worth
   * (STREAMS_PER_READ), so that every tenant comes round however many there
   * are and however busy the others.
   */
  private take(tenants: string[]): string[] {
    const share = Math.min(STREAMS_PER_READ, Math.max(1, Math.ceil(tenants.length / LANES)));
    const chosen: string[] = [];
    for (let i = 0; i < tenants.length && chosen.length < share; i++) {
      const t = tenants[(this.cursor + i) % tenants.length]!;
      if (!this.busy.has(t)) chosen.push(t);
    }
    this.cursor = tenants.length ? (this.cursor + share) % tenants.length : 0;
    for (const t of chosen) this.busy.add(t);
    return chosen;
  }

  /**
   * Drains the lane's tenants: a first read (their pending entries first where
   * they may have some, entries a dead consumer left, then new ones), and then
   * batch after batch while they have more, for up to HOLD_MS. While a batch
   * is in Postgres, the next is read and parsed (only new entries, of tenants
   * with none pending): one tenant's drain overlaps its reading with its
   * writing, and a batch's acknowledgement with the next one's writing. A
   * failed write leaves both batches pending, to be read again in stream
   * order (cycle()).
   */
  private async batch(tenants: string[]): Promise<number> {
    const since = Date.now();
    let next = await this.read(tenants);
    this.noteUnstored(next.entries);
    let stored = 0;
    // The last batch's acknowledgement (XACK, XDEL), settled into a value at once like `ahead` below.
    let acking: Promise<{ err: unknown } | null> = Promise.resolve(null);
    const acknowledged = async (): Promise<void> => {
      const got = await acking;
      if (got) throw got.err;
    };
    try {
      for (;;) {
        const { entries, stale } = next;
        if (entries.length === 0) {
          await acknowledged();
          if (stale.length) await this.acknowledge(stale);
          break;
        }
        // Entries that are no record go to the dead letters with the refused ones; the rest are written.
        const unreadable = entries.filter((e) => e.error !== undefined);
        const records = unreadable.length ? entries.filter((e) => e.error === undefined) : entries;
        const writing = records.length ? this.writeIsolating(records) : Promise.resolve([]);
        const more = this.running && Date.now() - since < HOLD_MS;
        // Settled into a value at once: a read that fails while the write is still in Postgres must
        // not go unhandled (it is thrown below, after the write, like any failure of the batch).
        const ahead: Promise<{ read: Read } | { err: unknown }> = (more ? this.readNew(tenants) : Promise.resolve(new Read()))
          .then((read) => ({ read }), (err: unknown) => ({ err }));
        let refused: StreamRecord[];
        try {
          refused = [...unreadable, ...(await writing)];
        } catch (err) {
          await ahead;
          throw err;
        }
        try {
          await acknowledged();
        } catch (err) {
          await ahead;
          throw err;
        }
        if (refused.length) await this.deadLetter(refused);
        // Stored: acknowledged while the next batch is written (a crash before the acknowledgement
        // only delivers these again, and they are stored once).
        acking = this.acknowledge(stale.length ? [...entries, ...stale] : entries).then(() => null, (err: unknown) => ({ err }));
        stored += entries.length;
        const got = await ahead;
        if ('err' in got) throw got.err;
        next = got.read;
        // Stored: what is left unstored of these tenants is what was read ahead.
        for (const t of tenants) this.unstored.delete(t);
        this.noteUnstored(next.entries);
      }
    } finally {
      // Never left in flight: a lane that gives its tenants up has had them acknowledged.
      await acking;
    }
    return stored;
  }

  /** Remembers the stream time of each tenant's oldest entry read and not yet stored (the lag gauge). */
  private noteUnstored(entries: StreamRecord[]): void {
    for (const e of entries) {
      const t = tenantOfKey(e.key);
      const ms = Number(e.id.slice(0, e.id.indexOf('-')));
      const known = this.unstored.get(t);
      if (known === undefined || ms < known) this.unstored.set(t, ms);
    }
  }

  /** A lane's first read of its tenants: pending entries where there may be some, claimed ones, then new ones. */
  private async read(tenants: string[]): Promise<Read> {
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
  private async readNew(tenants: string[]): Promise<Read> {
    const got = new Read();
    const fresh = tenants.filter((t) => this.noPending.has(t));
    if (fresh.length > 0) await this.readGroup(fresh.map((t) => keys.outbox(t)), '>', (reply) => got.collect(reply, false));
    return got;
  }

  /**
   * Writes a batch; when Postgres refuses it for its data (not for being
   * away), halves it until the refused records stand alone, writing the rest
   * in stream order. A refused record would otherwise fail its batch on every
   * retry and hold back every record behind it, other tenants' too, while the
   * streams grow in Redis. Returns the refused entries (usually none).
   */
  private async writeIsolating(entries: StreamRecord[]): Promise<StreamRecord[]> {
    const attempt = (): Promise<void> => this.write(entries.map((e) => ({ tenant: tenantOfKey(e.key), f: e.f })));
    try {
      await attempt();
      return [];
    } catch (err) {
      if (partitionMissing(err)) {
        // Not the records' fault: make the partitions again on the retry.
        this.partitions.forgetAll();
        throw err;
      }
      if (!refusedForItsData(err)) throw err;
      if (entries.length === 1) {
        // Once more on its own: a refusal that does not repeat was not about the record.
        try {
          await attempt();
          return [];
        } catch (again) {
          if (partitionMissing(again)) this.partitions.forgetAll();
          if (partitionMissing(again) || !refusedForItsData(again)) throw again;
        }
        this.log.error({ err: (err as Error).message, stream: entries[0]!.key, id: entries[0]!.id },
          'outbox record refused by Postgres; moved to the dead-letter stream');
        return [{ ...entries[0]!, error: (err as Error).message }];
      }
      const mid = entries.length >> 1;
      return [...(await this.writeIsolating(entries.slice(0, mid))), ...(await this.writeIsolating(entries.slice(mid)))];
    }
  }

  /**
   * After a commit, no voucher's Redis counter may stay below what Postgres
   * now counts. Redis is normally ahead and nothing is written; it is behind
   * only when a restarted Redis was reloaded from Postgres before this batch
   * (read from the old Redis) was stored, and then this closes the gap.
   * Best effort: the uses are stored; a failure here is only logged.
   */
  private async raiseRedisCounters(counters: VoucherCount[]): Promise<void> {
    const p = this.redis.pipeline();
    for (const v of counters) p.raiseUsesV1(keys.voucher(v.tenant_id, v.code), v.id, v.uses);
    const results = (await p.exec().catch((err: Error) => [[err, null]] as [Error, null][])) ?? [];
    const failed = results.find(([err]) => err);
    if (failed) this.log.warn({ err: failed[0]?.message }, 'could not raise voucher counters in Redis after a commit');
  }

  /** Keeps refused records, with why and where from, in the tenant's dead-letter stream (before they are acknowledged). */
  private async deadLetter(refused: StreamRecord[]): Promise<void> {
    const p = this.redis.pipeline();
    for (const e of refused) {
      const fields: string[] = ['stream_id', e.id, 'error', e.error ?? ''];
      for (const k in e.f) fields.push(k, e.f[k] ?? '');
      p.xadd(keys.outboxDead(tenantOfKey(e.key)), 'MAXLEN', '~', DEAD_LETTER_MAXLEN, '*', ...fields);
    }
    const results = (await p.exec()) ?? [];
    for (const [err] of results) if (err) throw err;
    this.metrics.inc('outbox_dead_letters_total', '', refused.length);
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
      try {
        const reply = (await this.redis.xreadgroup('GROUP', OUTBOX_GROUP, this.consumer, 'COUNT', count, 'STREAMS', ...chunk, ...chunk.map(() => id))) as StreamReply;
        for (const [, list] of reply ?? []) left -= list.length;
        for (const key of chunk) read.add(key);
        collect(reply);
      } catch (err) {
        if (!(err as Error).message.includes('NOGROUP')) throw err;
        for (const key of chunk) {
          await this.redis.xgroup('CREATE', key, OUTBOX_GROUP, '0', 'MKSTREAM').catch(() => undefined);
        }
      }
    }
    return read;
  }

  /** Acknowledges and deletes stored entries (only after their transaction committed). */
  private async acknowledge(done: { key: string; id: string }[]): Promise<void> {
    const byKey = new Map<string, string[]>();
    for (const e of done) {
      let ids = byKey.get(e.key);
      if (!ids) byKey.set(e.key, (ids = []));
      ids.push(e.id);
    }
    const p = this.redis.pipeline();
    for (const [key, ids] of byKey) {
      p.xack(key, OUTBOX_GROUP, ...ids);
      p.xdel(key, ...ids);
    }
    await p.exec();
  }

  /**
   * The tenants whose streams to read. While Postgres is away the last known
   * list is used, so records are still read and the lag gauge shows their age.
   */
  private async tenants(): Promise<string[]> {
    try {
      this.knownTenants = await this.tenantIds();
    } catch (err) {
      if (this.knownTenants.length === 0) throw err;
    }
    return this.knownTenants;
  }

  private async write(records: OutboxRecord[]): Promise<void> {
    const audit = auditEntriesOf(records);
    await this.partitions.ensure(this.pool, daysToFile(audit.map((e) => e.ts)));
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const { written, counters } = await writeOutbox(client, records, audit);
      await client.query('COMMIT');
      this.metrics.inc('outbox_records_written_total', '', written);
      if (counters.length) await this.raiseRedisCounters(counters);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}

/** A record the sink moved to a tenant's dead-letter stream. */
export interface DeadLetter {
  /** Its id in the outbox stream (the time it was queued, in ms, is its first part). */
  streamId: string;
  type: string;
  sessionId: string;
  hotspotId: string;
  error: string;
}

/**
 * The tenant's dead letters of records queued in [fromMs, toMs): the day a
 * record belongs to, not the day Postgres refused it (later, after an
 * outage perhaps). A record is dead-lettered after it was queued, so the
 * dead-letter stream is read from fromMs on (it is short: normally empty,
 * at most DEAD_LETTER_MAXLEN).
 */
export async function deadLettersBetween(redis: Redis, tenantId: string, fromMs: number, toMs: number): Promise<DeadLetter[]> {
  const entries = await redis.xrange(keys.outboxDead(tenantId), String(fromMs), '+');
  const out: DeadLetter[] = [];
  for (const [, fields] of entries) {
    const f = new Map<string, string>();
    for (let i = 0; i + 1 < fields.length; i += 2) f.set(fields[i]!, fields[i + 1]!);
    const streamId = f.get('stream_id') ?? '';
    const queuedMs = Number(streamId.slice(0, streamId.indexOf('-')));
    if (!(queuedMs >= fromMs && queuedMs < toMs)) continue;
    out.push({ streamId, type: f.get('type') ?? '', sessionId: f.get('sid') ?? '', hotspotId: f.get('hs') ?? '', error: f.get('error') ?? '' });
  }
  return out;
}

/**
 * Whether Postgres refused a write for what it carried (a value it cannot
 * store, a constraint) rather than for being unreachable or busy: only then
 * is retrying the same rows pointless. Errors our own code throws while
 * building rows from a malformed record (TypeError, RangeError, SyntaxError)
 * count as refusals too.
 */
function refusedForItsData(err: unknown): boolean {
  if (partitionMissing(err)) return false;
  if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError) return true;
  const code = (err as { code?: unknown }).code;
  // SQLSTATE class 21: cardinality violation; 22: data exception; 23: integrity constraint violation.
  return typeof code === 'string' && /^2[123][0-9A-Z]{3}$/.test(code);
}

/**
 * An insert that found no partition for its day (23514, "no partition of
 * relation found for row") or a partition table that is gone (42P01): our
 * cache of created partitions is wrong, not the record.
 */
function partitionMissing(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === '23514' || code === '42P01';
}

/** The sink's lag: how old the oldest record read and not yet stored is. */
export function lagSeconds(oldestPendingMs: number): number {
  return oldestPendingMs === 0 ? 0 : (Date.now() - oldestPendingMs) / 1000;
}

/** Orders entries by stream, then by id (milliseconds, then sequence, as numbers). */
function byStreamOrder(a: StreamRecord, b: StreamRecord): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  const [am, as] = a.id.split('-');
  const [bm, bs] = b.id.split('-');
  return Number(am) - Number(bm) || Number(as) - Number(bs);
}
