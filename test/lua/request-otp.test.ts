import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { keys, luaTenant, luaTest as it, mac } from '../support/lua.js';

const HS = 'hs_lua';
const MIN = 60_000;
const HOUR = 3_600_000;
const T0 = 1_800_000_000_000;

interface Limits { cooldown?: number; perUser?: number; perIp?: number; perMac?: number; perPrefix?: number }

/** request-otp-7.lua: every abuse limit counted atomically with storing the code's hash. */
describe('request-otp-7.lua', () => {
  let redis: Redis;
  it.beforeAll(({ redis: r }) => { redis = r; });

  const ask = (t: string, now: number, o: { user?: string; ip?: string; mac?: string; prefix?: string; rid?: string; hash?: string; due?: number; fb?: number; ch?: string } = {}, l: Limits = {}) => {
    const user = o.user ?? '+905321111111';
    return redis.requestOtpV1(
      keys.otpCode(t, HS, user), keys.otpRequest(t, o.rid ?? 'r1'), keys.otpLimit(t, 'user', user), keys.otpLimit(t, 'ip', o.ip ?? '10.0.0.1'),
      keys.otpLimit(t, 'mac', o.mac ?? mac(1)), keys.otpLimit(t, 'prefix', o.prefix ?? '+90532'), keys.otpFallbacks(t),
      now, o.hash ?? 'h1', o.rid ?? 'r1', o.ch ?? 'sms', HS, user, 300_000, HOUR,
      l.cooldown ?? MIN, l.perUser ?? 10, 86_400_000, l.perIp ?? 20, l.perMac ?? 10, l.perPrefix ?? 300, HOUR, o.due ?? 0, o.fb ?? 0, 'tr');
  };

  it('stores the hash with 0 tries and 300 s validity, and the request state as sent', async ({ tenant: t }) => {
    expect(await ask(t, T0, { rid: 'r1', hash: 'abc' })).toEqual(['ok']);
    expect(await redis.hgetall(keys.otpCode(t, HS, '+905321111111'))).toEqual({ h: 'abc', tries: '0', exp: String(T0 + 300_000), rid: 'r1', ch: 'sms' });
    expect(await redis.hgetall(keys.otpRequest(t, 'r1'))).toMatchObject({ status: 'sent', ch: 'sms', hs: HS, user: '+905321111111', fb: '0' });
    expect(await redis.zcard(keys.otpFallbacks(t))).toBe(0);
  });

  it('refuses a second send to one phone within the cool-down, with the time left, and allows it after', async ({ tenant: t }) => {
    expect(await ask(t, T0, { rid: 'r1' })).toEqual(['ok']);
    expect(await ask(t, T0 + 20_000, { rid: 'r2' })).toEqual(['limited', 'cooldown', 40_000]);
    expect(await redis.exists(keys.otpRequest(t, 'r2'))).toBe(0);
    expect(await ask(t, T0 + MIN, { rid: 'r3', hash: 'new' })).toEqual(['ok']);
    // The new code replaced the old one, tries and all.
    expect(await redis.hget(keys.otpCode(t, HS, '+905321111111'), 'h')).toBe('new');
  });

  it('caps sends per phone per day window', async ({ tenant: t }) => {
    for (let i = 0; i < 3; i++) expect(await ask(t, T0 + i * MIN, { rid: `r${i}` }, { perUser: 3 })).toEqual(['ok']);
    expect(await ask(t, T0 + 3 * MIN, { rid: 'r3' }, { perUser: 3 })).toEqual(['limited', 'identity', 86_400_000 - 3 * MIN]);
    expect(await ask(t, T0 + 86_400_000, { rid: 'r4' }, { perUser: 3 })).toEqual(['ok']);
  });

  it('limits sends per client IP, per MAC and per prefix across different phones', async ({ tenant: t }) => {
    const phones = ['+905320000001', '+905320000002', '+905320000003'];
    for (const [kind, lim, other] of [['ip', { perIp: 2 }, { ip: '10.0.0.9' }], ['mac', { perMac: 2 }, { mac: mac(9) }], ['prefix', { perPrefix: 2 }, { prefix: '+90533' }]] as const) {
      const tt = await luaTenant(redis, false);
      expect(await ask(tt, T0, { user: phones[0], rid: 'a' }, lim)).toEqual(['ok']);
      expect(await ask(tt, T0 + 1, { user: phones[1], rid: 'b' }, lim)).toEqual(['ok']);
      const third = await ask(tt, T0 + 2, { user: phones[2], rid: 'c' }, lim);
      expect(third).toEqual(['limited', kind, HOUR - 2]);
      // A refusal counts nothing: the third phone's cool-down did not start.
      expect(await redis.exists(keys.otpLimit(tt, 'user', phones[2]!))).toBe(0);
      // Another IP / MAC / prefix is not affected.
      expect(await ask(tt, T0 + 3, { user: phones[2], rid: 'd', ...other }, lim)).toEqual(['ok']);
    }
    expect(t).toBeTruthy();
  });

  it('a limit of 0 is off', async ({ tenant: t }) => {
    for (let i = 0; i < 5; i++) expect(await ask(t, T0 + i, { user: `+90532000000${i}`, rid: `r${i}` }, { perIp: 0, perMac: 0, perPrefix: 0, cooldown: 0 })).toEqual(['ok']);
  });

  it('schedules a messaging-app delivery watch with its due time', async ({ tenant: t }) => {
    expect(await ask(t, T0, { rid: 'r1', ch: 'msgapp', due: T0 + 30_000, fb: 1 })).toEqual(['ok']);
    expect(await redis.zscore(keys.otpFallbacks(t), 'r1')).toBe(String(T0 + 30_000));
    expect(await redis.hget(keys.otpRequest(t, 'r1'), 'fb')).toBe('1');
  });
});
