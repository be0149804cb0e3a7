import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../engine/redis/keys.js';
import { connect, freshTenant } from '../fixtures/lua-voucher.js';

const T0 = 1_800_000_000_000;
const GOOD = 'a'.repeat(64);
const BAD = 'b'.repeat(64);

/** verify-otp-1.lua: a code is used once, dies after 5 wrong tries, and is dead past its validity. */
describe('verify-otp-1.lua', () => {
  let redis: Redis;
  beforeAll(() => { redis = connect(); });
  afterAll(() => { redis.disconnect(); });

  const code = async (t: string, ch = 'sms'): Promise<string> => {
    const k = keys.otpCode(t, 'hs_lua', '+905321111111');
    await redis.hset(k, 'h', GOOD, 'tries', 0, 'exp', T0 + 300_000, 'rid', 'r1', 'ch', ch);
    return k;
  };

  it('the right code is consumed exactly once', async () => {
    const k = await code(await freshTenant(redis, false), 'msgapp');
    expect(await redis.verifyOtpV1(k, T0, GOOD, 5)).toEqual(['ok', 'msgapp', 'r1']);
    expect(await redis.exists(k)).toBe(0);
    expect(await redis.verifyOtpV1(k, T0, GOOD, 5)).toEqual(['expired']);
  });

  it('counts wrong tries down; the fifth kills the code, even for the right code after', async () => {
    const k = await code(await freshTenant(redis, false));
    for (let left = 4; left >= 1; left--) expect(await redis.verifyOtpV1(k, T0, BAD, 5)).toEqual(['invalid', left]);
    expect(await redis.verifyOtpV1(k, T0, BAD, 5)).toEqual(['locked']);
    expect(await redis.verifyOtpV1(k, T0, GOOD, 5)).toEqual(['locked']);
    // Dead until it expires: then there is no live code at all.
    expect(await redis.verifyOtpV1(k, T0 + 300_000, GOOD, 5)).toEqual(['expired']);
  });

  it('a code is dead at 300 s and alive just before', async () => {
    const t = await freshTenant(redis, false);
    const k = await code(t);
    expect(await redis.verifyOtpV1(k, T0 + 300_000, GOOD, 5)).toEqual(['expired']);
    expect(await redis.exists(k)).toBe(0);
    const k2 = await code(t);
    expect(await redis.verifyOtpV1(k2, T0 + 299_999, GOOD, 5)).toEqual(['ok', 'sms', 'r1']);
  });

  it('no code ever sent is expired; a hash of another length never matches', async () => {
    const t = await freshTenant(redis, false);
    expect(await redis.verifyOtpV1(keys.otpCode(t, 'hs_lua', '+905329999999'), T0, GOOD, 5)).toEqual(['expired']);
    const k = await code(t);
    expect(await redis.verifyOtpV1(k, T0, GOOD.slice(0, 63), 5)).toEqual(['invalid', 4]);
    expect(await redis.verifyOtpV1(k, T0, GOOD + 'a', 5)).toEqual(['invalid', 3]);
  });
});
