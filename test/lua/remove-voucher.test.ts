import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

/** remove-voucher-2.lua: removes a code from Redis only on behalf of the voucher that holds it. */
describe('remove-voucher-2.lua', () => {
  it('removes its own voucher and devices hash; live grants stay; the code is then unknown', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'DEL', { id: 'vch_del', max: 3 });
    const now = Date.now();
    const used = await useVoucher(redis, t, 'DEL', { now, mac: mac(1) });
    expect(used[0]).toBe('ok');

    expect(await redis.removeVoucherV1(keys.voucher(t, 'DEL'), keys.voucherDevices(t, 'DEL'), 'vch_del')).toBe(1);
    expect(await redis.exists(keys.voucher(t, 'DEL'), keys.voucherDevices(t, 'DEL'))).toBe(0);
    expect(await redis.hget(keys.grant(t, 'hs_lua', mac(1)), 'sid')).toBe(used[1]);
    expect(await useVoucher(redis, t, 'DEL', { now: now + 1, mac: mac(2) })).toEqual(['not_found']);
    expect(await useVoucher(redis, t, 'DEL', { now: now + 1, mac: mac(1) })).toEqual(['not_found']);
  });

  it('leaves a code that another voucher id holds', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'KEEP', { id: 'vch_new', max: 3 });
    await useVoucher(redis, t, 'KEEP', { now: Date.now(), mac: mac(1) });
    const voucher = await redis.hgetall(keys.voucher(t, 'KEEP'));
    const devices = await redis.hgetall(keys.voucherDevices(t, 'KEEP'));

    // A stale delete of an older voucher that once had this code.
    expect(await redis.removeVoucherV1(keys.voucher(t, 'KEEP'), keys.voucherDevices(t, 'KEEP'), 'vch_old')).toBe(0);
    expect(await redis.hgetall(keys.voucher(t, 'KEEP'))).toEqual(voucher);
    expect(await redis.hgetall(keys.voucherDevices(t, 'KEEP'))).toEqual(devices);
    expect((await useVoucher(redis, t, 'KEEP', { now: Date.now(), mac: mac(2) }))[0]).toBe('ok');
  });

  it('answers 0 when there is nothing to remove', async ({ redis, tenant: t }) => {
    expect(await redis.removeVoucherV1(keys.voucher(t, 'NONE'), keys.voucherDevices(t, 'NONE'), 'vch_none')).toBe(0);
  });
});
