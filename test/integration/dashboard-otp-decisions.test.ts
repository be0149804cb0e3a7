import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger, DEFAULT_MODULES, Engine, loadConfig } from '../../engine/index.js';
import { startHttp, type HttpServer } from '../../http/index.js';
import { call, keys, mac, newTenant, testEnv } from '../support/fixture.js';
import { RecordingSender } from './otp-fakes.js';

/**
 * An OTP sign-in on the engine as production wires it (the session started
 * through the sign-in pipeline, decisions to the dashboard's recorder):
 * one accept per sign-in, not one from the OTP service and another from the
 * pipeline, and the OTP service's own refusals still counted.
 */
describe('dashboard decisions of OTP sign-ins', () => {
  let engine: Engine;
  let http: HttpServer;
  let base: string;
  const sms = new RecordingSender('sms');

  beforeAll(async () => {
    // A Redis database of its own, as the other OTP files keep theirs (fallback watches are any engine's to claim).
    engine = new Engine(loadConfig(testEnv({ REDIS_URL: `${inject('redisUrl')}/6` })), createLogger('silent'), {
      actors: false, sink: false, otp: { senders: { forTenant: async (_t, ch) => (ch === 'sms' ? sms : null) } },
    });
    await engine.start();
    http = await startHttp(engine, createLogger('silent'));
    base = `http://127.0.0.1:${http.ports.main}`;
  });
  afterAll(async () => {
    http?.close();
    await engine?.close();
  });

  it('records one accept (source otp) per OTP sign-in, and the wrong code before it as a reject', async () => {
    const v = await newTenant({ engine } as never, 'OTP Venue', [...DEFAULT_MODULES, 'dashboard']);
    const put = await call(base, 'PUT', '/v1/settings/sign-in', {
      auth: v.apiKey, body: { methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', credentials_ref: `env://${v.tenantId.toUpperCase()}_NETGSM` } },
    });
    expect(put.status).toBe(200);
    const device = mac(1, 0x61);
    const body = { phone: '+905321000061', mac: device, hotspot_id: v.hotspotId };
    expect((await call(base, 'POST', '/api/v1/hotspot-portal/sms/request', { body })).status).toBe(200);
    const code = sms.last('+905321000061');
    const wrong = code === '000000' ? '111111' : '000000';
    const verify = (c: string) => call(base, 'POST', `/api/v1/hotspot-portal/sms/verify?hotspot_id=${v.hotspotId}`, { body: { phone: body.phone, code: c, mac: device } });
    expect((await verify(wrong)).body.error).toBe('otp_invalid');
    expect((await verify(code)).status).toBe(200);
    await engine.decisions.flush();

    const list = (await engine.redis.xrange(keys.decisions(v.tenantId), '-', '+'))
      .map(([, f]) => Object.fromEntries(Array.from({ length: f.length / 2 }, (_, i) => [f[2 * i], f[2 * i + 1]])));
    expect(list.map((d) => [d.outcome, d.method, d.reason, d.source])).toEqual([
      ['reject', 'sms_otp', 'otp_invalid', 'otp'], ['accept', 'sms_otp', '', 'otp']]);
    const events = (await engine.redis.xrange(keys.events(v.tenantId), '-', '+')).map(([, f]) => f[1]);
    // session.start (and device.new: the device is new to the tenant) is written by the start script at once,
    // auth.* by the recorder's next flush: their order is not fixed.
    expect([...events].sort()).toEqual(['auth.failure', 'auth.success', 'device.new', 'session.start']);
  });
});
