import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { describe, expect, inject, test, vi } from 'vitest';
import { openRedis } from '../../engine/redis/redis-client.js';
import { startRedisCluster } from '../support/redis-cluster.js';

/** Counts what reaches a connection's socket: write calls, writev calls and the chunks those carried. */
function countWrites(redis: Redis): { write: number; writev: number; chunks: number } {
  const socket = redis.stream as unknown as {
    _write: (c: unknown, e: unknown, cb: unknown) => void;
    _writev: (c: unknown[], cb: unknown) => void;
  };
  const writes = { write: 0, writev: 0, chunks: 0 };
  const write = socket._write.bind(socket);
  const writev = socket._writev.bind(socket);
  socket._write = (c, e, cb) => { writes.write++; write(c, e, cb); };
  socket._writev = (c, cb) => { writes.writev++; writes.chunks += c.length; writev(c, cb); };
  return writes;
}

/**
 * The engine's Redis connections (redis-client.ts, batchTurns): the commands
 * of one turn of the event loop reach a connection's socket in one write,
 * answered one by one and in order, and ioredis's auto-pipelining (a Pipeline
 * object per turn, copying every defined script onto itself) is never used,
 * even when a caller asks for it. On a cluster, each node's connection alike.
 */
describe('a Redis connection batches a turn of commands into one write', () => {
  test('fifty commands of one turn go out in one writev, each answered in order, with no Pipeline built', async () => {
    const redis = openRedis(inject('redisUrl'), { enableAutoPipelining: true }) as Redis;
    try {
      await redis.ping();
      const pipelines = vi.spyOn(redis, 'pipeline');
      const writes = countWrites(redis);

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

  test('on a cluster, a turn of commands for one slot reaches its master in one writev, each answered', async () => {
    const cluster = await startRedisCluster();
    const client = openRedis(cluster.url) as Cluster;
    try {
      const key = `{turn-batch-${randomUUID()}}:list`;
      await client.rpush(key, 'first');
      const port = await cluster.masterOf(Number((await client.cluster('KEYSLOT', key)) as unknown as number));
      const node = client.nodes('master').find((n) => n.options.port === port)!;
      const writes = countWrites(node);
      const lengths = await Promise.all(Array.from({ length: 20 }, (_, i) => client.rpush(key, String(i))));
      expect(lengths).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
      expect(writes).toEqual({ write: 0, writev: 1, chunks: 20 });
    } finally {
      client.disconnect();
      await cluster.stop();
    }
  });
});
