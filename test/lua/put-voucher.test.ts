import { describe, expect } from 'vitest';
import { keys, luaTenant, luaTest as it, mac } from '../support/lua.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

/**
 * put-voucher-1.lua: writes a definition at creation and at a rebuild from
 * Postgres. Its two guarantees: the use counter never goes down, and a code
 * held by another voucher id is left alone.
 */
describe('put-voucher-1.lua', () => {
  it('writes every field of the definition', async ({ redis, tenant: t }) => {
    const exp = Date.now() + 86_400_000;
    expect(await putVoucher(redis, t, 'FULL', {
      id: 'vch_full', max: 5, uses: 2, exp, ssids: ['Guest', 'Lobby'], minutes: 120,
      downKbps: 10_000, upKbps: 5_000, quotaMb: 2048, profile: 'standard', sessionQuotaMb: 300,
    })).toBe(1);
    expect(await redis.hgetall(keys.voucher(t, 'FULL'))).toEqual({
      id: 'vch_full', max: '5', uses: '2', exp: String(exp), ssids: 'Guest\nLobby', dur: '120',
      down: '10000', up: '5000', quota: '2048', profile: 'standard', code: 'FULL', squota: '300', vfrom: '0', vuntil: '0',
    });
  });

  it('never lowers the use counter, but raises it and updates the rest', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'MONO', { id: 'vch_mono', max: 5, uses: 3 });

    // A rebuild from a Postgres that lags the outbox brings an older counter.
    expect(await putVoucher(redis, t, 'MONO', { id: 'vch_mono', max: 6, uses: 1, profile: 'basic', sessionQuotaMb: 50 })).toBe(1);
    expect(await redis.hmget(keys.voucher(t, 'MONO'), 'uses', 'max', 'profile', 'squota')).toEqual(['3', '6', 'basic', '50']);

    expect(await putVoucher(redis, t, 'MONO', { id: 'vch_mono', max: 6, uses: 4 })).toBe(1);
    expect(await redis.hget(keys.voucher(t, 'MONO'), 'uses')).toBe('4');
  });

  it('keeps uses counted in Redis when Postgres has not seen them yet', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'LAG', { id: 'vch_lag', max: 1, uses: 0 });
    expect((await useVoucher(redis, t, 'LAG', { now: Date.now(), mac: mac(1) }))[0]).toBe('ok');
    // The rebuild writes Postgres's 0; the use already handed out must stay counted.
    await putVoucher(redis, t, 'LAG', { id: 'vch_lag', max: 1, uses: 0 });
    expect(await redis.hget(keys.voucher(t, 'LAG'), 'uses')).toBe('1');
    expect(await useVoucher(redis, t, 'LAG', { now: Date.now(), mac: mac(2) })).toEqual(['exhausted', 1, 1]);
  });

  it('refuses a code that belongs to another voucher id and writes nothing', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'TAKEN', { id: 'vch_first', max: 2, uses: 1, profile: 'basic' });
    const before = await redis.hgetall(keys.voucher(t, 'TAKEN'));
    expect(await putVoucher(redis, t, 'TAKEN', { id: 'vch_second', max: 9, uses: 0, profile: 'premium' })).toBe(0);
    expect(await redis.hgetall(keys.voucher(t, 'TAKEN'))).toEqual(before);
  });

  it('keeps the same code of two tenants apart', async ({ redis }) => {
    const a = await luaTenant(redis);
    const b = await luaTenant(redis);
    expect(await putVoucher(redis, a, 'SHARED', { id: 'vch_a', max: 1 })).toBe(1);
    expect(await putVoucher(redis, b, 'SHARED', { id: 'vch_b', max: 3 })).toBe(1);
    expect(await redis.hget(keys.voucher(a, 'SHARED'), 'id')).toBe('vch_a');
    expect(await redis.hget(keys.voucher(b, 'SHARED'), 'id')).toBe('vch_b');
  });
});
