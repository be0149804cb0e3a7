import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { BatchWriter, partitionMissing, refusedForItsData } from './batch-writer.js';
import { deadLetter } from './dead-letters.js';
import { LANES, LaneScheduler } from './lane-scheduler.js';
import { OutboxReader, Read, tenantOfKey, type StreamRecord } from './outbox-reader.js';
import { applyWaiting } from './outbox-writer.js';
import type { Pool } from './postgres.js';

export { LANES } from './lane-scheduler.js';
export { deadLettersBetween, type DeadLetter } from './dead-letters.js';

/** How often lane 0 applies session ends and extensions that wait for a start already stored (see applyWaiting). */
const WAITING_MS = 5_000;
const IDLE_POLL_MS = 50;
/**
 * A lane that found no tenant free (fewer tenants than lanes: one venue, one tenant) waits twice as
 * long each time, up to this, instead of the idle poll: the lanes that hold the tenants read them
 * meanwhile, and each wake-up costs the idle service CPU (three such lanes woke 60 times a second).
 */
const NOTHING_TO_TAKE_MAX_MS = 1_000;
/**
 * A cycle that stored fewer records than LINGER_BELOW waits LINGER_MS before
 * the next, so records gather into batches worth a transaction. The lane keeps
 * its tenants through the wait (run()): released at once, another lane would
 * drain them meanwhile, and with four lanes a single busy tenant (a stadium)
 * was written every 25-50 ms whatever the linger (35 transactions a second at
 * 100 sign-ins/s, bench/results/stadium-storm.md). At a steady
 * few hundred sign-ins a second a lane otherwise commits every few records:
 * a transaction (the chain head read and written, two inserts, the
 * acknowledgement) per handful, and Postgres and the sink spent several times
 * the CPU per record they spend draining a backlog (bench/otp-signin's
 * half-rate phase). A record reaches Postgres up to LINGER_MS later; the
 * guest never waits for that (invariant 2 is met by the outbox, in Redis),
 * and a backlog still drains batch after batch without a pause. Measured
 * (alternating A/B, bench/results/otp-signin.md): at a steady ~1,100 phone
 * sign-ins/s Postgres' CPU per sign-in fell from 274-372 to 168-174 µs and
 * the service's from 774-977 to 637-663; 200 ms was tried too and lagged the
 * audit-sink bench's stream further behind for no more gain.
 */
const LINGER_BELOW = 300;
const LINGER_MS = 100;
/**
 * How long a lane goes on with the same tenants, batch after batch, before it
 * lets them go and takes again (lane 0 then also applies waiting ends).
 */
const HOLD_MS = 1_000;

/** The audit sink's lag as a histogram (the gauge outbox_sink_lag_seconds shows only the moment of the scrape). */
export const STORE_LAG_METRIC = 'outbox_sink_store_lag_seconds';
/** Seconds: the lag target is met well under a second; an outage backs it up to minutes. */
const STORE_LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** The sink's counters and their help texts. */
/**
 * The sink's counters and store-lag histogram, declared in the thread's registry that counts them and
 * in the main thread's (zero there), so /metrics names them from the start, before the thread's first
 * report; the two registries' same-named series are summed.
 */
export function declareSinkMetrics(metrics: Metrics): void {
  for (const [name, help] of Object.entries(SINK_COUNTERS)) metrics.counter(name, help);
  metrics.histogram(STORE_LAG_METRIC, 'Age of a batch\'s oldest record when the batch was stored in Postgres (outbox append to commit), one observation per batch', '', STORE_LAG_BUCKETS);
}

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
 * Delivery is at least once: entries are read through a consumer group
 * (OutboxReader), written in one transaction whose rows are keyed by the id
 * chosen in Redis (ON CONFLICT DO NOTHING; BatchWriter), and only then
 * acknowledged and deleted. A crash between commit and XACK re-delivers
 * entries that are then ignored, so each record lands exactly once in
 * effect. Entries left pending by a consumer that died are claimed.
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
  private readonly scheduler = new LaneScheduler();
  private readonly reader: OutboxReader;
  private readonly writer: BatchWriter;
  /**
   * Stream time (ms) of each tenant's oldest record read and not yet stored.
   * Kept by tenant, not by lane: after a failed batch another lane may take
   * the tenant, and its records stay unstored until that lane stores them.
   */
  private readonly unstored = new Map<string, number>();
  private knownTenants: string[] = [];
  private lastWaiting = 0;

  constructor(
    private readonly redis: Redis,
    private readonly pool: Pool,
    private readonly tenantIds: () => Promise<string[]>,
    consumer: string,
    private readonly log: Logger,
    metrics: Metrics,
  ) {
    declareSinkMetrics(metrics);
    // The lag gauge is the main thread's (sink-worker.ts), from the oldest pending time this thread reports: it keeps
    // growing if this thread stalls, and one gauge in both registries would be summed twice.
    this.metrics = metrics;
    this.reader = new OutboxReader(redis, consumer);
    this.writer = new BatchWriter(redis, pool, log, metrics);
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
    let nothingToTake = IDLE_POLL_MS / 2;
    while (this.running) {
      // The tenants of the last cycle stay this lane's through its wait: no other lane reads
      // their streams before the linger (or the idle poll) is over.
      let held: string[] = [];
      try {
        const done = await this.cycle(lane);
        held = done.tenants;
        nothingToTake = held.length === 0 ? Math.min(nothingToTake * 2, NOTHING_TO_TAKE_MAX_MS) : IDLE_POLL_MS / 2;
        backoff = done.stored > 0 ? LINGER_MS : held.length === 0 ? nothingToTake : IDLE_POLL_MS;
        if (done.stored >= LINGER_BELOW) {
          this.scheduler.release(held);
          continue;
        }
      } catch (err) {
        this.metrics.inc('outbox_sink_errors_total');
        this.log.warn({ err: (err as Error).message, lane: lane.index }, 'outbox drain failed; will retry');
        backoff = Math.min(backoff * 2, 5_000);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, backoff);
        lane.wake = () => { clearTimeout(t); resolve(); };
      });
      this.scheduler.release(held);
    }
  }

  /**
   * One batch of a lane: take tenants, read, store, acknowledge. The tenants stay taken (run() lets
   * them go after its wait), unless the batch failed: then at once, for any lane to retry.
   */
  private async cycle(lane: Lane): Promise<{ stored: number; tenants: string[] }> {
    // Waiting ends and extensions are everyone's, not one tenant's: lane 0 applies them.
    if (lane.index === 0 && Date.now() - this.lastWaiting > WAITING_MS) {
      this.lastWaiting = Date.now();
      // Its failure (Postgres away) must not hold up reading the streams: the batch meets the same error soon enough.
      await applyWaiting(this.pool).catch((err: Error) => this.log.warn({ err: err.message }, 'applying waiting session ends and extensions failed; will retry'));
    }
    const tenants = this.scheduler.take(await this.tenants());
    if (tenants.length === 0) return { stored: 0, tenants };
    try {
      return { stored: await this.batch(tenants), tenants };
    } catch (err) {
      // Whatever was read stays pending: read it again first.
      this.reader.recheck(tenants);
      this.scheduler.release(tenants);
      throw err;
    }
  }

  /**
   * Drains the lane's tenants: a first read (their pending entries first where
   * they may have some, entries a dead consumer left, then new ones), and then,
   * while the batches are a backlog's (LINGER_BELOW records or more), batch
   * after batch for up to HOLD_MS. While a batch
   * is in Postgres, the next is read and parsed (only new entries, of tenants
   * with none pending): one tenant's drain overlaps its reading with its
   * writing, and a batch's acknowledgement with the next one's writing. A
   * failed write leaves both batches pending, to be read again in stream
   * order (cycle()).
   */
  private async batch(tenants: string[]): Promise<number> {
    const since = Date.now();
    let next = await this.reader.read(tenants);
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
          if (stale.length) await this.reader.acknowledge(stale);
          break;
        }
        // Entries that are no record go to the dead letters with the refused ones; the rest are written.
        const unreadable = entries.filter((e) => e.error !== undefined);
        const records = unreadable.length ? entries.filter((e) => e.error === undefined) : entries;
        const writing = records.length ? this.writeIsolating(records) : Promise.resolve([]);
        // Read ahead only while draining a backlog: after a small batch the lane lingers (run()), or a
        // trickle would go on as a chain of tiny transactions, one per write's worth of arrivals.
        const more = this.running && entries.length >= LINGER_BELOW && Date.now() - since < HOLD_MS;
        // Settled into a value at once: a read that fails while the write is still in Postgres must
        // not go unhandled (it is thrown below, after the write, like any failure of the batch).
        const ahead: Promise<{ read: Read } | { err: unknown }> = (more ? this.reader.readNew(tenants) : Promise.resolve(new Read()))
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
        this.metrics.observe(STORE_LAG_METRIC, '', lagSeconds(oldestOf(entries)));
        if (refused.length) {
          await deadLetter(this.redis, refused);
          this.metrics.inc('outbox_dead_letters_total', '', refused.length);
        }
        // Stored: acknowledged while the next batch is written (a crash before the acknowledgement
        // only delivers these again, and they are stored once).
        acking = this.reader.acknowledge(stale.length ? [...entries, ...stale] : entries).then(() => null, (err: unknown) => ({ err }));
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

  /**
   * Writes a batch; when Postgres refuses it for its data (not for being
   * away), halves it until the refused records stand alone, writing the rest
   * in stream order. A refused record would otherwise fail its batch on every
   * retry and hold back every record behind it, other tenants' too, while the
   * streams grow in Redis. Returns the refused entries (usually none).
   */
  private async writeIsolating(entries: StreamRecord[]): Promise<StreamRecord[]> {
    const attempt = (): Promise<void> => this.writer.write(entries.map((e) => ({ tenant: tenantOfKey(e.key), f: e.f })));
    try {
      await attempt();
      return [];
    } catch (err) {
      if (partitionMissing(err)) {
        // Not the records' fault: make the partitions again on the retry.
        this.writer.forgetPartitions();
        throw err;
      }
      if (!refusedForItsData(err)) throw err;
      if (entries.length === 1) {
        // Once more on its own: a refusal that does not repeat was not about the record.
        try {
          await attempt();
          return [];
        } catch (again) {
          if (partitionMissing(again)) this.writer.forgetPartitions();
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
}

/** The sink's lag: how old the oldest record read and not yet stored is. */
export function lagSeconds(oldestPendingMs: number): number {
  return oldestPendingMs === 0 ? 0 : (Date.now() - oldestPendingMs) / 1000;
}

/** Stream time (ms) of the oldest of a batch's entries (their ids are `<ms>-<seq>`); 0 for none. */
function oldestOf(entries: StreamRecord[]): number {
  let oldest = 0;
  for (const e of entries) {
    const ms = Number(e.id.slice(0, e.id.indexOf('-')));
    if (oldest === 0 || ms < oldest) oldest = ms;
  }
  return oldest;
}
