import type { ChainableCommander, Redis } from 'ioredis';

/** A reply read after ReadBatch.run(): call it only once the batch ran. */
export type Slot<T> = () => T;

const num = (v: unknown): number => {
  const n = Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
};

/**
 * The reads of one dashboard request, queued by each part of the answer and
 * sent as one pipeline: one round trip to Redis whatever the answer is made
 * of, and a number of keys fixed by the request (windows, hotspots, NAS),
 * never by the number of live sessions. Every key read is the caller's
 * tenant's, so all of them share one hash tag (one cluster slot).
 */
export class ReadBatch {
  private readonly pipe: ChainableCommander;
  private replies: [Error | null, unknown][] | null = null;
  private queued = 0;

  constructor(redis: Redis) {
    this.pipe = redis.pipeline();
  }

  /** Sends the queued reads; a reply that failed throws when its slot is read. */
  async run(): Promise<void> {
    this.replies = this.queued === 0 ? [] : ((await this.pipe.exec()) ?? []);
  }

  /** HMGET, each field as a number (0 when absent). With no fields nothing is sent. */
  numbers(key: string, fields: readonly string[]): Slot<number[]> {
    if (fields.length === 0) return () => [];
    return this.slot(() => this.pipe.hmget(key, ...fields), (v) => (v as unknown[]).map(num));
  }

  /** GET of a counter on each key (0 when absent), as one MGET. */
  counters(keys: readonly string[]): Slot<number[]> {
    if (keys.length === 0) return () => [];
    return this.slot(() => this.pipe.mget(...keys), (v) => (v as unknown[]).map(num));
  }

  /** ZCOUNT key (min, +inf]: members scored above `min`. */
  countAbove(key: string, min: number): Slot<number> {
    return this.slot(() => this.pipe.zcount(key, `(${min}`, '+inf'), num);
  }

  hlen(key: string): Slot<number> {
    return this.slot(() => this.pipe.hlen(key), num);
  }

  /** HGETALL, values as numbers. */
  hash(key: string): Slot<Map<string, number>> {
    return this.slot(() => this.pipe.hgetall(key), (v) => {
      const out = new Map<string, number>();
      for (const [f, x] of Object.entries(v as Record<string, string>)) out.set(f, num(x));
      return out;
    });
  }

  private slot<T>(queue: () => void, parse: (v: unknown) => T): Slot<T> {
    const i = this.queued++;
    queue();
    return () => {
      const r = this.replies?.[i];
      if (!r) throw new Error('ReadBatch: a slot was read before run()');
      if (r[0]) throw r[0];
      return parse(r[1]);
    };
  }
}
