import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { defineScripts } from '../../engine/redis/scripts.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';
import { until } from '../support/poll.js';
import { keys, luaTenant, mac } from '../support/lua.js';

/**
 * What one portal verify's use script costs Redis, in commands (issue 22 item 3:
 * bench/results/portal-verify.md names each). Counted with MONITOR on Redis
 * DB 21 (this file's own: the lines of other tests' scripts name other DBs),
 * so a feature that quietly adds commands to the hot path shows here.
 */
const DB = 21;
let redis: Redis;
let monitor: Awaited<ReturnType<Redis['monitor']>>;
const seen: { db: number; source: string; args: string[] }[] = [];

function dbUrl(db: number): string {
  const u = new URL(inject('redisUrl'));
  u.pathname = `/${db}`;
  return u.toString();
}

beforeAll(async () => {
  redis = new Redis(dbUrl(DB));
  defineScripts(redis);
  monitor = await new Redis(dbUrl(DB)).monitor();
  monitor.on('monitor', (_time: string, args: string[], source: string, database: string) => {
    seen.push({ db: Number(database), source, args });
  });
});

afterAll(async () => {
  monitor.disconnect();
  await redis.flushdb();
  redis.disconnect();
});

/** The commands `run` made scripts run on DB 21, by name (lower case), counted. */
async function scriptCommands(run: () => Promise<unknown>): Promise<Map<string, number>> {
  // MONITOR lines come late, on another connection: an ECHO before and one after the script mark where its lines are.
  const marked = async (mark: string): Promise<number> => {
    await redis.echo(mark);
    let at = -1;
    await until(() => (at = seen.findIndex((l) => l.args[0]?.toLowerCase() === 'echo' && l.args[1] === mark)) >= 0, { what: `the MONITOR line of ${mark}` });
    return at;
  };
  const tag = Math.random().toString(36).slice(2);
  const from = await marked(`begin-${tag}`);
  await run();
  const to = await marked(`end-${tag}`);
  const out = new Map<string, number>();
  for (const l of seen.slice(from + 1, to)) {
    if (l.db !== DB || l.source !== 'lua') continue;
    const name = l.args[0]!.toLowerCase();
    out.set(name, (out.get(name) ?? 0) + 1);
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
