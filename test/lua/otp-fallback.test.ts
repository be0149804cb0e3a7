import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { defineScripts } from '../../engine/redis/scripts.js';
import { keys, luaTenant, luaTest } from '../support/lua.js';

const T0 = 1_800_000_000_000;
const USER = '+905321111111';

/**
 * The messaging-app delivery watch: claim-otp-fallbacks-1.lua, settle-otp-fallback-3.lua and
 * mark-otp-delivered-2.lua.
 */
/** The fixture's connection and a second one, as two engine processes polling one Redis. */
const it = luaTest.extend('other', { scope: 'file' }, async ({ redis }, { onCleanup }) => {
  const other = redis.duplicate();
  defineScripts(other);
  onCleanup(() => { other.disconnect(); });
  return other;
});

describe('OTP fallback scripts', () => {
  let a: Redis;
  let b: Redis;
  it.beforeAll(({ redis, other }) => { a = redis; b = other; });

  const pending = async (t: string, rid: string, due: number): Promise<void> => {
    await a.hset(keys.otpCode(t, 'hs_lua', USER), 'h', 'old', 'tries', 2, 'exp', T0 + 300_000, 'rid', rid, 'ch', 'msgapp');
    await a.hset(keys.otpRequest(t, rid), 'status', 'sent', 'ch', 'msgapp', 'hs', 'hs_lua', 'user', USER, 'fb', 1);
    await a.zadd(keys.otpFallbacks(t), due, rid);
  };
  const settle = (r: Redis, t: string, rid: string, outcome: 'resent' | 'not_delivered', expect: 'sent' | 'resent_by_sms' = 'sent') =>
    r.settleOtpFallbackV1(keys.otpRequest(t, rid), keys.otpFallbacks(t), keys.otpCode(t, 'hs_lua', USER), rid, outcome, 'new', T0 + 40_000, 300_000, expect);

  it('gives a due watch to exactly one of two connections, and again after the lease', async ({ tenant: t }) => {
    await pending(t, 'r1', T0 + 30_000);
    expect(await a.claimOtpFallbacksV1(keys.otpFallbacks(t), T0 + 29_999, 30_000, 10)).toEqual([]);
    const [x, y] = await Promise.all([
      a.claimOtpFallbacksV1(keys.otpFallbacks(t), T0 + 30_000, 30_000, 10),
      b.claimOtpFallbacksV1(keys.otpFallbacks(t), T0 + 30_000, 30_000, 10),
    ]);
    expect([...x, ...y]).toEqual(['r1']);
    expect(await b.claimOtpFallbacksV1(keys.otpFallbacks(t), T0 + 59_999, 30_000, 10)).toEqual([]);
    // Its claimer died without settling: the next poller gets it once the lease is over.
    expect(await b.claimOtpFallbacksV1(keys.otpFallbacks(t), T0 + 60_000, 30_000, 10)).toEqual(['r1']);
  });

  it('resent: a fresh SMS code with 0 tries and full validity; the watch is gone', async ({ tenant: t }) => {
    await pending(t, 'r1', T0 + 30_000);
    expect(await settle(a, t, 'r1', 'resent')).toEqual(['ok']);
    expect(await a.hgetall(keys.otpCode(t, 'hs_lua', USER))).toEqual({ h: 'new', tries: '0', exp: String(T0 + 340_000), rid: 'r1', ch: 'sms' });
    expect(await a.hmget(keys.otpRequest(t, 'r1'), 'status', 'ch')).toEqual(['resent_by_sms', 'sms']);
    expect(await a.zcard(keys.otpFallbacks(t))).toBe(0);
    // A second settle (a process that claimed it after a lease) changes nothing.
    expect(await settle(b, t, 'r1', 'resent')).toEqual(['gone', 'resent_by_sms']);
    // The SMS could not be sent either: the attempt ends not delivered and the code dies.
    expect(await settle(a, t, 'r1', 'not_delivered', 'resent_by_sms')).toEqual(['ok']);
    expect(await a.hget(keys.otpRequest(t, 'r1'), 'status')).toBe('not_delivered');
    expect(await a.exists(keys.otpCode(t, 'hs_lua', USER))).toBe(0);
  });

  it('not_delivered (fallback off) kills the code', async ({ tenant: t }) => {
    await pending(t, 'r1', T0 + 30_000);
    expect(await settle(a, t, 'r1', 'not_delivered')).toEqual(['ok']);
    expect(await a.hget(keys.otpRequest(t, 'r1'), 'status')).toBe('not_delivered');
    expect(await a.exists(keys.otpCode(t, 'hs_lua', USER))).toBe(0);
  });

  it('a delivery callback cancels the watch; a late fallback then changes nothing', async ({ tenant: t }) => {
    await pending(t, 'r1', T0 + 30_000);
    expect(await a.markOtpDeliveredV1(keys.otpRequest(t, 'r1'), keys.otpFallbacks(t), 'r1', 'sms')).toBe('ignored');
    expect(await a.markOtpDeliveredV1(keys.otpRequest(t, 'r1'), keys.otpFallbacks(t), 'r1', 'msgapp')).toBe('delivered');
    expect(await a.zcard(keys.otpFallbacks(t))).toBe(0);
    expect(await settle(b, t, 'r1', 'resent')).toEqual(['gone', 'delivered']);
    expect(await a.hget(keys.otpCode(t, 'hs_lua', USER), 'h')).toBe('old');
    expect(await a.markOtpDeliveredV1(keys.otpRequest(t, 'r1'), keys.otpFallbacks(t), 'r1', 'msgapp')).toBe('ignored');
    expect(await a.markOtpDeliveredV1(keys.otpRequest(t, 'nope'), keys.otpFallbacks(t), 'nope', 'msgapp')).toBe('unknown');
  });

  it('a code already used, or replaced by a newer request, is not re-sent', async ({ tenant: t }) => {
    await pending(t, 'r1', T0 + 30_000);
    await a.hset(keys.otpCode(t, 'hs_lua', USER), 'rid', 'r2');
    expect(await settle(a, t, 'r1', 'resent')).toEqual(['gone', 'sent']);
    expect(await a.hget(keys.otpCode(t, 'hs_lua', USER), 'h')).toBe('old');
    const t2 = await luaTenant(a, false);
    await pending(t2, 'r1', T0 + 30_000);
    await a.del(keys.otpCode(t2, 'hs_lua', USER));
    expect(await settle(a, t2, 'r1', 'resent')).toEqual(['gone', 'sent']);
    expect(await a.exists(keys.otpCode(t2, 'hs_lua', USER))).toBe(0);
  });
});
