import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { PORTAL_METHODS } from '../../engine/index.js';
import { call, type Running, serviceTest, until } from '../support/fixture.js';

const it = serviceTest();

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const CHILLI = 'res=notyet&uamip=192.168.182.1&uamport=3660&challenge=5b1d296db7826a655411dcd83ee25154'
  + '&called=94-83-C4-01-42-27&nasid=fonlo&userurl=http%3a%2f%2fcaptive.apple.com%2fhotspot-detect.html';
const messages = (lang: string): Record<string, string> => JSON.parse(readFileSync(`web/portal/messages.${lang}.json`, 'utf8'));
const TR = messages('tr');
const EN = messages('en');
/** The catalogue's text as the page writes it (HTML-escaped). */
const html = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

interface Raw { status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }

/** A request without fetch's automatic decompression or redirects: the bytes as sent. */
function raw(base: string, path: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

describe('the captive portal page', () => {
  let svc: Running;
  const page = async (query: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> => {
    const r = await fetch(`${svc.base}/portal?${query}`, { headers });
    return { status: r.status, text: await r.text(), headers: r.headers };
  };
  /** The tenant's sign-in settings offer these methods (the page shows those both the hotspot and the tenant allow). */
  const offer = async (t: { apiKey: string }, methods: string[]): Promise<void> => {
    const r = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: t.apiKey, body: { methods } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  };
  /** A browser's no-JavaScript form post; returns the 303 and the page it points to. */
  const formPost = async (hotspotId: string, fields: Record<string, string>): Promise<{ post: Raw; text: string }> => {
    const post = await raw(svc.base, `${VERIFY}?hotspot_id=${hotspotId}`, {
      method: 'POST', body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(post.status, post.body.toString()).toBe(303);
    const location = String(post.headers.location);
    expect(location).toMatch(/^\/portal\?/);
    const r = await fetch(svc.base + location);
    return { post, text: await r.text() };
  };

  it.beforeAll(({ svc: s_ }) => {
    svc = s_;
  });

  it('speaks Turkish by default, English on ?lang=en or Accept-Language, with labels on every control', async ({ tenant: t, mac: nextMac }) => {
    const mac = nextMac();
    const tr = await page(`hotspot_id=${t.hotspotId}&mac=${mac}`);
    expect(tr.status).toBe(200);
    expect(tr.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(tr.headers.get('cache-control')).toBe('no-store');
    expect(tr.text).toContain('<html lang="tr">');
    expect(tr.text).toContain(`<label for="code">${html(TR.voucher_label!)}</label>`);
    expect(tr.text).toContain(`<input type="hidden" name="mac" value="${mac}">`);
    expect(tr.text).toContain(`action="${VERIFY}?hotspot_id=${t.hotspotId}"`);
    // A tenant with no saved sign-in settings offers the voucher only, whatever the hotspot allows.
    expect(tr.text).not.toContain('id="phone-section"');
    expect(tr.text).not.toContain('id="email-section"');
    const en = await page(`hotspot_id=${t.hotspotId}&mac=${mac}&lang=en`);
    expect(en.text).toContain('<html lang="en">');
    expect(en.text).toContain(`<label for="code">${html(EN.voucher_label!)}</label>`);
    expect((await page(`hotspot_id=${t.hotspotId}&mac=${mac}`, { 'accept-language': 'de-DE,en;q=0.8,tr;q=0.5' })).text).toContain('<html lang="en">');
    expect((await page(`hotspot_id=${t.hotspotId}&mac=${mac}`, { 'accept-language': 'en;q=0.4,tr-TR' })).text).toContain('<html lang="tr">');
    // Every id a label points to exists, and every visible input has a label.
    for (const m of tr.text.matchAll(/<label for="([^"]+)"/g)) expect(tr.text).toContain(`id="${m[1]}"`);
    for (const m of tr.text.matchAll(/<input type="(?:text|tel|email)" id="([^"]+)"/g)) expect(tr.text).toContain(`<label for="${m[1]}">`);
  });

  it('keeps the first view under 50 KB compressed (gzip), with the hotspot\'s largest logo; plain to a client that takes no gzip', async ({ tenant: t, mac: nextMac }) => {
    const logo = 'data:image/png;base64,' + Buffer.from(Array.from({ length: 17_000 }, (_, i) => (i * 7919) % 251)).toString('base64');
    await offer(t, ['voucher', 'sms_otp', 'msgapp_otp', 'email']);
    const put = await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: {
      display_name: 'Kafe', logo, methods: ['voucher', 'sms_otp', 'msgapp_otp', 'email'], terms_required: true,
      terms: { tr: 'Koşullar '.repeat(500), en: 'Terms '.repeat(500) },
    } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    for (const enc of ['gzip', 'gzip, deflate, br', 'br;q=1, *;q=0.5']) {
      const r = await raw(svc.base, `/portal?hotspot_id=${t.hotspotId}&mac=${nextMac()}&${CHILLI}`, { headers: { 'accept-encoding': enc } });
      expect(r.headers['content-encoding'], enc).toBe('gzip');
      expect(r.body.byteLength).toBeLessThanOrEqual(50 * 1024);
      const text = gunzipSync(r.body).toString();
      expect(text).toContain(logo);
      expect(text).toContain('id="phone-section"');
      expect(text).toContain('id="email-section"');
    }
    // Brotli alone, gzip refused, or nothing said: the plain page (the page is never compressed whole per guest).
    for (const headers of [{ 'accept-encoding': 'br' }, { 'accept-encoding': 'gzip;q=0, br' }, {}] as Record<string, string>[]) {
      const plain = await raw(svc.base, `/portal?hotspot_id=${t.hotspotId}&mac=${nextMac()}`, { headers });
      expect(plain.headers['content-encoding'], JSON.stringify(headers)).toBeUndefined();
      expect(plain.body.toString()).toContain(logo);
    }
  });

  it('answers a phone (gzip, deflate, br) with gzip that decodes to the plain page, each guest\'s own values in it', async ({ tenant: t, mac: nextMac }) => {
    await offer(t, ['voucher', 'sms_otp']);
    const phone = { 'accept-encoding': 'gzip, deflate, br', 'accept-language': 'en-GB,en;q=0.9' };
    // Two guests in turn: the second page reuses the first's compressed runs, and must carry its own device, query and gateway.
    for (const [mac, extra] of [[nextMac(), `&${CHILLI}`], [nextMac(), '&ssid=Kafe%22%3Cb%3E']] as const) {
      const path = `/portal?hotspot_id=${t.hotspotId}&mac=${encodeURIComponent(mac)}${extra}`;
      const zipped = await raw(svc.base, path, { headers: phone });
      expect(zipped.headers['content-encoding']).toBe('gzip');
      const plain = await raw(svc.base, path, { headers: { 'accept-language': phone['accept-language'] } });
      expect(plain.headers['content-encoding']).toBeUndefined();
      const text = gunzipSync(zipped.body).toString();
      expect(text).toBe(plain.body.toString());
      expect(text).toContain(`name="mac" value="${mac}"`);
      expect(zipped.body.byteLength).toBeLessThan(plain.body.byteLength / 2);
    }
  });

  it('shows the methods and branding the hotspot allows, and needs the terms ticked where required', async ({ tenant: t, mac: nextMac }) => {
    await offer(t, ['voucher', 'sms_otp']);
    await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: {
      display_name: 'Otel <Lobi>', primary_color: '#112233', methods: ['sms_otp'], terms_required: true, terms: { tr: 'Kurallar' },
    } } });
    const p = await page(`hotspot_id=${t.hotspotId}&mac=${nextMac()}&lang=en`);
    expect(p.text).toContain('Welcome to Otel &lt;Lobi&gt;');
    expect(p.text).toContain('--p:#112233');
    expect(p.text).not.toContain('id="voucher-form"');
    expect(p.text).toContain('<input type="hidden" name="channel" value="sms">');
    expect(p.text).toContain('Kurallar'); // no English text: the Turkish one is shown
    expect(p.text).toContain(`id="accept_terms"`);

    // The server checks the box too.
    const u = await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: { methods: ['voucher'] } } });
    expect(u.body.portal).toMatchObject({ methods: ['voucher'], terms_required: true });
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'TERMS1', max_uses: 5 } });
    const refused = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'TERMS1', mac: nextMac() } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('terms_not_accepted');
    const ok = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'TERMS1', mac: nextMac(), accept_terms: true } });
    expect(ok.status).toBe(200);
    const form = await formPost(t.hotspotId, { code: 'TERMS1', mac: nextMac(), lang: 'tr' });
    expect(form.text).toContain(html(TR.err_terms_not_accepted!));
    expect(form.text).toContain('href="#accept_terms"');
  });

  it('signs in without JavaScript: form post, 303, the page shows success and hands back to the gateway', async ({ tenant: t, mac: nextMac }) => {
    await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: { uam_secret: 'chilli-secret' } } });
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'NOJS1', max_uses: 5, duration_minutes: 60 } });
    const mac = nextMac();
    const { post, text } = await formPost(t.hotspotId, { code: 'NOJS1', mac, ip: '10.0.0.7', ssid: '', lang: 'en', gateway: CHILLI });
    expect(String(post.headers.location)).toMatch(/[?&]r=[A-Za-z0-9_-]{22}(&|$)/);
    expect(text).toContain(html(EN.success_title!));
    expect(text).not.toMatch(/id="success"[^>]* hidden/);
    expect(text).toContain('action="http://192.168.182.1:3660/logon"');
    expect(text).toMatch(/<input type="hidden" name="response" value="[0-9a-f]{32}">/);
    expect(text).toMatch(/<meta http-equiv="refresh" content="4;url=http:\/\/192\.168\.182\.1:3660\/logon\?username=g/);
    // The kept outcome is bound to the device: another MAC (or none) sees the plain form.
    const location = String(post.headers.location);
    const other = await (await fetch(svc.base + location.replace(/mac=[^&]+/, `mac=${encodeURIComponent(nextMac())}`))).text();
    expect(other).not.toContain('192.168.182.1:3660/logon');
    expect(other).toContain('id="voucher-form"');
    // The session exists for the MAC (the API lists it once the outbox sink wrote it to Postgres).
    await until(async () => (await call(svc.base, 'GET', '/v1/sessions?status=active', { auth: t.apiKey })).body.data
      .some((s: { mac: string }) => s.mac === mac), { what: 'the session listed' });
  });

  it('answers JSON callers with JSON, adding handback only when gateway parameters came along', async ({ tenant: t, mac: nextMac }) => {
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'JSON1', max_uses: 5 } });
    const plain = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'JSON1', mac: nextMac() } });
    expect(Object.keys(plain.body).sort()).toEqual(['expires_at', 'redirect_url', 'session_id', 'status', 'uses_left']);
    const nds = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, {
      body: { code: 'JSON1', mac: nextMac(), gateway: { tok: '770bfe05', gatewayaddress: '192.168.8.1:2050', redir: 'http://example.com/' } },
    });
    expect(nds.body.handback).toEqual({ method: 'GET', url: 'http://192.168.8.1:2050/opennds_auth/', fields: { tok: '770bfe05', redir: 'http://example.com/' } });
    // A form post that prefers JSON gets JSON, as before.
    const r = await raw(svc.base, `${VERIFY}?hotspot_id=${t.hotspotId}`, {
      method: 'POST', body: `code=JSON1&mac=${nextMac()}`, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.toString()).status).toBe('authorized');
  });

  it('shows every voucher error as a sentence, in Turkish and English, linked to the field', async ({ tenant: t, mac: nextMac }) => {
    const create = (body: Record<string, unknown>): Promise<unknown> => call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body });
    await create({ code: 'OLD', max_uses: 5, expires_at: '2020-01-01T00:00:00Z' });
    await create({ code: 'ONCE', max_uses: 1 });
    await create({ code: 'SSIDONLY', max_uses: 5, ssids: ['Guest'] });
    await create({ code: 'FINE', max_uses: 50 });
    await formPost(t.hotspotId, { code: 'ONCE', mac: nextMac() });
    const blocked = nextMac();
    await svc.service.engine.blocks.block(t.tenantId, blocked, '24h', 'test', null);
    const cases: [string, Record<string, string>][] = [
      ['voucher_not_found', { code: 'NOPE', mac: nextMac() }],
      ['voucher_expired', { code: 'OLD', mac: nextMac() }],
      ['voucher_exhausted', { code: 'ONCE', mac: nextMac() }],
      ['voucher_ssid_not_allowed', { code: 'SSIDONLY', mac: nextMac(), ssid: 'Staff' }],
      ['device_blocked', { code: 'FINE', mac: blocked }],
      ['invalid_mac', { code: 'FINE', mac: 'not-a-mac' }],
    ];
    for (const [code, fields] of cases) {
      for (const [lang, m] of [['tr', TR], ['en', EN]] as const) {
        const { text } = await formPost(t.hotspotId, { ...fields, lang });
        expect(text, `${code} ${lang}`).toContain(html(m[`err_${code}`]!));
        expect(text).toContain(`<html lang="${lang}">`);
        if (code.startsWith('voucher_')) expect(text).toContain('href="#code"');
      }
    }
    const unknown = await formPost('hs_nosuchhotspot00', { code: 'X', mac: nextMac(), lang: 'en' });
    expect(unknown.text).toContain(html(EN.err_hotspot_not_found!));
    expect((await page('hotspot_id=hs_nosuchhotspot00&lang=tr')).text).toContain(html(TR.err_hotspot_not_found!));
    expect((await page(`hotspot_id=${t.hotspotId}&lang=en`)).text).toContain(html(EN.device_unknown!));
  });

  it('has a sentence for every error of the voucher and OTP flows in both catalogues', () => {
    const codes = ['voucher_not_found', 'voucher_expired', 'voucher_exhausted', 'voucher_ssid_not_allowed', 'device_blocked',
      'hotspot_not_found', 'invalid_mac', 'validation_failed', 'service_unavailable', 'phone_invalid', 'phone_prefix_blocked',
      'method_not_allowed_here', 'otp_rate_limited', 'otp_send_failed', 'otp_invalid', 'otp_expired', 'otp_locked', 'terms_not_accepted'];
    for (const m of [TR, EN]) {
      for (const c of codes) expect(m[`err_${c}`], c).toMatch(/\.$/);
      expect(m.err_otp_invalid).toContain('{attempts}');
      expect(m.err_otp_rate_limited).toContain('{wait}');
      expect(m.status_resent_by_sms).toBeTruthy();
      expect(m.status_not_delivered).toBeTruthy();
    }
    expect(Object.keys(TR).sort()).toEqual(Object.keys(EN).sort());
  });

  it('keeps the UAM secret write-only on the hotspot API and validates branding', async ({ tenant: t }) => {
    const put = await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: { uam_secret: 'top-secret-1', accent_color: '#00aa00' } } });
    expect(put.status).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain('top-secret-1');
    // A hotspot that restricts nothing allows every method (the tenant's sign-in settings narrow what a guest is offered).
    expect(put.body.portal).toMatchObject({ uam_secret_set: true, accent_color: '#00aa00', methods: [...PORTAL_METHODS], uam_auth: 'chap' });
    const got = await call(svc.base, 'GET', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey });
    expect(JSON.stringify(got.body)).not.toContain('top-secret-1');
    expect(got.body.portal.uam_secret_set).toBe(true);
    const cleared = await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: { uam_secret: null } } });
    expect(cleared.body.portal.uam_secret_set).toBe(false);
    for (const bad of [{ primary_color: 'red' }, { logo: 'data:text/html;base64,PHNjcmlwdD4=' }, { logo: 'data:image/png;base64,' + 'A'.repeat(30_000) }, { methods: ['sponsor'] }]) {
      const r = await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: bad } });
      expect(r.status, JSON.stringify(bad)).toBe(400);
    }
  });
});
