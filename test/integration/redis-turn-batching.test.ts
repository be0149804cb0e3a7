import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect, inject, test, vi } from 'vitest';
import { openRedis } from '../../engine/redis/redis-client.js';

/**
 * The engine's one-server Redis connection (redis-client.ts, TurnBatchedRedis):
 * the commands of one turn of the event loop reach the socket in one write,
 * answered one by one and in order, and ioredis's auto-pipelining (a Pipeline
 * object per turn, copying every defined script onto itself) is never used,
 * even when a caller asks for it.
 */
describe('a Redis connection batches a turn of commands into one write', () => {
  test('fifty commands of one turn go out in one writev, each answered in order, with no Pipeline built', async () => {
    const redis = openRedis(inject('redisUrl'), { enableAutoPipelining: true }) as Redis;
    try {
      await redis.ping();
      const pipelines = vi.spyOn(redis, 'pipeline');
      const socket = redis.stream as unknown as {
        _write: (c: unknown, e: unknown, cb: unknown) => void;
        _writev: (c: unknown[], cb: unknown) => void;
      };
      const writes = { write: 0, writev: 0, chunks: 0 };
      const write = socket._write.bind(socket);
      const writev = socket._writev.bind(socket);
      socket._write = (c, e, cb) => { writes.write++; write(c, e, cb); };
      socket._writev = (c, cb) => { writes.writev++; writes.chunks += c.length; writev(c, cb); };

      const key = `turn-batch:${randomUUID()}`;
      const lengths = await Promise.all(Array.from({ length: 50 }, (_, i) => redis.rpush(key, String(i))));
      expect(lengths).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(writes).toEqual({ write: 0, writev: 1, chunks: 50 });
      expect(await redis.lrange(key, 0, -1)).toEqual(Array.from({ length: 50 }, (_, i) => String(i)));

      // A command alone in its turn is not held back: one write of its own.
      expect(await redis.del(key)).toBe(1);
      expect(writes.write).toBe(2);
      expect(pipelines).not.toHaveBeenCalled();
    } finally {
      redis.disconnect();
    }
  });
});
