import { Redis } from 'ioredis';
import { describe, expect, inject } from 'vitest';
import { EVENT_FIELD } from '../../engine/events/types.js';
import { defineScripts } from '../../engine/redis/scripts.js';
import { OtpStore } from '../../engine/signin/otp/otp-store.js';
import { freshSessionId, putVoucher, startSession, useVoucher } from '../fixtures/lua-voucher.js';
import { keys, luaTenant, luaTest as it, mac } from '../support/lua.js';

/** The tenant's device.new events' data, oldest first. */
async function deviceNew(redis: Redis, t: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for (const [, f] of await redis.xrange(keys.events(t), '-', '+')) {
    const m: Record<string, string> = {};
    for (let i = 0; i + 1 < f.length; i += 2) m[f[i]!] = f[i + 1]!;
    if (m[EVENT_FIELD.type] === 'device.new') out.push({ site: m[EVENT_FIELD.site], ts: m[EVENT_FIELD.ts], ...JSON.parse(m[EVENT_FIELD.data]!) });
  }
  return out;
}

/**
 * device.new (includes/session-start.lua, in use-voucher-18, use-otp-14 and
 * start-session-13): the first session of a MAC at any of a tenant's
 * hotspots, by any method, announces the device once per tenant, whatever
 * number of sign-ins race for it from whatever number of connections.
 */
describe('device.new: once per tenant and MAC', () => {
  const T0 = 1_800_000_000_000;

  it('N concurrent first sign-ins of one MAC, by voucher and by a pre-checked method, from two connections: exactly one device.new', async ({ redis, tenant: t }) => {
    const other = new Redis(inject('redisUrl'));
    defineScripts(other);
    try {
      await putVoucher(redis, t, 'DEV-RACE', { id: 'vch_race', max: -1 });
      const m = mac(40);
      const N = 24;
      // Each at its own hotspot, so every one really starts a session (no live session given back).
      const runs = Array.from({ length: N }, (_, i) => {
        const conn = i % 2 === 0 ? redis : other;
        const a = { now: T0 + i, mac: m, hotspot: `hs_race${i}` };
        return i % 3 === 0 ? startSession(conn, t, { ...a, method: 'sponsor', user: 'host@example.com' }) : useVoucher(conn, t, 'DEV-RACE', a);
      });
      const answers = await Promise.all(runs);
      expect(answers.every((a) => a[0] === 'ok')).toBe(true);
      const seen = await deviceNew(redis, t);
      expect(seen).toHaveLength(1);
      // The one that ran first: its first-seen time is what the known-devices hash holds.
      const first = await redis.hget(keys.knownDevices(t), m);
      expect(seen[0]).toEqual({
        site: seen[0]!.hotspot_id, ts: first, mac: m, hotspot_id: expect.stringMatching(/^hs_race\d+$/),
        session_id: expect.stringMatching(/^sess_/), method: expect.stringMatching(/^(voucher|sponsor)$/), first_seen: Number(first),
      });
      expect(await redis.hlen(keys.knownDevices(t))).toBe(1);
    } finally {
      other.disconnect();
    }
  });

  it('another tenant seeing the same MAC gets its own device.new', async ({ redis, tenant: t }) => {
    const t2 = await luaTenant(redis);
    const m = mac(41);
    await startSession(redis, t, { now: T0, mac: m });
    await startSession(redis, t, { now: T0 + 1, mac: m, hotspot: 'hs_other' });
    await startSession(redis, t2, { now: T0 + 2, mac: m });
    expect(await deviceNew(redis, t)).toEqual([expect.objectContaining({ mac: m, method: 'sms_otp', first_seen: T0 })]);
    expect(await deviceNew(redis, t2)).toEqual([expect.objectContaining({ mac: m, first_seen: T0 + 2 })]);
    await redis.del(keys.events(t2), keys.knownDevices(t2), keys.loaded(t2));
  });

  it('an OTP sign-in announces a new device too; a device seen by any method before is not new', async ({ redis, tenant: t }) => {
    const store = new OtpStore(redis);
    const phone = '+905321111112';
    const useCode = async (m: string, now: number) => {
      await redis.hset(keys.otpCode(t, 'hs_lua', phone), 'h', 'a'.repeat(64), 'tries', 0, 'exp', now + 300_000, 'rid', 'r1', 'ch', 'sms');
      return store.use({
        tenantId: t, hotspotId: 'hs_lua', identity: phone, hash: 'a'.repeat(64), mac: m, ip: '10.3.0.1', ssid: 'Guest', sessionId: freshSessionId(), now,
        terms: [{ channel: 'sms', method: 'sms_otp', minutes: 30, idleSec: 0, downKbps: 0, upKbps: 0, quotaMb: 0, sessionQuotaMb: 0, profile: '' }],
      });
    };
    expect(await useCode(mac(42), T0)).toMatchObject({ kind: 'started' });
    await putVoucher(redis, t, 'DEV-SEEN', { id: 'vch_seen', max: -1 });
    expect((await useVoucher(redis, t, 'DEV-SEEN', { now: T0 + 1, mac: mac(43) }))[0]).toBe('ok');
    // Both known now: a voucher for the first, a code for the second, adds no event.
    expect((await useVoucher(redis, t, 'DEV-SEEN', { now: T0 + 2, mac: mac(42), hotspot: 'hs_two' }))[0]).toBe('ok');
    expect(await useCode(mac(43), T0 + 3)).toMatchObject({ kind: 'started' });
    expect((await deviceNew(redis, t)).map((d) => [d.mac, d.method])).toEqual([[mac(42), 'sms_otp'], [mac(43), 'voucher']]);
  });

  it('a refused sign-in sees no device: no event, nothing remembered', async ({ redis, tenant: t }) => {
    await redis.set(keys.block(t, mac(44)), '1');
    expect((await startSession(redis, t, { now: T0, mac: mac(44) }))[0]).toBe('blocked');
    expect((await useVoucher(redis, t, 'NO-SUCH', { now: T0, mac: mac(45) }))[0]).toBe('not_found');
    expect(await deviceNew(redis, t)).toEqual([]);
    expect(await redis.exists(keys.knownDevices(t))).toBe(0);
  });
});
