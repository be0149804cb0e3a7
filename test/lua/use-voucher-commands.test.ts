import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineScripts } from '../../engine/redis/scripts.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';
import { startPrivateRedis, type PrivateRedis } from '../support/loopback-nas.js';
import { keys, luaTenant, mac } from '../support/lua.js';

/**
 * What one portal verify's use script costs Redis, in commands (issue 22 item 3:
 * bench/results/portal-verify.md names each). Counted by the server itself
 * (INFO commandstats, which counts the commands a script calls) on a
 * redis-server of this file's own, so no other file's commands are among them
 * and a feature that quietly adds commands to the hot path shows here.
 */
let own: PrivateRedis;
let redis: Redis;

beforeAll(async () => {
  own = await startPrivateRedis();
  redis = own.redis;
  defineScripts(redis);
});

afterAll(async () => {
  await own?.stop();
});

/** What the client sends itself around a script call; everything else in the stats was called by the script. */
const CLIENT_SIDE = /^(evalsha|eval|script|config)(\||$)/;

/** The commands `run` made scripts run, by name (lower case), counted. */
async function scriptCommands(run: () => Promise<unknown>): Promise<Map<string, number>> {
  await redis.config('RESETSTAT');
  await run();
  const out = new Map<string, number>();
  for (const line of (await redis.info('commandstats')).split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (!m || CLIENT_SIDE.test(m[1]!)) continue;
    out.set(m[1]!, Number(m[2]));
  }
  return out;
}

describe('use-voucher-18: the commands of one verify', () => {
  const T0 = 1_790_000_000_000 - (1_790_000_000_000 % 3_600_000) + 60_000 * 7 + 1_000;

  it('a new device\'s first use counts its start with one HINCRBY (minute bucket), not four: four HINCRBY in all (use, start, device and SSID live)', async () => {
    const t = await luaTenant(redis);
    await putVoucher(redis, t, 'CMD', { id: 'vch_cmd', max: 10 });
    // A first use in this minute and a second one: the second no longer creates the bucket (no EXPIRE).
    await useVoucher(redis, t, 'CMD', { now: T0, mac: mac(1), ssid: 'Guest' });
    const c = await scriptCommands(() => useVoucher(redis, t, 'CMD', { now: T0 + 1_000, mac: mac(2), ssid: 'Guest' }));
    expect(c.get('hincrby'), JSON.stringify([...c])).toBe(4);
    expect(c.get('expire') ?? 0).toBe(0);
    const total = [...c.values()].reduce((a, b) => a + b, 0);
    // INFO, GET, EXISTS (the restart guard and the block list), HMGET, HGET, HINCRBY, HSET (the voucher), HMGET, DEL,
    // HSET, ZADD, SET, XADD (the session), HSETNX, XADD (device.new), XADD (session.start), HINCRBY x3 (counters),
    // XADD (voucher.redeemed): 20 where it was 23.
    expect(total, JSON.stringify([...c])).toBe(20);
    expect(await redis.hgetall(keys.activityMinute(t, Math.floor(T0 / 60_000)))).toEqual({ start: '2' });
  });

  it('a use that replaces the device\'s live session counts the end with three HINCRBY (end per minute and hour, its duration per hour), not eight: nine in all', async () => {
    const t = await luaTenant(redis);
    await putVoucher(redis, t, 'ONE', { id: 'vch_one', max: 10 });
    await putVoucher(redis, t, 'TWO', { id: 'vch_two', max: 10 });
    await useVoucher(redis, t, 'ONE', { now: T0, mac: mac(3), ssid: 'Guest' });
    const c = await scriptCommands(async () => {
      const r = await useVoucher(redis, t, 'TWO', { now: T0 + 30_000, mac: mac(3), ssid: 'Guest' });
      expect(r[6], 'the first session replaced').not.toBe('');
    });
    // The use 1; the end 3 and its live counts (device, SSID) 2; the start 1 and its live counts 2.
    expect(c.get('hincrby'), JSON.stringify([...c])).toBe(9);
    const minute = Math.floor(T0 / 60_000), hour = Math.floor(T0 / 3_600_000);
    expect(await redis.hgetall(keys.activityMinute(t, minute))).toEqual({ start: '2', end: '1' });
    expect(await redis.hgetall(keys.activityHour(t, hour))).toEqual({ end: '1', dur: '30' });
  });
});
