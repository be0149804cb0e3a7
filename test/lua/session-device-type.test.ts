import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { activityKeys } from '../../engine/events/activity-keys.js';
import { OtpStore } from '../../engine/signin/otp/otp-store.js';
import { freshSessionId, outbox, putVoucher } from '../fixtures/lua-voucher.js';
import { keys, luaTest as it, mac } from '../support/lua.js';

const T0 = 1_800_000_000_000;
const HS = 'hs_lua';

/**
 * The device type the browser claimed rides in the session_start record
 * (`dt`) of every method's start script, and is left out when unknown (a
 * RADIUS sign-in, a sponsor's approval).
 */
describe('session start carries the device type', () => {
  let redis: Redis;
  it.beforeAll(({ redis: r }) => { redis = r; });

  it('use-voucher-18.lua: ARGV[13]', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'DT1', { id: 'vch_dt1', max: 5 });
    const sid = freshSessionId();
    const m = mac(1, 0x3d);
    const use = (device: string | undefined, who: string) => redis.useVoucherV9(keys.voucher(t, 'DT1'), keys.voucherDevices(t, 'DT1'), keys.grant(t, HS, who), keys.outbox(t),
      keys.loaded(t), keys.live(t, HS), keys.sessionRef(t, sid), keys.block(t, who), ...activityKeys(t, T0), keys.guessesByDevice(t, HS, who),
      keys.guessesByAddress(t, ''), keys.guessRefusals(t, 0), keys.knownDevices(t), T0, who, HS, '10.0.0.9', '', sid, 60, 0, 0, 0, 600_000, 1_200_000, device);
    expect((await use('ios', m))[0]).toBe('ok');
    expect((await use(undefined, mac(2, 0x3d)))[0]).toBe('ok');
    const [first, second] = await outbox(redis, t);
    expect(first).toMatchObject({ type: 'session_start', dt: 'ios' });
    expect(second).not.toHaveProperty('dt');
  });

  it('start-session-13.lua: ARGV[16]', async ({ tenant: t }) => {
    const m = mac(3, 0x3d);
    const sid = freshSessionId();
    const a = await redis.startSessionV3(keys.grant(t, HS, m), keys.outbox(t), keys.loaded(t), keys.live(t, HS), keys.sessionRef(t, sid), keys.block(t, m),
      ...activityKeys(t, T0), keys.knownDevices(t), T0, m, HS, '', '', sid, 60, 0, 'email', 'a@b.example', 0, 0, 0, 0, '', 'windows');
    expect(a[0]).toBe('ok');
    expect(await outbox(redis, t)).toMatchObject([{ type: 'session_start', method: 'email', dt: 'windows' }]);
  });

  it('use-otp-14.lua (V3): ARGV[10], the method groups after it', async ({ tenant: t }) => {
    const phone = '+905321112233';
    await redis.hset(keys.otpCode(t, HS, phone), 'h', 'a'.repeat(64), 'tries', 0, 'exp', T0 + 300_000, 'rid', 'r1', 'ch', 'sms');
    const r = await new OtpStore(redis).use({
      tenantId: t, hotspotId: HS, identity: phone, hash: 'a'.repeat(64), mac: mac(4, 0x3d), ip: '', ssid: '', sessionId: freshSessionId(), now: T0,
      device: 'android',
      terms: [{ channel: 'sms', method: 'sms_otp', minutes: 30, idleSec: 0, downKbps: 0, upKbps: 0, quotaMb: 0, sessionQuotaMb: 0, profile: '' }],
    });
    expect(r).toMatchObject({ kind: 'started', method: 'sms_otp' });
    expect(await outbox(redis, t)).toMatchObject([{ type: 'session_start', method: 'sms_otp', dt: 'android' }]);
  });
});
