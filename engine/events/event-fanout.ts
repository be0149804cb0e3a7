import { Redis } from 'ioredis';
import { groupBySlot, isCluster, type RedisClient } from '../redis/redis-client.js';
import { outsideRequest, type Logger } from '../logger.js';
import { keys, tenantOfKey } from '../redis/keys.js';
import { parseEventEntry } from './event-entry.js';
import type { DomainEvent } from './types.js';

export type EventListener = (event: DomainEvent) => void;

/** One tenant being read: its listeners and where its stream is read from. */
interface TenantRead {
  tenantId: string;
  key: string;
  listeners: Set<EventListener>;
  /** XREAD reads the entries after this id; null until the id current at the first subscription is known. */
  after: string | null;
  ready: Promise<void>;
}

/** Entries one XREAD takes per stream: a burst of a thousand sign-ins is one or two reads. */
const READ_COUNT = 1000;
/**
 * The longest one XREAD blocks. A change of the tenant set unblocks it at
 * once (CLIENT UNBLOCK); the bound only limits how long a lost unblock could
 * delay a newly added tenant, so it costs one round trip every few seconds.
 */
const BLOCK_MS = 5000;
/**
 * After a read that brought entries, the reader waits this long before the
 * next one, so that under a steady load (5,000 sign-ins a second write about
 * 10,000 events) one XREAD brings the entries of 20 ms rather than of the one
 * round trip: Redis, ioredis and this thread pay the per-call cost 50 times a
 * second, not thousands. A quiet stream's event still arrives at once: the
 * read that waits for it is already blocked in Redis.
 */
const READ_PACE_MS = 20;
/**
 * On a Redis Cluster (see the class comment): how long the reader waits
 * before it asks again when no stream had anything new. The latency an
 * event can gain there, and the cost of an idle process: one batch of
 * non-blocking XREADs per master this often.
 */
const CLUSTER_POLL_MS = 100;
const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/**
 * Hands every domain event of the tenants that have listeners in this
 * process to those listeners, whichever thread or process wrote it (a Lua
 * script, EventLog.append): ONE blocking reader per process, on its own
 * connection, `XREAD BLOCK` over the events streams of exactly those tenants.
 *
 * - A tenant is read from the id current when its first listener arrived
 *   (`ready(tenantId)` resolves once that id is known): listeners see what
 *   happens after they came, never the stream's history.
 * - The read is restarted when the tenant set changes: the new set is used by
 *   the next XREAD, and the blocked one is cut short with CLIENT UNBLOCK from
 *   the engine's main connection (the reader's own is busy blocking).
 * - Across a lost connection or a restarted Redis the reader reconnects and
 *   resumes each tenant from the last id it delivered, so nothing written
 *   meanwhile is missed and nothing is delivered twice.
 *
 * Redis Cluster: each tenant's stream sits in the slot of its hash tag, and
 * XREAD refuses keys of several slots (CROSSSLOT), on one node too. There the
 * reader sends one non-blocking XREAD per slot through the engine's cluster
 * client, all at once (in flight together on each master's connection), so a
 * read costs about one round trip however many tenants it covers. It
 * asks again READ_PACE_MS after a read that brought entries and
 * CLUSTER_POLL_MS after one that did not (a blocking XREAD would need a
 * connection per slot, so per tenant). MOVED and ASK are followed by ioredis;
 * a failed read is retried from the last ids delivered, as above. A single
 * server or a replica set keeps the one blocking reader.
 */
export class EventFanout {
  private readonly tenants = new Map<string, TenantRead>();
  private reader: Redis | null = null;
  private readerId: number | null = null;
  private running = false;
  private closed = false;
  /** Bumped on every change of the tenant set; readGen is the generation the current XREAD was built from. */
  private gen = 0;
  private readGen = -1;
  private inRead = false;
  private kicking = false;
  private wakeIdle: (() => void) | null = null;
  /** Events handed to listeners, for /metrics. */
  delivered = 0;

  /**
   * @param redisUrl  the reader opens its own connection here (a blocking read holds a connection).
   * @param redis     the engine's main connection: start ids and CLIENT UNBLOCK.
   */
  constructor(private readonly redisUrl: string, private readonly redis: RedisClient, private readonly log: Logger) {}

  /** Tenants read now (those with listeners). */
  get tenantCount(): number {
    return this.tenants.size;
  }

  /**
   * Calls `fn` with each event of the tenant from now on (see ready()).
   * Returns the function that stops it. `fn` runs on the reader's turn of
   * the event loop: it must not throw (a throw is logged) and should only
   * note the event.
   */
  subscribe(tenantId: string, fn: EventListener): () => void {
    if (this.closed) throw new Error('EventFanout is closed');
    let t = this.tenants.get(tenantId);
    if (!t) {
      const read: TenantRead = { tenantId, key: keys.events(tenantId), listeners: new Set(), after: null, ready: Promise.resolve() };
      read.ready = this.startAt(read);
      read.ready.catch(() => undefined); // handled by whoever awaits ready(); no unhandled rejection otherwise
      this.tenants.set(tenantId, read);
      t = read;
    }
    const tenant = t;
    tenant.listeners.add(fn);
    this.ensureRunning();
    return () => {
      tenant.listeners.delete(fn);
      if (tenant.listeners.size === 0 && this.tenants.get(tenantId) === tenant) {
        this.tenants.delete(tenantId);
        this.kick();
      }
    };
  }

  /**
   * Resolves once the tenant's listeners will see every event written from
   * now on; rejects when Redis could not say where its stream stands (its
   * listeners are then dropped: subscribe again later).
   */
  ready(tenantId: string): Promise<void> {
    return this.tenants.get(tenantId)?.ready ?? Promise.resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.tenants.clear();
    this.wakeIdle?.();
    this.reader?.disconnect();
  }

  /** The id of the newest entry now (0-0 for an empty or missing stream): reading starts after it. */
  private async startAt(t: TenantRead): Promise<void> {
    try {
      const newest = await this.redis.xrevrange(t.key, '+', '-', 'COUNT', 1);
      t.after = newest[0]?.[0] ?? '0-0';
    } catch (err) {
      if (this.tenants.get(t.tenantId) === t) this.tenants.delete(t.tenantId);
      throw err;
    }
    this.kick();
  }

  private ensureRunning(): void {
    if (this.running) return;
    this.running = true;
    // The first subscriber is usually an SSE request: the loop serves every tenant's streams, not that request.
    outsideRequest(() => this.startLoop());
  }

  private startLoop(): void {
    if (isCluster(this.redis)) {
      void this.pollCluster().finally(() => { this.running = false; });
      return;
    }
    this.reader = new Redis(this.redisUrl, {
      // Every command fails as soon as the connection is lost (and while it is being re-made), the
      // XREAD in flight included: the loop then rebuilds it from the ids it delivered last. (With
      // retries and no resend, ioredis would drop the XREAD in flight without settling it.)
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      connectionName: 'event-fanout',
    });
    this.reader.on('error', (err: Error) => this.log.debug({ err: err.message }, 'event reader connection error'));
    // A new connection has a new client id: fetched again before the next XREAD.
    this.reader.on('close', () => { this.readerId = null; });
    void this.run().finally(() => { this.running = false; });
  }

  /** The tenants whose stream position is known; none: waits for a subscriber (kick) and answers null. */
  private async readable(): Promise<TenantRead[] | null> {
    const reading = [...this.tenants.values()].filter((t) => t.after !== null);
    if (reading.length > 0) return reading;
    await new Promise<void>((resolve) => { this.wakeIdle = resolve; });
    this.wakeIdle = null;
    return null;
  }

  private async run(): Promise<void> {
    const reader = this.reader!;
    let retryMs = RETRY_MIN_MS;
    while (!this.closed) {
      const reading = await this.readable();
      if (!reading) continue;
      this.readGen = this.gen;
      // From here a kick() waits for this read to start and then unblocks it.
      this.inRead = true;
      const args: (string | number)[] = ['COUNT', READ_COUNT, 'BLOCK', BLOCK_MS, 'STREAMS'];
      for (const t of reading) args.push(t.key);
      for (const t of reading) args.push(t.after!);
      let reply: [string, [string, string[]][]][] | null;
      try {
        this.readerId ??= Number(await reader.client('ID'));
        reply = await (reader.xread as (...a: (string | number)[]) => Promise<[string, [string, string[]][]][] | null>)(...args);
        retryMs = RETRY_MIN_MS;
      } catch (err) {
        if (this.closed) break;
        this.log.warn({ err: (err as Error).message, retryMs }, 'event reader lost its read; resuming from the last ids seen');
        this.readerId = null;
        await sleep(retryMs);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
        continue;
      } finally {
        this.inRead = false;
      }
      if (reply) {
        this.dispatch(reply, reading);
        await sleep(READ_PACE_MS);
      }
    }
    reader.disconnect();
  }

  /** The reader on a Redis Cluster (see the class comment): per-slot XREADs all at once, asked again after a pause. */
  private async pollCluster(): Promise<void> {
    let retryMs = RETRY_MIN_MS;
    while (!this.closed) {
      const reading = await this.readable();
      if (!reading) continue;
      let replies: ([string, [string, string[]][]][] | null)[];
      try {
        replies = await Promise.all(groupBySlot(this.redis, reading, (t) => t.key).map((group) => {
          const args: (string | number)[] = ['COUNT', READ_COUNT, 'STREAMS', ...group.map((t) => t.key), ...group.map((t) => t.after!)];
          return (this.redis.xread as (...a: (string | number)[]) => Promise<[string, [string, string[]][]][] | null>)(...args);
        }));
        retryMs = RETRY_MIN_MS;
      } catch (err) {
        if (this.closed) break;
        this.log.warn({ err: (err as Error).message, retryMs }, 'event reader lost its read; resuming from the last ids seen');
        await sleep(retryMs);
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
        continue;
      }
      let got = false;
      for (const reply of replies) {
        if (!reply) continue;
        got = true;
        this.dispatch(reply, reading);
      }
      await sleep(got ? READ_PACE_MS : CLUSTER_POLL_MS);
    }
  }

  private dispatch(reply: [string, [string, string[]][]][], reading: TenantRead[]): void {
    for (const [key, entries] of reply) {
      const t = reading.find((r) => r.key === key) ?? null;
      // Dropped (or dropped and subscribed again, from a later id) while this read was out.
      if (!t || entries.length === 0 || this.tenants.get(tenantOfKey(key)) !== t) continue;
      t.after = entries[entries.length - 1]![0];
      for (const [id, fields] of entries) {
        const event = parseEventEntry(t.tenantId, id, fields);
        if (!event) continue;
        this.delivered++;
        for (const fn of t.listeners) {
          try {
            fn(event);
          } catch (err) {
            this.log.warn({ err: (err as Error).message, type: event.type }, 'event listener threw');
          }
        }
      }
    }
  }

  /**
   * The tenant set changed: wake an idle loop, or cut the blocked XREAD
   * short. CLIENT UNBLOCK answers 0 while that XREAD is still on its way to
   * the server (or already answered), so it is sent again until the loop
   * reads with the current set.
   */
  private kick(): void {
    this.gen++;
    this.wakeIdle?.();
    if (this.kicking) return;
    this.kicking = true;
    void (async () => {
      try {
        while (!this.closed && this.inRead && this.readGen !== this.gen) {
          if (this.readerId !== null) await this.redis.client('UNBLOCK', this.readerId);
          await sleep(10);
        }
      } catch (err) {
        this.log.debug({ err: (err as Error).message }, 'could not unblock the event reader; its block times out instead');
      } finally {
        this.kicking = false;
      }
    })();
  }
}
