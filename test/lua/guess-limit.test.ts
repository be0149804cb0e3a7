import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { outbox, putVoucher, useVoucher, type UseArgs } from '../fixtures/lua-voucher.js';

/**
 * The guessing limits of use-voucher-18.lua (includes/guess-limit.lua)
 * against a real Redis, the clock passed in: only unknown codes count, per
 * device and hotspot and per source address, in a sliding window; past a
 * limit every code is refused before it is looked up, so a valid code spends
 * nothing; the wait told is the true one.
 */
describe('use-voucher-18.lua: guessing limits', () => {
  let redis: Redis;
  it.beforeAll(({ redis: r }) => { redis = r; });

  const WINDOW = 600_000;
  const DEVICE = { perDevice: 10, windowMs: WINDOW };
  const use = (t: string, code: string, a: UseArgs): Promise<unknown[]> => useVoucher(redis, t, code, a);
  const uses = (t: string, code: string): Promise<string | null> => redis.hget(keys.voucher(t, code), 'uses');

  it('refuses a device after 10 unknown codes at a hotspot, a valid code too, and spends nothing', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'GOOD', { id: 'vch_good', max: 5 });
    const now = 1_700_000_000_000;
    for (let i = 0; i < 10; i++) {
      expect(await use(t, `BAD${i}`, { now: now + i * 1000, mac: mac(1), guessing: DEVICE })).toEqual(['not_found']);
    }
    const at = now + 10_000;
    // The first guess (at `now`) leaves the window at now + WINDOW: that is the wait.
    expect(await use(t, 'GOOD', { now: at, mac: mac(1), guessing: DEVICE })).toEqual(['too_many_attempts', now + WINDOW - at, 'device', 1]);
    expect(await use(t, 'BAD99', { now: at, mac: mac(1), guessing: DEVICE })).toEqual(['too_many_attempts', now + WINDOW - at, 'device', 2]);
    expect(await uses(t, 'GOOD')).toBe('0');
    expect(await redis.exists(keys.grant(t, 'hs_lua', mac(1)), keys.voucherDevices(t, 'GOOD'))).toBe(0);
    expect(await outbox(redis, t)).toEqual([]);
    // Refused attempts are no guesses: the log still holds the ten.
    expect(await redis.zcard(keys.guessesByDevice(t, 'hs_lua', mac(1)))).toBe(10);

    // Another device, and the same device at another hotspot, are not limited.
    expect((await use(t, 'GOOD', { now: at, mac: mac(2), guessing: DEVICE }))[0]).toBe('ok');
    expect((await use(t, 'GOOD', { now: at, mac: mac(1), hotspot: 'hs_other', guessing: DEVICE }))[0]).toBe('ok');

    // Sliding: one ms before the first guess leaves, still refused; at that moment, let through.
    expect((await use(t, 'GOOD', { now: now + WINDOW - 1, mac: mac(1), guessing: DEVICE }))[0]).toBe('too_many_attempts');
    expect((await use(t, 'GOOD', { now: now + WINDOW, mac: mac(1), guessing: DEVICE }))[0]).toBe('ok');
    expect(await uses(t, 'GOOD')).toBe('3');
  });

  it('counts only unknown codes: expired, used-up and wrong-SSID codes are real codes, not guesses', async ({ tenant: t }) => {
    const now = 1_700_000_000_000;
    await putVoucher(redis, t, 'OLD', { id: 'vch_old', max: 5, exp: now - 1 });
    await putVoucher(redis, t, 'DONE', { id: 'vch_done', max: 1, uses: 1 });
    await putVoucher(redis, t, 'VIP', { id: 'vch_vip', max: 5, ssids: ['VIP'] });
    await putVoucher(redis, t, 'GOOD', { id: 'vch_good', max: 5 });
    const g = { perDevice: 2, windowMs: WINDOW };
    for (let i = 0; i < 5; i++) {
      expect((await use(t, 'OLD', { now, mac: mac(1), guessing: g }))[0]).toBe('expired');
      expect((await use(t, 'DONE', { now, mac: mac(1), guessing: g }))[0]).toBe('exhausted');
      expect((await use(t, 'VIP', { now, mac: mac(1), ssid: 'Guest', guessing: g }))[0]).toBe('ssid');
    }
    expect(await redis.exists(keys.guessesByDevice(t, 'hs_lua', mac(1)))).toBe(0);
    expect((await use(t, 'GOOD', { now, mac: mac(1), guessing: g }))[0]).toBe('ok');
  });

  it('limits a source address across devices and hotspots, and tells the longer wait when both limits bite', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'GOOD', { id: 'vch_good', max: -1 });
    const now = 1_700_000_000_000;
    const g = (address: string) => ({ perDevice: 10, perAddress: 5, address, windowMs: WINDOW });
    for (let i = 0; i < 5; i++) {
      const r = await use(t, `NOPE${i}`, { now: now + i, mac: mac(10 + i), hotspot: i % 2 ? 'hs_a' : 'hs_b', guessing: g('198.51.100.7') });
      expect(r).toEqual(['not_found']);
    }
    // A fresh device behind the same address is refused; one behind another address is not.
    expect(await use(t, 'GOOD', { now: now + 10, mac: mac(20), guessing: g('198.51.100.7') })).toEqual(['too_many_attempts', WINDOW - 10, 'address', 1]);
    expect((await use(t, 'GOOD', { now: now + 10, mac: mac(21), guessing: g('198.51.100.8') }))[0]).toBe('ok');
    // The body's ip is no key: a device sending another ip from the same address is still refused.
    expect((await use(t, 'GOOD', { now: now + 10, mac: mac(22), ip: '10.9.9.9', guessing: g('198.51.100.7') }))[0]).toBe('too_many_attempts');
    // No source address (RADIUS): no per-address limit.
    expect((await use(t, 'GOOD', { now: now + 10, mac: mac(23), guessing: { perDevice: 10, perAddress: 5, windowMs: WINDOW } }))[0]).toBe('ok');

    // Both limits reached: the wait is the one that clears both.
    const v6 = '2001:db8::1';
    const both = { perDevice: 2, perAddress: 3, address: v6, windowMs: WINDOW };
    const at = (ms: number, m: number): UseArgs => ({ now: now + ms, mac: mac(m), hotspot: 'hs_both', guessing: both });
    for (const [code, ms, m] of [['X1', 0, 30], ['X2', 100, 31], ['X3', 200, 31]] as const) expect(await use(t, code, at(ms, m))).toEqual(['not_found']);
    // mac(31): its first guess leaves at now + 100 + W; the address's third-newest at now + W: the device's wait is longer.
    expect(await use(t, 'GOOD', at(300, 31))).toEqual(['too_many_attempts', WINDOW - 200, 'device', 1]);
    expect(await use(t, 'GOOD', at(300, 32))).toEqual(['too_many_attempts', WINDOW - 300, 'address', 2]);
  });

  it('counts the hotspot\'s refusals in the window bucket, which expires', async ({ tenant: t }) => {
    const now = 1_700_000_000_000;
    const g = { perDevice: 1, windowMs: WINDOW };
    await use(t, 'NOPE', { now, mac: mac(1), hotspot: 'hs_r', guessing: g });
    for (let i = 1; i <= 3; i++) expect((await use(t, 'NOPE', { now, mac: mac(1), hotspot: 'hs_r', guessing: g }))[3]).toBe(i);
    const bucket = keys.guessRefusals(t, Math.floor(now / 600_000));
    expect(await redis.hgetall(bucket)).toEqual({ hs_r: '3' });
    expect(await redis.pttl(bucket)).toBeGreaterThan(0);
    expect(await redis.pttl(keys.guessesByDevice(t, 'hs_r', mac(1)))).toBeGreaterThan(0);
  });

  it('holds exactly under concurrent calls: 30 unknown codes at once from one device give 10 not_found and 20 refusals', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'GOOD', { id: 'vch_good', max: 5 });
    const now = Date.now();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => use(t, `C${i}`, { now, mac: mac(5), guessing: DEVICE })));
    const count = (what: string) => answers.filter((a) => a[0] === what).length;
    expect([count('not_found'), count('too_many_attempts')]).toEqual([10, 20]);
    expect(await redis.zcard(keys.guessesByDevice(t, 'hs_lua', mac(5)))).toBe(10);
    // And a valid code among concurrent guesses from the limited device spends nothing.
    const mixed = await Promise.all([use(t, 'GOOD', { now, mac: mac(5), guessing: DEVICE }), use(t, 'C99', { now, mac: mac(5), guessing: DEVICE })]);
    expect(mixed.map((a) => a[0])).toEqual(['too_many_attempts', 'too_many_attempts']);
    expect(await uses(t, 'GOOD')).toBe('0');
  });

  it('does nothing with the limits off (0): no log kept', async ({ tenant: t }) => {
    const now = Date.now();
    for (let i = 0; i < 20; i++) expect(await use(t, `Z${i}`, { now, mac: mac(7), guessing: { perDevice: 0, windowMs: WINDOW } })).toEqual(['not_found']);
    expect(await redis.exists(keys.guessesByDevice(t, 'hs_lua', mac(7)))).toBe(0);
  });
});
