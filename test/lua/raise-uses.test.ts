import { describe, expect } from 'vitest';
import { keys, luaTest as it } from '../support/lua.js';
import { putVoucher } from '../fixtures/lua-voucher.js';

/** raise-uses-1.lua: a Redis use counter is raised to Postgres's count, never lowered. */
describe('raise-uses-1.lua', () => {
  it('raises a counter that fell behind, and only that', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'RAISE', { id: 'vch_raise', max: 10, uses: 2 });
    const key = keys.voucher(t, 'RAISE');
    expect(await redis.raiseUsesV1(key, 'vch_raise', 5)).toBe(1);
    expect(await redis.hget(key, 'uses')).toBe('5');
    // Redis ahead of Postgres (the normal case): nothing changes.
    expect(await redis.raiseUsesV1(key, 'vch_raise', 3)).toBe(0);
    expect(await redis.raiseUsesV1(key, 'vch_raise', 5)).toBe(0);
    expect(await redis.hget(key, 'uses')).toBe('5');
  });

  it('leaves a code another voucher holds, and creates nothing for an absent one', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'TAKEN', { id: 'vch_new', max: 10, uses: 1 });
    expect(await redis.raiseUsesV1(keys.voucher(t, 'TAKEN'), 'vch_old', 9)).toBe(0);
    expect(await redis.hget(keys.voucher(t, 'TAKEN'), 'uses')).toBe('1');
    expect(await redis.raiseUsesV1(keys.voucher(t, 'NONE'), 'vch_none', 9)).toBe(0);
    expect(await redis.exists(keys.voucher(t, 'NONE'))).toBe(0);
  });
});
