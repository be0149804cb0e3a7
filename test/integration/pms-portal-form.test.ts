import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FiasSimulator } from '../support/fias-simulator.js';
import { call, macs, newTenant, startService, until, type Running, type Tenant } from '../support/fixture.js';

/**
 * The portal page's room form (web/portal/page.html, http/routes/portal-page.ts):
 * shown only where the hotspot has a PMS link, labelled in Turkish and
 * English, and working without JavaScript: a form post answered with a 303
 * to the page, which shows the outcome.
 */

const messages = (lang: string): Record<string, string> => JSON.parse(readFileSync(`web/portal/messages.${lang}.json`, 'utf8'));
const html = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
const randomMac = macs();

function formPost(base: string, path: string, fields: Record<string, string>): Promise<{ status: number; location: string }> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, location: String(res.headers.location ?? '') }));
    });
    req.on('error', reject);
    req.end(new URLSearchParams(fields).toString());
  });
}

describe('the room form on the portal page', () => {
  let svc: Running;
  let sim: FiasSimulator;
  let hotel: Tenant;
  let plain: Tenant;

  beforeAll(async () => {
    svc = await startService({ PMS_HOLD_LINKS: 'true', PMS_KEEPALIVE_SEC: '1', PMS_LEASE_MS: '1500' });
    sim = await FiasSimulator.start();
    sim.checkIn({ reservation: 'P1', room: '612', name: 'ÇELİK, M' });
    hotel = await newTenant(svc.service, 'Hotel');
    plain = await newTenant(svc.service, 'Cafe');
    const put = await call(svc.base, 'PUT', `/v1/hotspots/${hotel.hotspotId}/pms`, { auth: hotel.apiKey, body: { host: '127.0.0.1', port: sim.port } });
    expect(put.status).toBe(200);
    await until(async () => (await call(svc.base, 'GET', `/v1/hotspots/${hotel.hotspotId}/pms`, { auth: hotel.apiKey })).body.status.accepting_sign_ins === true);
  });
  afterAll(async () => {
    await svc?.stop();
    await sim?.close();
  });

  const page = async (t: Tenant, query: string): Promise<string> => (await fetch(`${svc.base}/portal?hotspot_id=${t.hotspotId}&${query}`)).text();

  it('shows a labelled room form in both languages where the hotspot has a PMS link, and none elsewhere', async () => {
    for (const lang of ['tr', 'en']) {
      const m = messages(lang);
      const text = await page(hotel, `mac=${randomMac()}&lang=${lang}`);
      expect(text).toContain(`action="/api/v1/hotspot-portal/pms/verify?hotspot_id=${hotel.hotspotId}"`);
      expect(text).toContain(`<label for="room-number">${html(m.room_label!)}</label>`);
      expect(text).toContain(`<label for="surname">${html(m.surname_label!)}</label>`);
      expect(text).toMatch(/<input type="text" id="room-number" name="room" required/);
      expect(text).toMatch(/<input type="text" id="surname" name="surname" required[^>]*autocomplete="family-name"/);
    }
    expect(await page(plain, `mac=${randomMac()}`)).not.toContain('<form id="room-form"');
  });

  it('signs in without JavaScript: the form post gets a 303 and the page shows success; a wrong surname shows its sentence at the field', async () => {
    const mac = randomMac();
    const ok = await formPost(svc.base, `/api/v1/hotspot-portal/pms/verify?hotspot_id=${hotel.hotspotId}`, { room: '612', surname: 'Celik', mac, lang: 'en' });
    expect(ok.status).toBe(303);
    const done = await (await fetch(svc.base + ok.location)).text();
    expect(done).toContain(html(messages('en').success_title!));
    expect(done).not.toMatch(/<div class="panel" id="success" hidden>/);

    const bad = await formPost(svc.base, `/api/v1/hotspot-portal/pms/verify?hotspot_id=${hotel.hotspotId}`, { room: '612', surname: 'Yilmaz', mac: randomMac(), lang: 'tr' });
    expect(bad.status).toBe(303);
    const err = await (await fetch(svc.base + bad.location)).text();
    expect(err).toContain(`<a id="error-link" href="#room-number">${html(messages('tr').err_pms_guest_not_found!)}</a>`);
    expect(err).toContain('<p class="msg" id="room-error">');
  });
});
