import type { Redis } from 'ioredis';
import { activityKeys } from '../../engine/events/activity-keys.js';
import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { outbox, putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

/** end-session-10.lua: a session ends exactly once, with its end record queued. */
describe('end-session-10.lua', () => {
  const started = async (redis: Redis, t: string, n: number): Promise<{ sid: string }> => {
    await putVoucher(redis, t, 'END', { id: 'vch_end', max: 10 });
    const used = await useVoucher(redis, t, 'END', { now: 1_000, mac: mac(n), ip: '10.2.0.1', ssid: 'Guest' });
    return { sid: String(used[1]) };
  };
  let ops = 0;
  const end = (redis: Redis, t: string, sid: string, m: string, reason: string, now = 5_000, op = `x${++ops}`) =>
    redis.endSessionV3(keys.grant(t, 'hs_lua', m), keys.live(t, 'hs_lua'), keys.sessionRef(t, sid), keys.outbox(t), ...activityKeys(t, now), sid, now, reason, 'hs_lua', m, 'op_1', op);

  it('the same call again (a resend after a lost answer) is told it ended the session, and writes nothing more', async ({ redis, tenant: t }) => {
    const { sid } = await started(redis, t, 9);
    expect((await end(redis, t, sid, mac(9), 'admin_disconnect', 5_000, 'op_same'))[0]).toBe('ended');
    expect(await redis.get(keys.sessionRef(t, sid))).toBe(`hs_lua ${mac(9)} op_same`);
    expect(await redis.pttl(keys.sessionRef(t, sid))).toBeGreaterThan(3_590_000);
    expect(await end(redis, t, sid, mac(9), 'admin_disconnect', 5_000, 'op_same')).toEqual(['ended']);
    // Another call (the sweep, a Stop) is not the one that ended it.
    expect(await end(redis, t, sid, mac(9), 'session_timeout', 6_000, 'op_other')).toEqual(['gone']);
    expect(await end(redis, t, sid, mac(9), 'session_timeout', 6_000, '')).toEqual(['gone']);
    expect((await outbox(redis, t)).filter((r) => r.type === 'session_end' && r.sid === sid)).toHaveLength(1);
  });

  it('ends once: grant and live entry gone, the reference kept an hour, one end record; the second call is gone', async ({ redis, tenant: t }) => {
    const { sid } = await started(redis, t, 1);
    await redis.hset(keys.grant(t, 'hs_lua', mac(1)), 'bin', 700, 'bout', 300);
    expect(await end(redis, t, sid, mac(1), 'admin_disconnect')).toEqual(['ended', '700', '300', '1000']);
    expect(await redis.exists(keys.grant(t, 'hs_lua', mac(1)))).toBe(0);
    expect(await redis.zscore(keys.live(t, 'hs_lua'), sid)).toBeNull();
    const ttl = await redis.pttl(keys.sessionRef(t, sid));
    expect(ttl).toBeGreaterThan(3_590_000);
    expect(ttl).toBeLessThanOrEqual(3_600_000);

    expect(await end(redis, t, sid, mac(1), 'session_timeout', 6_000)).toEqual(['gone']);
    const ends = (await outbox(redis, t)).filter((r) => r.type === 'session_end');
    expect(ends).toEqual([{
      type: 'session_end', sid, hs: 'hs_lua', mac: mac(1), at: '5000', reason: 'admin_disconnect', bin: '700', bout: '300',
      ip: '10.2.0.1', ssid: 'Guest', user: 'END', method: 'voucher', by: 'op_1',
    }]);
  });

  it("ending a session the device's grant no longer holds leaves the new grant alone", async ({ redis, tenant: t }) => {
    const { sid } = await started(redis, t, 2);
    // The device signed in again: its grant now belongs to another session.
    await redis.hset(keys.grant(t, 'hs_lua', mac(2)), 'sid', 'sess_newer');
    expect(await end(redis, t, sid, mac(2), 'replaced')).toEqual(['ended', '0', '0', '0']);
    expect(await redis.hget(keys.grant(t, 'hs_lua', mac(2)), 'sid')).toBe('sess_newer');
    expect((await outbox(redis, t)).filter((r) => r.type === 'session_end')).toHaveLength(1);
  });
});
