import type { RedisClient as Redis } from './redis-client.js';
import { defineScripts } from './scripts.js';

/** A reply read after ReadBatch.run(): call it only once the batch ran. */
export type Slot<T> = () => T;

const num = (v: unknown): number => {
  const n = Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
};

/**
 * Makes sure a connection carries the read script. The engine's connections
 * have every script (createRedis); a bare client handed to the read models
 * (a test's, a tool's) gets them here, once, at construction.
 */
export function ensureReadScript(redis: Redis): void {
  if (typeof (redis as Partial<Pick<Redis, 'readBatchV1'>>).readBatchV1 !== 'function') defineScripts(redis);
}

/**
 * The reads of one dashboard request, queued by each part of the answer and
 * sent as one command (lua/read-batch-n.lua): one round trip and one reply
 * whatever the answer is made of. A profile of the overview at 200 req/s
 * showed the client's side of ~65 pipelined commands (a Command object, a
 * promise and a parsed reply each, and the pipeline's own bookkeeping) as
 * the largest part of a request's CPU; one script call costs one of each.
 *
 * The number of keys is fixed by the request (windows, hotspots, NAS), never
 * by the number of live sessions. Every key read is the caller's tenant's, so
 * all of them share one hash tag (one cluster slot). The call is sent as a
 * pipeline of one, as the reads always were: nothing of an answer goes to
 * Redis on its own (dashboard-read-models.test.ts counts it). The script is
 * read-only and atomic: the reads of one answer see one moment of Redis.
 */
export class ReadBatch {
  private readonly keys: string[] = [];
  private readonly reads: (string | number)[] = [];
  private replies: unknown[] | null = null;
  private queued = 0;

  constructor(private readonly redis: Redis) {}

  /** Sends the queued reads; a failed read fails the whole batch here. */
  async run(): Promise<void> {
    if (this.queued === 0) {
      this.replies = [];
      return;
    }
    const [reply] = (await this.redis.pipeline().readBatchV1(this.keys.length, ...this.keys, ...this.reads).exec()) ?? [];
    if (!reply) throw new Error('ReadBatch: no reply from Redis');
    if (reply[0]) throw reply[0];
    this.replies = reply[1] as unknown[];
  }

  /** HMGET, each field as a number (0 when absent). With no fields nothing is sent. */
  numbers(key: string, fields: readonly string[]): Slot<number[]> {
    const each = this.numbersEach([key], fields);
    return () => each()[0] ?? [];
  }

  /** The same fields of each hash (one HMGET each, the fields sent once), as numbers (0 when absent). */
  numbersEach(keys: readonly string[], fields: readonly string[]): Slot<number[][]> {
    if (fields.length === 0 || keys.length === 0) return () => keys.map(() => []);
    return this.slot('hmget', keys, fields, (v) => (v as unknown[][]).map((row) => row.map(num)));
  }

  /** GET of a counter on each key (0 when absent), as one MGET. */
  counters(keys: readonly string[]): Slot<number[]> {
    if (keys.length === 0) return () => [];
    return this.slot('mget', keys, [], (v) => (v as unknown[]).map(num));
  }

  /** ZCOUNT of each key (min, +inf]: members scored above `min`. */
  countsAbove(keys: readonly string[], min: number): Slot<number[]> {
    if (keys.length === 0) return () => [];
    return this.slot('zcount', keys, [`(${min}`, '+inf'], (v) => (v as unknown[]).map(num));
  }

  hlen(key: string): Slot<number> {
    return this.slot('hlen', [key], [], num);
  }

  /** HGETALL, values as numbers. */
  hash(key: string): Slot<Map<string, number>> {
    return this.slot('hgetall', [key], [], (v) => {
      const flat = v as string[];
      const out = new Map<string, number>();
      for (let i = 0; i + 1 < flat.length; i += 2) out.set(flat[i]!, num(flat[i + 1]));
      return out;
    });
  }

  /**
   * The outbox stream's unwritten entries for the sink's `group` (the script's
   * `lag` read): its first id, whether the group exists, the smallest pending
   * id and the first id not yet delivered (null where there is none).
   */
  streamBacklog(key: string, group: string): Slot<StreamBacklog> {
    return this.slot('lag', [key], [group], (v) => {
      const [first, hasGroup, pending, undelivered] = v as [string | null, number, string | null, string | null];
      return { first: first ?? null, hasGroup: hasGroup === 1, pending: pending ?? null, undelivered: undelivered ?? null };
    });
  }

  private slot<T>(op: string, keys: readonly string[], args: readonly (string | number)[], parse: (v: unknown) => T): Slot<T> {
    const i = this.queued++;
    for (const k of keys) this.keys.push(k);
    this.reads.push(op, keys.length, args.length);
    for (const a of args) this.reads.push(a);
    return () => {
      if (!this.replies) throw new Error('ReadBatch: a slot was read before run()');
      return parse(this.replies[i]);
    };
  }
}

/** What ReadBatch.streamBacklog reads; ids are stream ids ("<ms>-<seq>"). */
export interface StreamBacklog {
  first: string | null;
  hasGroup: boolean;
  pending: string | null;
  undelivered: string | null;
}
