import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { activityBuckets, activityKeys } from '../../engine/events/activity-keys.js';
import { EVENT_FIELD } from '../../engine/events/types.js';
import { SessionStore } from '../../engine/sessions/session-store.js';
import { keys, luaTenant, luaTest as it, mac } from '../support/lua.js';
import { putVoucher, startSession, useVoucher } from '../fixtures/lua-voucher.js';

/**
 * The domain events and dashboard counters the session scripts write with
 * their change (lua/includes/activity.lua): use-voucher-18, start-session-13,
 * end-session-10, extend-session-4, account-session-5. Each assertion here
 * fails when an event or a counter goes missing from a script.
 */
describe('session scripts: events and activity counters', () => {
  // A fixed instant inside one minute (and hour), so every write of a test lands in the same buckets.
  const T0 = 1_790_000_000_000 - (1_790_000_000_000 % 3_600_000) + 60_000 * 7 + 1_000;

  // The session events only: device.new and voucher.redeemed, written by the same starts, have tests of
  // their own (test/lua/device-new.test.ts, test/lua/voucher-redeemed.test.ts).
  const events = async (redis: Redis, t: string): Promise<{ type: string; ts: string; site: string; data: Record<string, unknown> }[]> =>
    (await redis.xrange(keys.events(t), '-', '+')).map(([, f]) => {
      const m: Record<string, string> = {};
      for (let i = 0; i + 1 < f.length; i += 2) m[f[i]!] = f[i + 1]!;
      return { type: m[EVENT_FIELD.type]!, ts: m[EVENT_FIELD.ts]!, site: m[EVENT_FIELD.site]!, data: JSON.parse(m[EVENT_FIELD.data]!) as Record<string, unknown> };
    }).filter((e) => e.type.startsWith('session.'));
  const buckets = async (redis: Redis, t: string, at = T0): Promise<[Record<string, string>, Record<string, string>]> => {
    const [m, h] = activityBuckets(t, at);
    return [await redis.hgetall(m), await redis.hgetall(h)];
  };
  const live = async (redis: Redis, t: string) => ({
    devices: await redis.hgetall(keys.liveDevices(t)), ssid: await redis.hgetall(keys.liveBySsid(t)), ap: await redis.hgetall(keys.liveByAp(t)),
  });
  const end = (redis: Redis, t: string, sid: string, m: string, now: number, reason = 'user_request', hs = 'hs_lua') =>
    redis.endSessionV3(keys.grant(t, hs, m), keys.live(t, hs), keys.sessionRef(t, sid), keys.outbox(t), ...activityKeys(t, now),
      sid, now, reason, hs, m, '', '');
  // Through the SessionStore, whose tally counts the script's byte deltas into the buckets (written at close).
  const account = async (redis: Redis, t: string, m: string, now: number, acctId: string, tin: number, tout: number, ap = '', status: 'start' | 'interim' | 'stop' = 'interim') => {
    const store = new SessionStore(redis);
    const r = await store.account(t, 'hs_lua', m, '20261122', now, acctId, tin, tout, '', ap, '', status);
    await store.close();
    return r;
  };

  it('a voucher start: one session.start event, start counted tenant-wide in the minute bucket (its one reader), device and SSID live', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'ACT', { id: 'vch_act', max: 5 });
    const r = await useVoucher(redis, t, 'ACT', { now: T0, mac: mac(1), ssid: 'Guest' });
    const sid = String(r[1]);
    expect(await events(redis, t)).toEqual([
      { type: 'session.start', ts: String(T0), site: 'hs_lua', data: { session_id: sid, mac: mac(1), method: 'voucher', hotspot_id: 'hs_lua' } }]);
    const [minute, hour] = await buckets(redis, t);
    expect(minute).toEqual({ start: '1' });
    // Nothing reads starts per hour or per hotspot: the start writes neither (one HINCRBY where it took four).
    expect(hour).toEqual({});
    const [mk, hk] = activityBuckets(t, T0);
    expect(await redis.ttl(mk)).toBeGreaterThan(7_000);
    expect(await redis.exists(hk)).toBe(0);
    expect(await live(redis, t)).toEqual({ devices: { [mac(1)]: '1' }, ssid: { 'hs_lua|Guest': '1' }, ap: {} });

    // The same device again with its session live gets it back: nothing new happened, nothing counted.
    await useVoucher(redis, t, 'ACT', { now: T0 + 1_000, mac: mac(1), ssid: 'Guest' });
    expect(await events(redis, t)).toHaveLength(1);
    expect((await buckets(redis, t))[0]).toEqual({ start: '1' });
  });

  it('a refused start writes no event and counts nothing', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'ONE', { id: 'vch_one', max: 1 });
    await useVoucher(redis, t, 'ONE', { now: T0, mac: mac(1) });
    expect((await useVoucher(redis, t, 'ONE', { now: T0, mac: mac(2) }))[0]).toBe('exhausted');
    await redis.set(keys.block(t, mac(3)), 'permanent');
    expect((await startSession(redis, t, { now: T0, mac: mac(3) }))[0]).toBe('blocked');
    expect(await events(redis, t)).toHaveLength(1);
    expect((await buckets(redis, t))[0]).toEqual({ start: '1' });
    expect((await live(redis, t)).devices).toEqual({ [mac(1)]: '1' });
  });

  it('accounting counts byte deltas and moves the session between access points; the end counts it, emits session.end, and takes it off every live count', async ({ redis, tenant: t }) => {
    const r = await startSession(redis, t, { now: T0, mac: mac(4), ssid: 'Staff', method: 'sms_otp' });
    const sid = String(r[1]);
    await account(redis, t, mac(4), T0 + 1_000, 'a1', 1_000, 200, 'ap-east', 'start');
    expect((await live(redis, t)).ap).toEqual({ 'hs_lua|ap-east': '1' });
    await account(redis, t, mac(4), T0 + 2_000, 'a1', 1_500, 200, 'ap-east');
    // Roamed: the session leaves ap-east (its field dropped at 0) for ap-west.
    await account(redis, t, mac(4), T0 + 3_000, 'a1', 1_800, 260, 'ap-west');
    expect((await live(redis, t)).ap).toEqual({ 'hs_lua|ap-west': '1' });
    // A retransmission: no bytes, nothing counted.
    await account(redis, t, mac(4), T0 + 3_500, 'a1', 1_800, 260, 'ap-west');
    let [minute, hour] = await buckets(redis, t);
    expect(minute).toEqual({ start: '1', bin: '1800', 'bin@hs_lua': '1800', bout: '260', 'bout@hs_lua': '260' });
    expect(hour).toEqual({ bin: '1800', 'bin@hs_lua': '1800', bout: '260', 'bout@hs_lua': '260' });

    expect(await end(redis, t, sid, mac(4), T0 + 42_500)).toEqual(['ended', '1800', '260', String(T0)]);
    const ev = await events(redis, t);
    expect(ev.map((e) => e.type)).toEqual(['session.start', 'session.end']);
    expect(ev[1]).toEqual({
      type: 'session.end', ts: String(T0 + 42_500), site: 'hs_lua',
      data: { session_id: sid, mac: mac(4), method: 'sms_otp', hotspot_id: 'hs_lua', reason: 'user_request', duration_sec: 42, bytes_in: 1800, bytes_out: 260 },
    });
    [minute, hour] = await buckets(redis, t);
    // Counted where the live panel reads them: ends per minute and per hour, durations per hour; none per hotspot.
    expect(minute).toEqual({ start: '1', end: '1', bin: '1800', 'bin@hs_lua': '1800', bout: '260', 'bout@hs_lua': '260' });
    expect(hour).toEqual({ end: '1', dur: '42', bin: '1800', 'bin@hs_lua': '1800', bout: '260', 'bout@hs_lua': '260' });
    expect(await live(redis, t)).toEqual({ devices: {}, ssid: {}, ap: {} });

    // Ended already: a second end counts nothing.
    expect(await end(redis, t, sid, mac(4), T0 + 43_000)).toEqual(['gone']);
    expect(await events(redis, t)).toHaveLength(2);
    expect((await buckets(redis, t))[0].end).toBe('1');
  });

  it('a replacing start ends the old session (its event and counts first) and starts the new: the device stays live once', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'OLD', { id: 'vch_old', max: 5 });
    const first = await useVoucher(redis, t, 'OLD', { now: T0, mac: mac(5), ssid: 'Guest' });
    await account(redis, t, mac(5), T0 + 1_000, 'a1', 500, 50, 'ap-1', 'start');
    const second = await startSession(redis, t, { now: T0 + 10_000, mac: mac(5), ssid: 'Lobby', method: 'email', user: 'a@example.com' });
    expect(second[3]).toBe(first[1]);
    const ev = await events(redis, t);
    expect(ev.map((e) => [e.type, e.data.session_id])).toEqual([
      ['session.start', first[1]], ['session.end', first[1]], ['session.start', second[1]]]);
    expect(ev[1]!.data).toMatchObject({ reason: 'replaced', duration_sec: 10, bytes_in: 500, bytes_out: 50, method: 'voucher' });
    expect((await buckets(redis, t))[0]).toMatchObject({ start: '2', end: '1', bin: '500', bout: '50' });
    expect((await buckets(redis, t))[1]).toMatchObject({ end: '1', dur: '10' });
    expect(await live(redis, t)).toEqual({ devices: { [mac(5)]: '1' }, ssid: { 'hs_lua|Lobby': '1' }, ap: {} });
  });

  it('live counts never go below 0: an end the start never counted (a session older than the counters) drops the field', async ({ redis, tenant: t }) => {
    const r = await startSession(redis, t, { now: T0, mac: mac(6), ssid: 'Guest' });
    // As if the session had started before the counters existed.
    await redis.del(keys.liveDevices(t), keys.liveBySsid(t));
    await end(redis, t, String(r[1]), mac(6), T0 + 5_000);
    expect(await live(redis, t)).toEqual({ devices: {}, ssid: {}, ap: {} });
  });

  it('an extension emits session.extend with the new end', async ({ redis, tenant: t }) => {
    const r = await startSession(redis, t, { now: T0, mac: mac(7), minutes: 30, method: 'sms_otp' });
    const sid = String(r[1]);
    const extended = await redis.extendSessionV3(keys.grant(t, 'hs_lua', mac(7)), keys.live(t, 'hs_lua'), keys.outbox(t), keys.events(t),
      sid, T0 + 1_000, 15, 'op_9', 'x1');
    const until = T0 + 45 * 60_000;
    expect(extended).toEqual(['extended', String(until)]);
    expect((await events(redis, t))[1]).toEqual({
      type: 'session.extend', ts: String(T0 + 1_000), site: 'hs_lua',
      data: { session_id: sid, mac: mac(7), method: 'sms_otp', hotspot_id: 'hs_lua', minutes: 15, until, by: 'op_9' },
    });
    // Not live: nothing written.
    expect(await redis.extendSessionV3(keys.grant(t, 'hs_lua', mac(8)), keys.live(t, 'hs_lua'), keys.outbox(t), keys.events(t),
      'sess_none', T0, 15, 'op_9', 'x2')).toEqual(['gone']);
    expect(await events(redis, t)).toHaveLength(2);
  });

  it("a tenant's events and counters carry only its own changes", async ({ redis, tenant: t }) => {
    const other = await luaTenant(redis);
    await startSession(redis, other, { now: T0, mac: mac(9) });
    await startSession(redis, t, { now: T0, mac: mac(9) });
    await startSession(redis, t, { now: T0, mac: mac(10) });
    expect(await events(redis, other)).toHaveLength(1);
    expect(await events(redis, t)).toHaveLength(2);
    expect((await buckets(redis, other))[0].start).toBe('1');
    expect((await buckets(redis, t))[0].start).toBe('2');
    await redis.del(...activityKeys(other, T0), keys.outbox(other), keys.grant(other, 'hs_lua', mac(9)), keys.live(other, 'hs_lua'));
  });
});
