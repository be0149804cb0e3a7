import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { serverRunId } from '../../engine/redis/scripts.js';
import { OtpStore, type ChannelTerms, type UseOutcome } from '../../engine/signin/otp/otp-store.js';
import { outbox, freshSessionId } from '../fixtures/lua-voucher.js';
import { keys, luaTenant, luaTest as it, mac } from '../support/lua.js';

const T0 = 1_800_000_000_000;
const GOOD = 'a'.repeat(64);
const BAD = 'b'.repeat(64);
const PHONE = '+905321111111';
const HS = 'hs_lua';

const TERMS: ChannelTerms[] = [
  { channel: 'sms', method: 'sms_otp', minutes: 45, idleSec: 600, downKbps: 4000, upKbps: 1000, quotaMb: 300, sessionQuotaMb: 50, profile: 'phone' },
  { channel: 'msgapp', method: 'msgapp_otp', minutes: 90, idleSec: 0, downKbps: 0, upKbps: 0, quotaMb: 0, sessionQuotaMb: 0, profile: '' },
];

/**
 * use-otp-14.lua: the code check and the session start in one script. A code
 * is used once, dies after 5 wrong tries and is dead past its validity; it is
 * consumed if and only if the session starts, and the start is the shared
 * method-neutral one (grant, live entry, ref, session_start record).
 */
describe('use-otp-14.lua', () => {
  let redis: Redis;
  let store: OtpStore;
  it.beforeAll(({ redis: r }) => { redis = r; store = new OtpStore(r); });

  const code = async (t: string, ch = 'sms'): Promise<string> => {
    const k = keys.otpCode(t, HS, PHONE);
    await redis.hset(k, 'h', GOOD, 'tries', 0, 'exp', T0 + 300_000, 'rid', 'r1', 'ch', ch);
    return k;
  };
  const use = (t: string, hash: string, now = T0, device = mac(1), terms = TERMS, sessionId = freshSessionId()): Promise<UseOutcome> => store.use({
    tenantId: t, hotspotId: HS, identity: PHONE, hash, mac: device, ip: '10.3.0.1', ssid: 'Guest', sessionId, now, terms,
  });

  it('the right code is consumed exactly once, and starts the session with the terms of the channel that carried it', async ({ tenant: t }) => {
    const k = await code(t, 'msgapp');
    const r = await use(t, GOOD);
    const until = T0 + 90 * 60_000;
    expect(r).toEqual({ kind: 'started', sessionId: expect.stringMatching(/^sess_/), untilMs: until, replaced: '', method: 'msgapp_otp', requestId: 'r1' });
    expect(await redis.exists(k)).toBe(0);
    expect(await use(t, GOOD)).toEqual({ kind: 'expired' });
    const sid = r.kind === 'started' ? r.sessionId : '';
    expect(await redis.hgetall(keys.grant(t, HS, mac(1)))).toMatchObject({ sid, method: 'msgapp_otp', user: PHONE, until: String(until), idle: '0', profile: '' });
    expect(await redis.zscore(keys.live(t, HS), sid)).toBe(String(until));
    expect(await redis.get(keys.sessionRef(t, sid))).toBe(`${HS} ${mac(1)}`);
    expect(await outbox(redis, t)).toEqual([{
      type: 'session_start', sid, hs: HS, mac: mac(1), ip: '10.3.0.1', ssid: 'Guest', at: String(T0), until: String(until),
      user: PHONE, method: 'msgapp_otp', vid: '',
    }]);
  });

  it('the same call again (a resend after a lost answer) is answered its session, not an expired code, and starts nothing more', async ({ tenant: t }) => {
    await code(t, 'sms');
    const sid = freshSessionId();
    const first = await use(t, GOOD, T0, mac(2), TERMS, sid);
    expect(first).toMatchObject({ kind: 'started', sessionId: sid, replaced: '' });
    const again = await use(t, GOOD, T0, mac(2), TERMS, sid);
    expect(again).toEqual({ ...first, requestId: '' });
    expect((await outbox(redis, t)).filter((r) => r.type === 'session_start')).toHaveLength(1);
    // Another verify (its own session id) of the used code is what it always was.
    expect(await use(t, GOOD, T0, mac(2))).toEqual({ kind: 'expired' });
  });

  it('an SMS code takes the SMS terms', async ({ tenant: t }) => {
    await code(t, 'sms');
    const r = await use(t, GOOD);
    expect(r).toMatchObject({ kind: 'started', method: 'sms_otp', untilMs: T0 + 45 * 60_000 });
    expect(await redis.hgetall(keys.grant(t, HS, mac(1)))).toMatchObject({
      method: 'sms_otp', down: '4000', up: '1000', quota: '300', squota: '50', idle: '600', profile: 'phone',
    });
  });

  it('counts wrong tries down; the fifth kills the code, even for the right code after', async ({ tenant: t }) => {
    const k = await code(t);
    for (let left = 4; left >= 1; left--) expect(await use(t, BAD)).toEqual({ kind: 'invalid', attemptsLeft: left });
    expect(await use(t, BAD)).toEqual({ kind: 'locked' });
    expect(await use(t, GOOD)).toEqual({ kind: 'locked' });
    // Dead until it expires: then there is no live code at all.
    expect(await use(t, GOOD, T0 + 300_000)).toEqual({ kind: 'expired' });
    expect(await redis.exists(k)).toBe(0);
    expect(await outbox(redis, t)).toEqual([]);
  });

  it('a code is dead at 300 s and alive just before', async ({ tenant: t }) => {
    const k = await code(t);
    expect(await use(t, GOOD, T0 + 300_000)).toEqual({ kind: 'expired' });
    expect(await redis.exists(k)).toBe(0);
    await code(t);
    expect(await use(t, GOOD, T0 + 299_999)).toMatchObject({ kind: 'started', method: 'sms_otp' });
  });

  it('no code ever sent is expired; a hash of another length never matches', async ({ tenant: t }) => {
    expect(await store.use({
      tenantId: t, hotspotId: HS, identity: '+905329999999', hash: GOOD, mac: mac(1), ip: '', ssid: '', sessionId: freshSessionId(), now: T0, terms: TERMS,
    })).toEqual({ kind: 'expired' });
    await code(t);
    expect(await use(t, GOOD.slice(0, 63))).toEqual({ kind: 'invalid', attemptsLeft: 4 });
    expect(await use(t, GOOD + 'a')).toEqual({ kind: 'invalid', attemptsLeft: 3 });
  });

  it('leaves the code alive when the device may not start (blocked, tenant not loaded): consumed only with a start', async () => {
    const t = await luaTenant(redis, false);
    const k = await code(t);
    expect(await use(t, GOOD)).toEqual({ kind: 'not_loaded', runId: await serverRunId(redis) });
    await redis.set(keys.loaded(t), await serverRunId(redis));
    await redis.set(keys.block(t, mac(1)), 'permanent');
    expect(await use(t, GOOD)).toEqual({ kind: 'blocked' });
    expect(await redis.hget(k, 'tries')).toBe('0');
    expect(await redis.exists(keys.grant(t, HS, mac(1)), keys.live(t, HS))).toBe(0);
    expect(await outbox(redis, t)).toEqual([]);
    // A wrong code is still counted for a blocked device, as before.
    expect(await use(t, BAD)).toEqual({ kind: 'invalid', attemptsLeft: 4 });
    // Another device, not blocked, uses the code.
    expect(await use(t, GOOD, T0, mac(2))).toMatchObject({ kind: 'started' });
    expect(await redis.exists(k)).toBe(0);
  });

  it('is an error, changing nothing, when no terms are given for the channel the code went by', async ({ tenant: t }) => {
    const k = await code(t, 'email');
    await expect(use(t, GOOD)).rejects.toThrow(/use-otp: no terms for channel email/);
    expect(await redis.exists(k)).toBe(1);
    expect(await outbox(redis, t)).toEqual([]);
  });
});
