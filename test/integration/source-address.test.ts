import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type Engine, type VerifiedIdentity } from '../../engine/index.js';
import { startHttp, type HttpServer } from '../../http/index.js';
import { call, mac as macOf, newTenant } from '../support/fixture.js';
import { otpEngine, type RecordingSender } from './otp-fakes.js';

/**
 * Issue 18, Build 4 over HTTP: the per-address OTP limit keys on the source
 * address (the socket's peer, or a trusted proxy's X-Forwarded-For), never on
 * the body's `ip`, which is checked as an address and only recorded.
 */
describe('the source address keys the OTP limits', () => {
  let direct: { engine: Engine; http: HttpServer; base: string; senders: Record<string, RecordingSender>; started: VerifiedIdentity[] };
  let proxied: { engine: Engine; http: HttpServer; base: string };

  beforeAll(async () => {
    const a = await otpEngine(Date.now);
    const ah = await startHttp(a.engine, createLogger('silent'));
    direct = { engine: a.engine, http: ah, base: `http://127.0.0.1:${ah.ports.main}`, senders: a.senders, started: a.started };
    // The test client is 127.0.0.1: here it stands for the operator's reverse proxy.
    const b = await otpEngine(Date.now, 50, 3, { TRUSTED_PROXIES: '127.0.0.0/8,::1' });
    const bh = await startHttp(b.engine, createLogger('silent'));
    proxied = { engine: b.engine, http: bh, base: `http://127.0.0.1:${bh.ports.main}` };
  });
  afterAll(async () => {
    direct?.http.close();
    proxied?.http.close();
    await direct?.engine.close();
    await proxied?.engine.close();
  });

  const venue = async (base: string, engine: Engine, otp: Record<string, number>) => {
    const v = await newTenant({ engine } as never);
    const put = await call(base, 'PUT', '/v1/settings/sign-in', {
      auth: v.apiKey,
      body: { methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', credentials_ref: `env://${v.tenantId.toUpperCase()}_NETGSM` }, otp },
    });
    expect(put.status).toBe(200);
    return v;
  };
  const mac = (n: number): string => macOf(n, 0x18);
  /** An SMS code request with its own headers (X-Forwarded-For lines) and body fields. */
  const request = async (base: string, hotspotId: string, phone: string, body: Record<string, unknown>, xff: string[] = []) => {
    const headers = new Headers({ 'content-type': 'application/json' });
    for (const line of xff) headers.append('x-forwarded-for', line);
    const res = await fetch(`${base}/api/v1/hotspot-portal/sms/request`, {
      method: 'POST', headers, body: JSON.stringify({ phone, mac: mac(1), hotspot_id: hotspotId, ...body }),
    });
    return { status: res.status, body: await res.json() as Record<string, unknown> };
  };

  it('rotating the body ip, the MAC and X-Forwarded-For from an untrusted peer does not reset the per-address limit', async () => {
    const v = await venue(direct.base, direct.engine, { per_ip_hourly: 3, per_mac_hourly: 10, per_prefix_hourly: 300 });
    for (let i = 0; i < 3; i++) {
      const r = await request(direct.base, v.hotspotId, `+90532200000${i}`, { ip: `10.77.0.${i}`, mac: mac(10 + i) }, [`203.0.113.${i}`]);
      expect(r.status, `send ${i}`).toBe(200);
    }
    const fourth = await request(direct.base, v.hotspotId, '+905322000009', { ip: '10.77.0.99', mac: mac(99) }, ['198.51.100.99']);
    expect(fourth.status).toBe(429);
    expect(fourth.body).toMatchObject({ error: 'otp_rate_limited', retry_after: 3600 });
  });

  it('behind a trusted proxy each client has its own limit, by the right-most untrusted hop; a hop the client wrote does not help', async () => {
    const v = await venue(proxied.base, proxied.engine, { per_ip_hourly: 2, per_mac_hourly: 10, per_prefix_hourly: 300 });
    // Client 203.0.113.1: two sends, whatever it writes to the left of its real address.
    expect((await request(proxied.base, v.hotspotId, '+905323000001', { mac: mac(21) }, ['203.0.113.1'])).status).toBe(200);
    expect((await request(proxied.base, v.hotspotId, '+905323000002', { mac: mac(22) }, ['6.6.6.6, 203.0.113.1'])).status).toBe(200);
    // A client value of its own ahead of the proxy's (fetch joins appended lines into one): the proxy's hop still wins.
    expect((await request(proxied.base, v.hotspotId, '+905323000003', { mac: mac(23) }, ['6.6.6.7', '203.0.113.1'])).status).toBe(429);
    // Another client behind the same proxy is not held by the first one's limit.
    expect((await request(proxied.base, v.hotspotId, '+905323000004', { mac: mac(24) }, ['203.0.113.2'])).status).toBe(200);
  });

  it('reads every X-Forwarded-For line: a client line sent ahead of the proxy\'s does not become the source', async () => {
    const v = await venue(proxied.base, proxied.engine, { per_ip_hourly: 1, per_mac_hourly: 10, per_prefix_hourly: 300 });
    /** One request on its own connection, X-Forwarded-For as separate header lines (fetch would join them). */
    const raw = (phone: string, lines: string[]) => new Promise<number>((resolve, reject) => {
      const body = JSON.stringify({ phone, mac: mac(60), hotspot_id: v.hotspotId });
      const sock = connect(Number(new URL(proxied.base).port), '127.0.0.1');
      let got = '';
      sock.on('data', (d) => { got += d.toString(); });
      sock.on('error', reject);
      sock.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(got)?.[1] ?? 0)));
      sock.write([
        'POST /api/v1/hotspot-portal/sms/request HTTP/1.1', 'Host: portal', 'Content-Type: application/json', 'Connection: close',
        ...lines.map((l) => `X-Forwarded-For: ${l}`), `Content-Length: ${Buffer.byteLength(body)}`, '', body,
      ].join('\r\n'));
    });
    expect(await raw('+905326000001', ['203.0.113.30'])).toBe(200);
    // The same client again, with a line of its own naming someone else first: still 203.0.113.30, and limited.
    expect(await raw('+905326000002', ['198.51.100.31', '203.0.113.30'])).toBe(429);
  });

  it('the per-MAC limit counts a claimed MAC per hotspot: exhausting it at one hotspot does not lock the device out of another', async () => {
    const v = await venue(direct.base, direct.engine, { per_ip_hourly: 100, per_mac_hourly: 1, per_prefix_hourly: 300 });
    const hall = await direct.engine.hotspots.create(v.tenantId, { name: 'Hall', timezone: 'Europe/Istanbul' });
    expect((await request(direct.base, v.hotspotId, '+905325000001', { mac: mac(50) })).status).toBe(200);
    const again = await request(direct.base, v.hotspotId, '+905325000002', { mac: mac(50) });
    expect(again.status).toBe(429);
    expect((await request(direct.base, hall.id, '+905325000003', { mac: mac(50) })).status).toBe(200);
  });

  it('the body ip is an IPv4 or IPv6 address or nothing (400 validation_failed otherwise), recorded canonically', async () => {
    const v = await venue(direct.base, direct.engine, { per_ip_hourly: 100 });
    for (const ip of ['=1+1', 'not an ip', '10.0.0.256', '@SUM(A1)']) {
      const r = await request(direct.base, v.hotspotId, '+905324000001', { ip });
      expect(r.status, ip).toBe(400);
      expect(r.body, ip).toMatchObject({ error: 'validation_failed', message: expect.stringContaining('ip') });
      const voucher = await call(direct.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${v.hotspotId}`, { body: { code: 'ABCD', mac: mac(2), ip } });
      expect(voucher.status, ip).toBe(400);
      expect(voucher.body, ip).toMatchObject({ error: 'validation_failed' });
    }
    expect((await request(direct.base, v.hotspotId, '+905324000002', { ip: '' })).status).toBe(200);
    expect((await request(direct.base, v.hotspotId, '+905324000003', { ip: '2001:DB8:0::7', mac: mac(3) })).status).toBe(200);
    const code = direct.senders.sms!.last('+905324000003');
    const ok = await call(direct.base, 'POST', `/api/v1/hotspot-portal/sms/verify?hotspot_id=${v.hotspotId}`,
      { body: { phone: '+905324000003', code, mac: mac(3), ip: '2001:DB8:0::7' } });
    expect(ok.status).toBe(200);
    expect(direct.started.at(-1)).toMatchObject({ mac: mac(3), ip: '2001:db8::7' });
  });

  it('the portal page puts only an address into its form (a garbled ?ip= would make every form post a 400)', async () => {
    const v = await newTenant({ engine: direct.engine } as never);
    const page = await fetch(`${direct.base}/portal?hotspot_id=${v.hotspotId}&mac=${mac(4)}&ip=${encodeURIComponent('=HYPERLINK("x")')}`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('name="ip" value=""');
    const good = await (await fetch(`${direct.base}/portal?hotspot_id=${v.hotspotId}&mac=${mac(4)}&ip=10.5.6.7`)).text();
    expect(good).toContain('name="ip" value="10.5.6.7"');
  });
});
