import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { keys, luaTest as it } from '../support/lua.js';

const T0 = 1_800_000_000_000;
const GOOD = 'a'.repeat(64);
const BAD = 'b'.repeat(64);

/** verify-otp-1.lua: a code is used once, dies after 5 wrong tries, and is dead past its validity. */
describe('verify-otp-1.lua', () => {
  let redis: Redis;
  it.beforeAll(({ redis: r }) => { redis = r; });

  const code = async (t: string, ch = 'sms'): Promise<string> => {
    const k = keys.otpCode(t, 'hs_lua', '+905321111111');
    await redis.hset(k, 'h', GOOD, 'tries', 0, 'exp', T0 + 300_000, 'rid', 'r1', 'ch', ch);
    return k;
  };

  it('the right code is consumed exactly once', async ({ tenant: t }) => {
    const k = await code(t, 'msgapp');
    expect(await redis.verifyOtpV1(k, T0, GOOD, 5)).toEqual(['ok', 'msgapp', 'r1']);
    expect(await redis.exists(k)).toBe(0);
    expect(await redis.verifyOtpV1(k, T0, GOOD, 5)).toEqual(['expired']);
  });

  it('counts wrong tries down; the fifth kills the code, even for the right code after', async ({ tenant: t }) => {
    const k = await code(t);
    for (let left = 4; left >= 1; left--) expect(await redis.verifyOtpV1(k, T0, BAD, 5)).toEqual(['invalid', left]);
    expect(await redis.verifyOtpV1(k, T0, BAD, 5)).toEqual(['locked']);
    expect(await redis.verifyOtpV1(k, T0, GOOD, 5)).toEqual(['locked']);
    // Dead until it expires: then there is no live code at all.
    expect(await redis.verifyOtpV1(k, T0 + 300_000, GOOD, 5)).toEqual(['expired']);
  });

  it('a code is dead at 300 s and alive just before', async ({ tenant: t }) => {
    const k = await code(t);
    expect(await redis.verifyOtpV1(k, T0 + 300_000, GOOD, 5)).toEqual(['expired']);
    expect(await redis.exists(k)).toBe(0);
    const k2 = await code(t);
    expect(await redis.verifyOtpV1(k2, T0 + 299_999, GOOD, 5)).toEqual(['ok', 'sms', 'r1']);
  });

  it('no code ever sent is expired; a hash of another length never matches', async ({ tenant: t }) => {
    expect(await redis.verifyOtpV1(keys.otpCode(t, 'hs_lua', '+905329999999'), T0, GOOD, 5)).toEqual(['expired']);
    const k = await code(t);
    expect(await redis.verifyOtpV1(k, T0, GOOD.slice(0, 63), 5)).toEqual(['invalid', 4]);
    expect(await redis.verifyOtpV1(k, T0, GOOD + 'a', 5)).toEqual(['invalid', 3]);
  });
});
