import { describe, expect } from 'vitest';
import { type Answer, call, serviceTest, until } from '../support/fixture.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const SETTINGS = '/v1/settings/sign-in';

const test = serviceTest();

/**
 * The voucher guessing limits over HTTP: the portal's 429 too_many_attempts
 * with retry_after and a Retry-After header, even for a valid code, with
 * nothing spent; the per-address limit keyed on the socket's peer, not the
 * body's ip; the limits as tenant settings; the counter of limits that bite.
 */
describe('voucher guessing limits on the portal', () => {
  const verify = (base: string, hotspotId: string, body: Record<string, unknown>): Promise<Answer> =>
    call(base, 'POST', `${VERIFY}?hotspot_id=${hotspotId}`, { body });

  test('refuses a device after 10 unknown codes with 429, retry_after and Retry-After, a valid code too, spending nothing', async ({ svc, redis, keys, tenant: t, voucher, mac }) => {
    const device = mac();
    const first = Date.now();
    for (let i = 0; i < 10; i++) {
      // The body's ip changes every time: it is no key of any limit.
      const r = await verify(svc.base, t.hotspotId, { code: `WRONG-${i}`, mac: device, ip: `10.1.0.${i + 1}` });
      expect(r.status, JSON.stringify(r.body)).toBe(404);
    }
    const limited = await verify(svc.base, t.hotspotId, { code: voucher.code, mac: device, ip: '10.1.0.99' });
    const elapsed = Math.ceil((Date.now() - first) / 1000);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: 'too_many_attempts', message: expect.any(String), retry_after: expect.any(Number) });
    // Truthful: the first guess leaves the 600 s window that long after it was made.
    expect(limited.body.retry_after).toBeLessThanOrEqual(600);
    expect(limited.body.retry_after).toBeGreaterThanOrEqual(600 - elapsed);
    expect(limited.headers.get('retry-after')).toBe(String(limited.body.retry_after));

    const v = await call(svc.base, 'GET', `/v1/vouchers/${voucher.id}`, { auth: t.apiKey });
    expect(v.body.current_uses).toBe(0);
    expect(await redis.exists(keys.grant(t.tenantId, t.hotspotId, device))).toBe(0);

    // Another device is not limited by this one's guesses.
    expect((await verify(svc.base, t.hotspotId, { code: voucher.code, mac: mac() })).status).toBe(200);
    expect(await svc.service.engine.metrics.render()).toMatch(/^guestwifi_voucher_guess_limited_total\{limit="device",via="portal"\} [1-9]/m);
  });

  test('an expired or used-up code is no guess', async ({ svc, tenant: t, voucher, mac }) => {
    const once = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: `ONCE-${t.hotspotId}`, max_uses: 1 } });
    const old = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: `OLD-${t.hotspotId}`, max_uses: 5, expires_at: '2020-01-01T00:00:00Z' } });
    expect((await verify(svc.base, t.hotspotId, { code: once.body.code, mac: mac() })).status).toBe(200);
    const device = mac();
    for (let i = 0; i < 12; i++) {
      expect((await verify(svc.base, t.hotspotId, { code: once.body.code, mac: device })).status).toBe(409);
      expect((await verify(svc.base, t.hotspotId, { code: old.body.code, mac: device })).status).toBe(410);
    }
    expect((await verify(svc.base, t.hotspotId, { code: voucher.code, mac: device })).status).toBe(200);
  });

  test('limits a source address (the socket peer) across devices, per the tenant settings; the wait is let through when it ends', async ({ svc, tenant: t, voucher, mac }) => {
    const defaults = await call(svc.base, 'GET', SETTINGS, { auth: t.apiKey });
    expect(defaults.body.guessing).toEqual({ per_device: 10, per_address: 300, window_sec: 600, incident_refusals: 50 });
    const put = await call(svc.base, 'PUT', SETTINGS, { auth: t.apiKey, body: { guessing: { per_address: 3, window_sec: 2 } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.guessing).toEqual({ per_device: 10, per_address: 3, window_sec: 2, incident_refusals: 50 });

    const first = Date.now();
    for (let i = 0; i < 3; i++) expect((await verify(svc.base, t.hotspotId, { code: `NOPE-${i}`, mac: mac(), ip: `10.2.0.${i}` })).status).toBe(404);
    const limited = await verify(svc.base, t.hotspotId, { code: voucher.code, mac: mac(), ip: '10.2.0.200' });
    expect(limited.status).toBe(429);
    expect(limited.body.retry_after).toBeGreaterThanOrEqual(1);
    expect(limited.body.retry_after).toBeLessThanOrEqual(2);
    expect(limited.headers.get('retry-after')).toBe(String(limited.body.retry_after));
    expect(await svc.service.engine.metrics.render()).toMatch(/^guestwifi_voucher_guess_limited_total\{limit="address",via="portal"\} [1-9]/m);

    // Refused attempts are no guesses: polling does not prolong the wait, and the first guess leaving the window ends it.
    const device = mac();
    await until(async () => (await verify(svc.base, t.hotspotId, { code: voucher.code, mac: device })).status === 200);
    expect(Date.now() - first).toBeGreaterThanOrEqual(2000);
  });

  test('the limits are validated tenant settings; 0 turns one off', async ({ svc, tenant: t, voucher, mac }) => {
    for (const bad of [{ per_device: -1 }, { window_sec: 0 }, { per_address: 1.5 }, { unknown: 1 }]) {
      const r = await call(svc.base, 'PUT', SETTINGS, { auth: t.apiKey, body: { guessing: bad } });
      expect(r.status, JSON.stringify(bad)).toBe(400);
      expect(r.body.error).toBe('validation_failed');
    }
    expect((await call(svc.base, 'PUT', SETTINGS, { auth: t.apiKey, body: { guessing: { per_device: 0, per_address: 0 } } })).status).toBe(200);
    const device = mac();
    for (let i = 0; i < 15; i++) expect((await verify(svc.base, t.hotspotId, { code: `OFF-${i}`, mac: device })).status).toBe(404);
    expect((await verify(svc.base, t.hotspotId, { code: voucher.code, mac: device })).status).toBe(200);
  });

  test('creation answers say what the codes are worth: 40 bits by default, a warning for a shorter format or a short chosen code', async ({ svc, tenant: t }) => {
    const batch = await call(svc.base, 'POST', '/api/v1/vouchers', { auth: t.apiKey, body: { count: 3, format: { charset: 'numeric' } } });
    expect(batch.status).toBe(201);
    expect(batch.body.vouchers.map((v: { code: string }) => v.code.length)).toEqual([13, 13, 13]);
    expect([batch.body.entropy_bits, batch.body.warnings]).toEqual([43.1, []]);
    const short = await call(svc.base, 'POST', '/api/v1/vouchers', { auth: t.apiKey, body: { count: 3, format: { charset: 'numeric', length: 4 } } });
    expect(short.status).toBe(201);
    expect(short.body.vouchers[0].code).toMatch(/^[0-9]{4}$/);
    expect(short.body.entropy_bits).toBe(13.2);
    expect(short.body.warnings).toEqual([{ code: 'weak_codes', message: expect.any(String) }]);
    const generated = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: {} });
    expect([generated.body.code.length, generated.body.entropy_bits, generated.body.warnings]).toEqual([9, 44.5, []]);
    const chosen = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'abc' } });
    expect(chosen.status).toBe(201);
    expect(chosen.body.warnings).toEqual([{ code: 'weak_codes', message: expect.stringContaining('at most 14.1 bits') }]);
  });

  test('a browser without JavaScript is told, in its language, how long to wait', async ({ svc, tenant: t, voucher, mac }) => {
    await call(svc.base, 'PUT', SETTINGS, { auth: t.apiKey, body: { guessing: { per_device: 1 } } });
    const device = mac();
    expect((await verify(svc.base, t.hotspotId, { code: 'NOT-IT', mac: device })).status).toBe(404);
    const post = await fetch(`${svc.base}${VERIFY}?hotspot_id=${t.hotspotId}`, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams({ code: voucher.code, mac: device, lang: 'en' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    });
    expect(post.status).toBe(303);
    const page = await (await fetch(svc.base + post.headers.get('location'))).text();
    expect(page).toMatch(/Too many codes were tried from this device\. Wait (\d+) seconds and try again\./);
    expect(Number(/Wait (\d+) seconds/.exec(page)![1])).toBeGreaterThan(500);
  });
});
