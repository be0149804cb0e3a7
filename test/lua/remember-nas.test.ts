import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

/** remember-nas-1.lua: the NAS and its User-Name are written only onto the session they belong to. */
describe('remember-nas-1.lua', () => {
  it('records the NAS and its User-Name on the live session', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'NAS', { id: 'vch_nas', max: 5 });
    const used = await useVoucher(redis, t, 'NAS', { now: Date.now(), mac: mac(1) });
    const grant = keys.grant(t, 'hs_lua', mac(1));
    expect(await redis.rememberNasV1(grant, String(used[1]), 'nas_a', '020000000001')).toBe(1);
    expect(await redis.hmget(grant, 'nas', 'nuser', 'sid')).toEqual(['nas_a', '020000000001', used[1]]);
  });

  it('writes nothing for a session that has ended or been replaced: no fragment is left behind', async ({ redis, tenant: t }) => {
    const grant = keys.grant(t, 'hs_lua', mac(2));
    expect(await redis.rememberNasV1(grant, 'sess_gone', 'nas_a', 'x')).toBe(0);
    expect(await redis.exists(grant)).toBe(0);
    await redis.hset(grant, 'sid', 'sess_newer');
    expect(await redis.rememberNasV1(grant, 'sess_gone', 'nas_a', 'x')).toBe(0);
    expect(await redis.hgetall(grant)).toEqual({ sid: 'sess_newer' });
  });
});
