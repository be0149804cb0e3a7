import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

/** live-session-2.lua: the grant an actor takes into memory, only while its session is live. */
describe('live-session-2.lua', () => {
  it("gives a live session's grant as HGETALL does", async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'LIVE', { id: 'vch_live', max: 5 });
    const used = await useVoucher(redis, t, 'LIVE', { now: Date.now(), mac: mac(1) });
    const grant = keys.grant(t, 'hs_lua', mac(1));
    const flat = await redis.liveSessionV1(grant, keys.live(t, 'hs_lua'));
    const asHash: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) asHash[flat[i]!] = flat[i + 1]!;
    expect(asHash).toEqual(await redis.hgetall(grant));
    expect(asHash.sid).toBe(used[1]);
  });

  it('gives nothing for no grant, and for a grant whose session is not in the live set', async ({ redis, tenant: t }) => {
    const grant = keys.grant(t, 'hs_lua', mac(2));
    expect(await redis.liveSessionV1(grant, keys.live(t, 'hs_lua'))).toEqual([]);
    // A grant left by a session that is no longer live (ended, or never added): not a session to hold.
    await redis.hset(grant, 'sid', 'sess_not_live', 'mac', mac(2));
    expect(await redis.liveSessionV1(grant, keys.live(t, 'hs_lua'))).toEqual([]);
    await redis.zadd(keys.live(t, 'hs_lua'), Date.now() + 60_000, 'sess_not_live');
    expect(await redis.liveSessionV1(grant, keys.live(t, 'hs_lua'))).toContain('sess_not_live');
  });
});
