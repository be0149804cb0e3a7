import { describe, expect } from 'vitest';
import { keys, luaTest as it } from '../support/lua.js';
import { putVoucher } from '../fixtures/lua-voucher.js';

/** raise-uses-n.lua: Redis use counters raised to Postgres's counts, a batch of vouchers in one call, never lowered. */
describe('raise-uses-n.lua', () => {
  it('raises a counter that fell behind, and only that', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'RAISE', { id: 'vch_raise', max: 10, uses: 2 });
    const key = keys.voucher(t, 'RAISE');
    expect(await redis.raiseUsesN1(1, key, 'vch_raise', 5)).toBe(1);
    expect(await redis.hget(key, 'uses')).toBe('5');
    // Redis ahead of Postgres (the normal case): nothing changes.
    expect(await redis.raiseUsesN1(1, key, 'vch_raise', 3)).toBe(0);
    expect(await redis.raiseUsesN1(1, key, 'vch_raise', 5)).toBe(0);
    expect(await redis.hget(key, 'uses')).toBe('5');
  });

  it('takes a batch of vouchers in one call, each judged on its own', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'BEHIND', { id: 'vch_behind', max: 10, uses: 1 });
    await putVoucher(redis, t, 'AHEAD', { id: 'vch_ahead', max: 10, uses: 7 });
    await putVoucher(redis, t, 'TAKEN', { id: 'vch_new', max: 10, uses: 1 });
    const codes = ['BEHIND', 'AHEAD', 'TAKEN', 'NONE'];
    const raised = await redis.raiseUsesN1(codes.length, ...codes.map((c) => keys.voucher(t, c)),
      'vch_behind', 4, 'vch_ahead', 3, 'vch_old', 9, 'vch_none', 9);
    expect(raised).toBe(1);
    expect(await redis.hmget(keys.voucher(t, 'BEHIND'), 'uses')).toEqual(['4']);
    expect(await redis.hmget(keys.voucher(t, 'AHEAD'), 'uses')).toEqual(['7']);
    // A code another voucher holds is left alone; an absent one is not created.
    expect(await redis.hmget(keys.voucher(t, 'TAKEN'), 'uses')).toEqual(['1']);
    expect(await redis.exists(keys.voucher(t, 'NONE'))).toBe(0);
  });
});
