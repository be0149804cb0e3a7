import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { serverRunId } from '../../engine/redis/scripts.js';
import { keys, luaTenant, luaTest as it, mac } from '../support/lua.js';
import { outbox, putVoucher, startSession, useVoucher } from '../fixtures/lua-voucher.js';

/**
 * start-session-13.lua: the start of a guest whose method checked them in an
 * earlier atomic step (an OTP code). The block check and the method-neutral
 * session start (lua/includes/session-start.lua) that the voucher script
 * shares: the same grant, live entry, ref and session_start record.
 */
describe('start-session-13.lua', () => {
  let redis: Redis;
  it.beforeAll(({ redis: r }) => { redis = r; });

  it('starts a session with the given terms: grant, live entry, ref and one session_start record carrying the method', async ({ tenant: t }) => {
    const now = Date.now();
    const r = await startSession(redis, t, {
      now, mac: mac(1), hotspot: 'hs_otp', ip: '10.3.0.1', ssid: 'Guest', minutes: 45, method: 'sms_otp', user: '+905551234567',
      downKbps: 4000, upKbps: 1000, quotaMb: 300, sessionQuotaMb: 50, idleSec: 600, profile: 'phone',
    });
    const until = now + 45 * 60_000;
    expect(r).toEqual(['ok', expect.stringMatching(/^sess_/), String(until), '']);
    const sid = String(r[1]);
    expect(await redis.hgetall(keys.grant(t, 'hs_otp', mac(1)))).toEqual({
      sid, hs: 'hs_otp', mac: mac(1), until: String(until), method: 'sms_otp', user: '+905551234567', vid: '',
      down: '4000', up: '1000', quota: '300', squota: '50', idle: '600', profile: 'phone', ip: '10.3.0.1', ssid: 'Guest',
      // No voucher, no SSID list: the NAS's Called-Station-Id is not checked against one.
      ssids: '', created: String(now), last: String(now), bin: '0', bout: '0',
    });
    expect(await redis.zscore(keys.live(t, 'hs_otp'), sid)).toBe(String(until));
    expect(await redis.get(keys.sessionRef(t, sid))).toBe(`hs_otp ${mac(1)}`);
    expect(await outbox(redis, t)).toEqual([{
      type: 'session_start', sid, hs: 'hs_otp', mac: mac(1), ip: '10.3.0.1', ssid: 'Guest', at: String(now), until: String(until),
      user: '+905551234567', method: 'sms_otp', vid: '',
    }]);
    for (const [, fields] of await redis.xrange(keys.outbox(t), '-', '+')) expect(fields).toEqual(['type', 'session_start', 'rec', expect.any(String)]);
  });

  it('answers not_loaded (tenant not in this Redis) and blocked, and changes nothing either way', async () => {
    const t = await luaTenant(redis, false);
    const now = Date.now();
    expect(await startSession(redis, t, { now, mac: mac(1) })).toEqual(['not_loaded', await serverRunId(redis)]);
    await redis.set(keys.loaded(t), await serverRunId(redis));
    await redis.set(keys.block(t, mac(1)), 'permanent');
    expect(await startSession(redis, t, { now, mac: mac(1) })).toEqual(['blocked']);
    expect(await redis.exists(keys.grant(t, 'hs_lua', mac(1)), keys.live(t, 'hs_lua'))).toBe(0);
    expect(await outbox(redis, t)).toEqual([]);
  });

  it("ends the device's live voucher session it replaces, once, with the end record the voucher path writes", async ({ tenant: t }) => {
    await putVoucher(redis, t, 'FIRST', { id: 'vch_first', max: 3 });
    const now = Date.now();
    const first = await useVoucher(redis, t, 'FIRST', { now, mac: mac(2), ip: '10.3.0.2', ssid: 'Guest', minutes: 60 });
    await redis.hset(keys.grant(t, 'hs_lua', mac(2)), 'bin', 900, 'bout', 80);
    const second = await startSession(redis, t, { now: now + 1_000, mac: mac(2), method: 'email', user: 'guest@example.com' });
    expect(second[3]).toBe(first[1]);
    expect((await outbox(redis, t)).map((x) => [x.type, x.sid, x.method])).toEqual([
      ['session_start', first[1], 'voucher'], ['session_end', first[1], 'voucher'], ['session_start', second[1], 'email']]);
    expect((await outbox(redis, t))[1]).toEqual({
      type: 'session_end', sid: first[1], hs: 'hs_lua', mac: mac(2), at: String(now + 1_000), reason: 'replaced',
      bin: '900', bout: '80', ip: '10.3.0.2', ssid: 'Guest', user: 'FIRST', method: 'voucher', by: '',
    });
    expect(await redis.zrange(keys.live(t, 'hs_lua'), 0, -1)).toEqual([second[1]]);

    // One past its end, not yet swept, ends as a time-out at its own end time.
    const third = await startSession(redis, t, { now: now + 1_000 + 3_600_000, mac: mac(2), minutes: 1 });
    const ends = (await outbox(redis, t)).filter((x) => x.type === 'session_end');
    expect(ends[1]).toMatchObject({ sid: second[1], reason: 'session_timeout', at: String(now + 1_000 + 3_600_000) });
    expect(third[3]).toBe(second[1]);
  });
});
