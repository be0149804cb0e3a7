import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { outbox, putVoucher, useVoucher, type UseArgs } from '../fixtures/lua-voucher.js';

/**
 * Match-day vouchers (issue 20 item 5): put-voucher-1.lua stores the window,
 * use-voucher-18.lua enforces it. Edges: valid AT valid_from (that instant
 * included), expired AT valid_until (as at expires_at). Before the window the
 * code is real: no use, no session, no record, and no guess counted.
 */
describe('use-voucher-18.lua: the match-day window', () => {
  let redis: Redis;
  it.beforeAll(({ redis: r }) => { redis = r; });
  const use = (t: string, code: string, a: UseArgs): Promise<unknown[]> => useVoucher(redis, t, code, a);
  const FROM = Date.UTC(2030, 5, 1, 17, 0, 0);
  const UNTIL = Date.UTC(2030, 5, 1, 23, 0, 0);
  const GUESSING = { perDevice: 2, perAddress: 2, address: '198.51.100.7' };

  it('stores the window as vfrom/vuntil; a caller from before windows stores an open one', async ({ tenant: t }) => {
    expect(await putVoucher(redis, t, 'W0', { id: 'vch_w0', validFrom: FROM, validUntil: UNTIL })).toBe(1);
    expect(await redis.hmget(keys.voucher(t, 'W0'), 'vfrom', 'vuntil')).toEqual([String(FROM), String(UNTIL)]);
    // Twelve ARGVs, as an older process sends them.
    const older = redis.putVoucherV3.bind(redis) as unknown as (...a: unknown[]) => Promise<number>;
    expect(await older(keys.voucher(t, 'W1'), 'vch_w1', 1, 0, 0, '', 0, 0, 0, 0, '', 'W1', 0)).toBe(1);
    expect(await redis.hmget(keys.voucher(t, 'W1'), 'vfrom', 'vuntil')).toEqual(['0', '0']);
    expect((await use(t, 'W1', { now: FROM, mac: mac(1) }))[0]).toBe('ok');
  });

  it('before valid_from: not_yet_valid with the start, nothing spent, no guess counted, no record', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'MATCH', { id: 'vch_m', max: 3, validFrom: FROM, validUntil: UNTIL });
    for (let i = 0; i < 5; i++) {
      expect(await use(t, 'MATCH', { now: FROM - 1 - i, mac: mac(1), guessing: GUESSING })).toEqual(['not_yet_valid', String(FROM)]);
    }
    expect(await redis.hget(keys.voucher(t, 'MATCH'), 'uses')).toBe('0');
    expect(await redis.exists(keys.voucherDevices(t, 'MATCH'), keys.grant(t, 'hs_lua', mac(1)))).toBe(0);
    expect(await redis.exists(keys.guessesByDevice(t, 'hs_lua', mac(1)), keys.guessesByAddress(t, GUESSING.address))).toBe(0);
    expect(await outbox(redis, t)).toEqual([]);
    // Five refusals past a limit of two guesses, and the code still works when the window opens: exactly at valid_from.
    const r = await use(t, 'MATCH', { now: FROM, mac: mac(1), guessing: GUESSING });
    expect(r[0], JSON.stringify(r)).toBe('ok');
    expect(r[3]).toBe(1);
  });

  it('valid up to the last millisecond before valid_until; expired at it, with expired_at the window end', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'END', { id: 'vch_e', max: 5, validFrom: FROM, validUntil: UNTIL });
    expect((await use(t, 'END', { now: UNTIL - 1, mac: mac(1) }))[0]).toBe('ok');
    expect(await use(t, 'END', { now: UNTIL, mac: mac(2) })).toEqual(['expired', String(UNTIL)]);
    expect(await redis.hget(keys.voucher(t, 'END'), 'uses')).toBe('1');
  });

  it('expired_at is the earlier of expires_at and valid_until', async ({ tenant: t }) => {
    const early = UNTIL - 3_600_000;
    await putVoucher(redis, t, 'EXP1', { id: 'vch_x1', exp: early, validFrom: FROM, validUntil: UNTIL });
    expect(await use(t, 'EXP1', { now: early, mac: mac(1) })).toEqual(['expired', String(early)]);
    await putVoucher(redis, t, 'EXP2', { id: 'vch_x2', exp: UNTIL + 3_600_000, validFrom: FROM, validUntil: UNTIL });
    expect(await use(t, 'EXP2', { now: UNTIL + 1, mac: mac(1) })).toEqual(['expired', String(UNTIL)]);
    // Only an end: open from the start.
    await putVoucher(redis, t, 'EXP3', { id: 'vch_x3', validUntil: UNTIL });
    expect((await use(t, 'EXP3', { now: 1, mac: mac(1) }))[0]).toBe('ok');
  });

  it('only a start: open-ended once it opens', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'OPEN', { id: 'vch_o', max: 2, validFrom: FROM });
    expect(await use(t, 'OPEN', { now: FROM - 60_000, mac: mac(1) })).toEqual(['not_yet_valid', String(FROM)]);
    expect((await use(t, 'OPEN', { now: FROM + 10 * 365 * 86_400_000, mac: mac(1) }))[0]).toBe('ok');
  });
});
