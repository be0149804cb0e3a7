import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger, type Engine, type OtpDecision, type VerifiedIdentity } from '../../engine/index.js';
import { startHttp, type HttpServer } from '../../http/index.js';
import { call, keys, mac as macOf, newTenant, until } from '../support/fixture.js';
import { otpEngine, type RecordingSender } from './otp-fakes.js';

/**
 * OTP sign-in over HTTP (issue 10 contract) on an engine with recording
 * senders, a session starter that only records, and a clock the test moves.
 */
describe('OTP sign-in over the portal', () => {
  let engine: Engine;
  let http: HttpServer;
  let base: string;
  let clock = Date.now();
  let senders: Record<'sms' | 'msgapp' | 'email', RecordingSender>;
  let started: VerifiedIdentity[];
  let decisions: OtpDecision[];

  beforeAll(async () => {
    // A Redis database of its own (23): this file moves its clock, and the fallback watches it makes are
    // claimed by any engine's poller on the same database (otp-fakes.ts).
    ({ engine, senders, started, decisions } = await otpEngine(() => clock, 50, 23));
    http = await startHttp(engine, createLogger('silent'));
    base = `http://127.0.0.1:${http.ports.main}`;
  });
  afterAll(async () => {
    http?.close();
    await engine?.close();
  });
  beforeEach(() => {
    for (const s of Object.values(senders)) s.refuse = false;
  });

  /** A tenant whose hotspot offers the OTP methods, with `extra` settings. */
  const venue = async (extra: Record<string, unknown> = {}) => {
    const v = await newTenant({ engine } as never);
    const put = await call(base, 'PUT', '/v1/settings/sign-in', {
      auth: v.apiKey,
      body: { methods: ['voucher', 'sms_otp', 'msgapp_otp', 'email'], sms: { provider: 'netgsm', credentials_ref: `env://${v.tenantId.toUpperCase()}_NETGSM` }, ...extra },
    });
    expect(put.status).toBe(200);
    return v;
  };
  const mac = (n: number): string => macOf(n, 0x10);
  const request = (hotspotId: string, phone: string, o: Record<string, unknown> = {}) =>
    call(base, 'POST', '/api/v1/hotspot-portal/sms/request', { body: { phone, mac: mac(1), hotspot_id: hotspotId, ...o } });
  const verify = (hotspotId: string, phone: string, code: string, o: Record<string, unknown> = {}) =>
    call(base, 'POST', `/api/v1/hotspot-portal/sms/verify?hotspot_id=${hotspotId}`, { body: { phone, code, mac: mac(1), ...o } });

  it('sends a code by SMS and signs the device in with it exactly once', async () => {
    const { hotspotId, tenantId } = await venue();
    const r = await request(hotspotId, '+90 532 100 00 01');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'sent', channel: 'sms', expires_in: 300, request_id: expect.stringMatching(/^otp_/) });
    const code = senders.sms.last('+905321000001');
    expect(code).toMatch(/^[0-9]{6}$/);
    // The code itself is nowhere in Redis: only its keyed hash.
    const stored = await engine.redis.hgetall(keys.otpCode(tenantId, hotspotId, '+905321000001'));
    expect(Object.values(stored)).not.toContain(code);

    const ok = await verify(hotspotId, '+905321000001', code, { ip: '10.1.2.3', ssid: 'Lobby' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'authorized', session_id: expect.stringMatching(/^sess_/), uses_left: null, redirect_url: null });
    expect(started.at(-1)).toEqual({ tenantId, hotspotId, mac: mac(1), ip: '10.1.2.3', ssid: 'Lobby', method: 'sms_otp', username: '+905321000001' });
    expect(decisions.at(-1)).toMatchObject({ tenantId, outcome: 'accept', method: 'sms_otp' });

    const again = await verify(hotspotId, '+905321000001', code);
    expect(again.status).toBe(410);
    expect(again.body.error).toBe('otp_expired');
    expect(decisions.at(-1)).toMatchObject({ outcome: 'reject', reason: 'otp_expired' });
  });

  it('refuses a code after 5 wrong tries, right code included', async () => {
    const { hotspotId } = await venue();
    await request(hotspotId, '+905321000002');
    const code = senders.sms.last('+905321000002');
    const wrong = code === '000000' ? '000001' : '000000';
    for (let left = 4; left >= 1; left--) {
      const r = await verify(hotspotId, '+905321000002', wrong);
      expect(r.status).toBe(401);
      expect(r.body).toMatchObject({ error: 'otp_invalid', attempts_left: left });
    }
    expect((await verify(hotspotId, '+905321000002', wrong)).status).toBe(423);
    const locked = await verify(hotspotId, '+905321000002', code);
    expect(locked.status).toBe(423);
    expect(locked.body.error).toBe('otp_locked');
  });

  it('refuses a code past 300 s (moved clock) and takes it just before', async () => {
    const { hotspotId } = await venue();
    await request(hotspotId, '+905321000003');
    clock += 300_000;
    expect((await verify(hotspotId, '+905321000003', senders.sms.last('+905321000003'))).status).toBe(410);
    clock += 60_000;
    await request(hotspotId, '+905321000003');
    clock += 299_000;
    expect((await verify(hotspotId, '+905321000003', senders.sms.last('+905321000003'))).status).toBe(200);
  });

  it('limits sends per phone (cool-down, with Retry-After), per client IP and per prefix', async () => {
    const { hotspotId } = await venue({ otp: { cooldown_sec: 60, per_ip_hourly: 3, per_prefix_hourly: 5, per_mac_hourly: 0 } });
    expect((await request(hotspotId, '+905331000001', { ip: '10.9.0.1' })).status).toBe(200);
    const soon = await request(hotspotId, '+905331000001', { ip: '10.9.0.2' });
    expect(soon.status).toBe(429);
    expect(soon.body).toMatchObject({ error: 'otp_rate_limited', retry_after: 60 });
    expect(soon.headers.get('retry-after')).toBe('60');

    // Per source address (the socket's peer, whatever the body's ip says: issue 18): two more phones pass, the fourth send does not.
    expect((await request(hotspotId, '+905341000002', { ip: '10.9.0.1' })).status).toBe(200);
    expect((await request(hotspotId, '+905351000003', { ip: '10.9.0.1' })).status).toBe(200);
    const ipLimited = await request(hotspotId, '+905361000004', { ip: '10.9.0.1' });
    expect(ipLimited.status).toBe(429);
    expect(ipLimited.body.retry_after).toBe(3600);

    // Per prefix (+90537), at a venue whose per-address limit has room: five numbers pass, the sixth is refused.
    const roomy = await venue({ otp: { cooldown_sec: 60, per_ip_hourly: 100, per_prefix_hourly: 5, per_mac_hourly: 0 } });
    for (let i = 0; i < 5; i++) expect((await request(roomy.hotspotId, `+90537100001${i}`, { ip: `10.8.0.${i}` })).status).toBe(200);
    expect((await request(roomy.hotspotId, '+905371000019', { ip: '10.8.0.9' })).status).toBe(429);
    expect(decisions.at(-1)).toMatchObject({ outcome: 'reject', reason: 'otp_rate_limited' });
  });

  it('refuses bad numbers, blocked prefixes and methods the tenant does not offer', async () => {
    const { hotspotId } = await venue({ allowed_prefixes: ['+90'], blocked_prefixes: ['+90850'] });
    expect((await request(hotspotId, '0532 100 00 01')).body.error).toBe('phone_invalid');
    const foreign = await request(hotspotId, '+442079460958');
    expect([foreign.status, foreign.body.error]).toEqual([403, 'phone_prefix_blocked']);
    expect((await request(hotspotId, '+908501000001')).body.error).toBe('phone_prefix_blocked');

    const plain = await newTenant({ engine } as never);
    const r = await request(plain.hotspotId, '+905321000009');
    expect([r.status, r.body.error]).toEqual([403, 'method_not_allowed_here']);
    const e = await call(base, 'POST', '/api/v1/hotspot-portal/email/request', { body: { email: 'a@example.com', mac: mac(1), hotspot_id: plain.hotspotId } });
    expect([e.status, e.body.error]).toEqual([403, 'method_not_allowed_here']);
  });

  it('a refused send is 502 otp_send_failed, saying nothing of the provider or credentials', async () => {
    const { hotspotId } = await venue();
    senders.sms.refuse = true;
    const r = await request(hotspotId, '+905321000010');
    expect(r.status).toBe(502);
    expect(r.body.error).toBe('otp_send_failed');
    expect(JSON.stringify(r.body)).not.toMatch(/credential|fake|NETGSM|30/);
    expect(decisions.at(-1)).toMatchObject({ outcome: 'reject', reason: 'otp_send_failed' });
    expect((await call(base, 'GET', `/api/v1/hotspot-portal/sms/status?request_id=${encodeURIComponent(await lastRequestId(hotspotId))}`)).body.status).toBe('not_delivered');
  });

  /** The request id of the last send the status route knows, from the request state in Redis. */
  const lastRequestId = async (hotspotId: string): Promise<string> => {
    const ref = await engine.hotspots.ref(hotspotId);
    const prefix = keys.otpRequest(ref!.tenantId, '');
    const ids = await engine.redis.keys(`${prefix}*`);
    return ids.at(-1)!.slice(prefix.length);
  };

  it('msgapp not delivered in time: the code goes by SMS, the status says so, and the SMS code signs in', async () => {
    const { hotspotId } = await venue({ msgapp: { fallback_sms: true, fallback_timeout_sec: 30 } });
    const r = await request(hotspotId, '+905321000020', { channel: 'msgapp' });
    expect(r.body).toMatchObject({ status: 'sent', channel: 'msgapp' });
    const status = () => call(base, 'GET', `/api/v1/hotspot-portal/sms/status?request_id=${encodeURIComponent(r.body.request_id)}`);
    expect((await status()).body).toEqual({ status: 'sent', channel: 'msgapp' });
    const msgappCode = senders.msgapp.last('+905321000020');
    const smsBefore = senders.sms.sent.length;
    clock += 30_000;
    await until(async () => (await status()).body.status === 'resent_by_sms');
    expect((await status()).body).toEqual({ status: 'resent_by_sms', channel: 'sms' });
    // The status turns first (the fallback claimed), then the SMS is handed to the sender.
    await until(async () => senders.sms.sent.length > smsBefore, { what: 'the fallback SMS sent' });
    expect(senders.sms.sent.length).toBe(smsBefore + 1);
    const smsCode = senders.sms.last('+905321000020');
    if (smsCode !== msgappCode) expect((await verify(hotspotId, '+905321000020', msgappCode)).status).toBe(401);
    const ok = await verify(hotspotId, '+905321000020', smsCode);
    expect(ok.status).toBe(200);
    expect(started.at(-1)).toMatchObject({ method: 'sms_otp', username: '+905321000020' });
  });

  it('a delivery callback cancels the fallback; the msgapp code signs in as msgapp_otp', async () => {
    const { hotspotId, tenantId } = await venue({ msgapp: { fallback_sms: true, fallback_timeout_sec: 30 } });
    const r = await request(hotspotId, '+905321000021', { channel: 'msgapp' });
    await engine.otp.delivered(tenantId, r.body.request_id, 'msgapp');
    const smsBefore = senders.sms.sent.length;
    clock += 31_000;
    await new Promise((res) => setTimeout(res, 300));
    expect(senders.sms.sent.length).toBe(smsBefore);
    expect((await call(base, 'GET', `/api/v1/hotspot-portal/sms/status?request_id=${encodeURIComponent(r.body.request_id)}`)).body)
      .toEqual({ status: 'delivered', channel: 'msgapp' });
    expect((await verify(hotspotId, '+905321000021', senders.msgapp.last('+905321000021'))).status).toBe(200);
    expect(started.at(-1)).toMatchObject({ method: 'msgapp_otp' });
  });

  it('with fallback off the attempt ends not_delivered and its code dies', async () => {
    const { hotspotId } = await venue({ msgapp: { fallback_sms: false, fallback_timeout_sec: 5 } });
    const r = await request(hotspotId, '+905321000022', { channel: 'msgapp' });
    clock += 5_000;
    const status = () => call(base, 'GET', `/api/v1/hotspot-portal/sms/status?request_id=${encodeURIComponent(r.body.request_id)}`);
    await until(async () => (await status()).body.status === 'not_delivered');
    expect((await status()).body.channel).toBe('msgapp');
    expect((await verify(hotspotId, '+905321000022', senders.msgapp.last('+905321000022'))).status).toBe(410);
  });

  it('msgapp refused outright goes by SMS at once when fallback is on', async () => {
    const { hotspotId } = await venue({ msgapp: { fallback_sms: true, fallback_timeout_sec: 30 } });
    senders.msgapp.refuse = true;
    const r = await request(hotspotId, '+905321000023', { channel: 'msgapp' });
    expect(r.body).toMatchObject({ status: 'sent', channel: 'sms' });
    expect((await call(base, 'GET', `/api/v1/hotspot-portal/sms/status?request_id=${encodeURIComponent(r.body.request_id)}`)).body)
      .toEqual({ status: 'resent_by_sms', channel: 'sms' });
    expect((await verify(hotspotId, '+905321000023', senders.sms.last('+905321000023'))).status).toBe(200);
  });

  it('e-mail codes: same rules, channel email, plain form posts accepted', async () => {
    const { hotspotId } = await venue();
    const r = await call(base, 'POST', '/api/v1/hotspot-portal/email/request', { body: { email: ' Guest@Example.com', mac: mac(2), hotspot_id: hotspotId } });
    expect(r.body).toMatchObject({ status: 'sent', channel: 'email', expires_in: 300 });
    const code = senders.email.last('guest@example.com');
    const form = await fetch(`${base}/api/v1/hotspot-portal/email/verify`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ email: 'guest@example.com', code, mac: mac(2), hotspot_id: hotspotId }).toString(),
    });
    expect(form.status).toBe(200);
    expect(started.at(-1)).toMatchObject({ method: 'email', username: 'guest@example.com', mac: mac(2) });
    expect((await call(base, 'POST', '/api/v1/hotspot-portal/email/request', { body: { email: 'nope', mac: mac(2), hotspot_id: hotspotId } })).body.error)
      .toBe('email_invalid');
  });

  it('settings: references only, defaults filled in, the secret itself refused', async () => {
    const v = await newTenant({ engine } as never);
    const empty = await call(base, 'GET', '/v1/settings/sign-in', { auth: v.apiKey });
    expect(empty.body).toMatchObject({ methods: ['voucher'], sms: null, msgapp: { fallback_sms: false, fallback_timeout_sec: 30 }, otp: { cooldown_sec: 60 } });
    const own = v.tenantId.toUpperCase();
    const put = await call(base, 'PUT', '/v1/settings/sign-in', {
      auth: v.apiKey,
      body: { methods: ['sms_otp'], sms: { provider: 'netgsm', credentials_ref: `env://${own}_NETGSM` }, msgapp: { api_key_ref: `env://${own}_MSGAPP`, fallback_sms: true }, blocked_prefixes: ['+882'] },
    });
    expect(put.status).toBe(200);
    const got = await call(base, 'GET', '/v1/settings/sign-in', { auth: v.apiKey });
    expect(got.body).toMatchObject({ methods: ['sms_otp'], sms: { credentials_ref: `env://${own}_NETGSM` }, msgapp: { api_key_ref: `env://${own}_MSGAPP`, fallback_sms: true, fallback_timeout_sec: 30 }, blocked_prefixes: ['+882'] });
    // A tenant names only its own variables: never the service's (DATABASE_URL would go to the carrier as a password) nor another tenant's.
    for (const ref of ['env://DATABASE_URL', 'env://JWT_SECRET', `env://${own}_`, 'env://TN_SOMEONEELSE_NETGSM']) {
      const r = await call(base, 'PUT', '/v1/settings/sign-in', { auth: v.apiKey, body: { sms: { provider: 'netgsm', credentials_ref: ref } } });
      expect(r.status, ref).toBe(400);
      expect(r.body.error).toBe('validation_failed');
    }
    const mail = await call(base, 'PUT', '/v1/settings/sign-in', { auth: v.apiKey, body: { email: { smtp_url_ref: 'env://SMTP_URL' } } });
    expect(mail.status).toBe(400);
    const secret = await call(base, 'PUT', '/v1/settings/sign-in', { auth: v.apiKey, body: { sms: { provider: 'netgsm', credentials_ref: 'user:pass' } } });
    expect(secret.status).toBe(400);
    expect(secret.body.error).toBe('validation_failed');
    expect((await call(base, 'PUT', '/v1/settings/sign-in', { body: { methods: [] } })).status).toBe(401);
  });
});
