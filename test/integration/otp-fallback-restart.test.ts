import { afterAll, describe, expect, it } from 'vitest';
import { mac, until } from '../support/fixture.js';
import { otpEngine, type OtpTestEngine } from './otp-fakes.js';

/**
 * Issue 10 item 5: the fallback timer survives a restart of the engine and
 * fires once, whichever process holds it.
 */
describe('OTP fallback across engine processes', () => {
  const engines: OtpTestEngine[] = [];
  afterAll(async () => {
    for (const e of engines) await e.engine.close().catch(() => undefined);
  });

  it('a watch scheduled by a process that stopped is fired by the others, exactly once', async () => {
    let clock = Date.now();
    const device = mac(1, 0x20);
    // The process that takes the request never polls (its timer is an hour) and then stops.
    const a = await otpEngine(() => clock, 3_600_000, 4);
    engines.push(a);
    const tenant = await a.engine.tenants.create(`Fallback ${Math.random().toString(36).slice(2, 8)}`);
    const hs = await a.engine.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'Europe/Istanbul' });
    await a.engine.signInSettings.put(tenant.id, {
      methods: ['msgapp_otp', 'sms_otp'], msgapp: { fallback_sms: true, fallback_timeout_sec: 30 },
    });
    const sent = await a.engine.otp.request({ hotspotId: hs.id, to: '+905321112233', channel: 'msgapp', mac: device, ip: '10.0.0.5', source: '10.0.0.5', ssid: '' });
    expect(sent.channel).toBe('msgapp');
    await a.engine.close();
    engines.shift();

    // Two fresh processes poll the same Redis; the watch is due once the clock passes 30 s.
    const b = await otpEngine(() => clock, 50, 4);
    const c = await otpEngine(() => clock, 50, 4);
    engines.push(b, c);
    await new Promise((r) => setTimeout(r, 200));
    expect(b.senders.sms.sent.length + c.senders.sms.sent.length).toBe(0);
    clock += 30_000;
    await until(async () => (await b.engine.otp.status(sent.request_id)).status === 'resent_by_sms', { what: 'the SMS fallback' });
    // The status turns first (the fallback claimed), then the SMS is handed to the sender; then a while for a second one.
    await until(async () => b.senders.sms.sent.length + c.senders.sms.sent.length > 0, { what: 'the fallback SMS sent' });
    await new Promise((r) => setTimeout(r, 300));
    const sms = [...b.senders.sms.sent, ...c.senders.sms.sent];
    expect(sms).toHaveLength(1);
    expect(sms[0]).toMatchObject({ tenantId: tenant.id, requestId: sent.request_id, to: '+905321112233' });
    expect(await c.engine.otp.status(sent.request_id)).toEqual({ status: 'resent_by_sms', channel: 'sms' });
    const ok = await c.engine.otp.verify({ hotspotId: hs.id, kind: 'phone', to: '+905321112233', code: sms[0]!.code, mac: device, ip: '', source: '10.0.0.5', ssid: '' });
    expect(ok.status).toBe('authorized');
  });
});
