import { describe, expect } from 'vitest';
import { OUTBOX_GROUP } from '../../engine/redis/keys.js';
import { keys, luaTest as it } from '../support/lua.js';

/**
 * read-batch-n.lua: a dashboard request's reads in one call, each reply as
 * Redis gives it, in the order asked. The lag read's cases (no stream, no
 * group, pending, undelivered) are also covered through AuditLag in
 * test/integration/dashboard-read-models.test.ts.
 */
describe('read-batch-n.lua', () => {
  it('runs every read in order and returns its reply untouched', async ({ redis, tenant: t }) => {
    await redis.hset(keys.activityHour(t, 1), 'acc', '7', 'bytes', '12345678901234567', 'half', '0.5');
    await redis.set(keys.decisionStep(t, 1), 3);
    await redis.set(keys.decisionStep(t, 3), 4);
    await redis.zadd(keys.live(t, 'hs_a'), 10, 'a', 20, 'b', 30, 'c');
    await redis.hset(keys.liveByAp(t), 'hs_a|ap-1', 2, 'hs_a|ap-2', 0);
    await redis.zadd(keys.live(t, 'hs_b'), 5, 'd', 50, 'e');
    const k = [keys.activityHour(t, 1), keys.activityHour(t, 2), keys.decisionStep(t, 1), keys.decisionStep(t, 2), keys.decisionStep(t, 3),
      keys.live(t, 'hs_a'), keys.live(t, 'hs_b'), keys.live(t, 'hs_c'), keys.liveByAp(t), keys.liveByAp(t), keys.activityHour(t, 1)];
    const reply = await redis.readBatchV1(k.length, ...k,
      'hmget', 2, 3, 'acc', 'missing', 'bytes',
      'mget', 3, 0,
      'zcount', 3, 2, '(10', '+inf',
      'hlen', 1, 0,
      'hgetall', 1, 0,
      'hmget', 1, 1, 'half');
    // Values are not converted in Lua: a counter beyond 2^53 and a float come back as stored.
    expect(reply).toEqual([
      [['7', null, '12345678901234567'], [null, null, null]],
      ['3', null, '4'],
      [2, 1, 0],
      2,
      ['hs_a|ap-1', '2', 'hs_a|ap-2', '0'],
      [['0.5']],
    ]);
  });

  it('an unknown read fails the call, naming it', async ({ redis, tenant: t }) => {
    await expect(redis.readBatchV1(1, keys.liveByAp(t), 'del', 1, 0)).rejects.toThrow(/read-batch: unknown op del/);
  });

  it('lag: nothing for an absent stream; the first id alone without the group; pending and undelivered with it', async ({ redis, tenant: t }) => {
    const key = keys.outbox(t);
    const lag = async (): Promise<unknown> => ((await redis.readBatchV1(1, key, 'lag', 1, 1, OUTBOX_GROUP)) as unknown[])[0];
    expect(await lag()).toEqual([null, 0, null, null]);
    await redis.xadd(key, '1000-0', 'type', 'audit');
    await redis.xadd(key, '2000-0', 'type', 'audit');
    expect(await lag()).toEqual(['1000-0', 0, null, null]);
    await redis.xgroup('CREATE', key, OUTBOX_GROUP, '0');
    expect(await lag()).toEqual(['1000-0', 1, null, '1000-0']);
    await redis.xreadgroup('GROUP', OUTBOX_GROUP, 'c1', 'COUNT', 1, 'STREAMS', key, '>');
    expect(await lag()).toEqual(['1000-0', 1, '1000-0', '2000-0']);
    await redis.xack(key, OUTBOX_GROUP, '1000-0');
    await redis.xreadgroup('GROUP', OUTBOX_GROUP, 'c1', 'COUNT', 1, 'STREAMS', key, '>');
    expect(await lag()).toEqual(['1000-0', 1, '2000-0', null]);
  });
});
