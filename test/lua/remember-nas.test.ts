import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

/** remember-nas-2.lua: the NAS, its User-Name and its SSID are written only onto the session they belong to. */
describe('remember-nas-2.lua', () => {
  it('records the NAS and its User-Name on the live session', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'NAS', { id: 'vch_nas', max: 5 });
    const used = await useVoucher(redis, t, 'NAS', { now: Date.now(), mac: mac(1) });
    const grant = keys.grant(t, 'hs_lua', mac(1));
    expect(await redis.rememberNasV2(grant, keys.liveBySsid(t), String(used[1]), 'nas_a', '020000000001', '')).toBe(1);
    expect(await redis.hmget(grant, 'nas', 'nuser', 'sid')).toEqual(['nas_a', '020000000001', used[1]]);
  });

  it('writes nothing for a session that has ended or been replaced: no fragment is left behind', async ({ redis, tenant: t }) => {
    const grant = keys.grant(t, 'hs_lua', mac(2));
    expect(await redis.rememberNasV2(grant, keys.liveBySsid(t), 'sess_gone', 'nas_a', 'x', 'Guest')).toBe(0);
    expect(await redis.exists(grant)).toBe(0);
    await redis.hset(grant, 'sid', 'sess_newer');
    expect(await redis.rememberNasV2(grant, keys.liveBySsid(t), 'sess_gone', 'nas_a', 'x', 'Guest')).toBe(0);
    expect(await redis.hgetall(grant)).toEqual({ sid: 'sess_newer' });
    expect(await redis.hget(keys.liveBySsid(t), 'hs_lua|Guest')).toBeNull();
  });

  it("takes the NAS's SSID over the portal's and moves the session's live count with it", async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'SSID', { id: 'vch_ssid', max: 5 });
    const used = await useVoucher(redis, t, 'SSID', { now: Date.now(), mac: mac(3), ssid: 'VIP' });
    const grant = keys.grant(t, 'hs_lua', mac(3));
    const lss = keys.liveBySsid(t);
    expect(await redis.hget(lss, 'hs_lua|VIP')).toBe('1');
    expect(await redis.rememberNasV2(grant, lss, String(used[1]), 'nas_a', 'u', 'Guest')).toBe(1);
    expect(await redis.hmget(grant, 'ssid', 'nas')).toEqual(['Guest', 'nas_a']);
    expect(await redis.hgetall(lss)).toEqual({ 'hs_lua|Guest': '1' });
    // No SSID named: the grant keeps the one it has.
    expect(await redis.rememberNasV2(grant, lss, String(used[1]), 'nas_b', 'u', '')).toBe(1);
    expect(await redis.hmget(grant, 'ssid', 'nas')).toEqual(['Guest', 'nas_b']);
    expect(await redis.hgetall(lss)).toEqual({ 'hs_lua|Guest': '1' });
  });
});
