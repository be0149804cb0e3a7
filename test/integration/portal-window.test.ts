import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { call, type Running, serviceTest } from '../support/fixture.js';

const it = serviceTest();
const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const messages = (lang: string): Record<string, string> => JSON.parse(readFileSync(`web/portal/messages.${lang}.json`, 'utf8'));
const html = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** A no-JavaScript form post: the 303's location. */
function formPost(base: string, hotspotId: string, fields: Record<string, string>): Promise<{ status: number; location: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${VERIFY}?hotspot_id=${hotspotId}`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, location: String(res.headers.location) }));
    });
    req.on('error', reject);
    req.end(new URLSearchParams(fields).toString());
  });
}

/**
 * Issue 20 item 5 on the portal page without JavaScript: a match-day voucher
 * tried before its window is refused in words, in Turkish and English, with
 * the start in the hotspot's zone (the fixture's hotspot is in Europe/Istanbul,
 * UTC+3: 17:45Z is 20:45 there), linked to the code field; no use counted.
 */
describe('the portal page refuses a voucher before its window, in words', () => {
  let svc: Running;
  it.beforeAll(({ svc: s }) => { svc = s; });

  it('says when the code starts working, in both languages, at the hotspot\'s clock', async ({ tenant: t, mac: nextMac }) => {
    const made = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'KICKOFF', valid_from: '2031-05-04T17:45:00Z' } });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const trExpected = '4 Mayıs 20:45 itibarıyla kullanılabilir.';
    for (const lang of ['en', 'tr'] as const) {
      const post = await formPost(svc.base, t.hotspotId, { code: 'KICKOFF', mac: nextMac(), lang });
      expect(post.status).toBe(303);
      const text = await (await fetch(svc.base + post.location)).text();
      const m = messages(lang);
      const [before] = m.err_voucher_not_yet_valid!.split('{from}');
      expect(text, lang).toContain(html(before!));
      // ICU writes the English date "4 May at 20:45" or "4 May, 20:45" by version: the zone's hour is what matters.
      expect(text, lang).toMatch(lang === 'en' ? /It works from 4 May(?: at|,) 20:45\./ : new RegExp(trExpected.replace(/\./g, '\\.')));
      expect(text).toContain('href="#code"');
    }
    const read = await call(svc.base, 'GET', `/v1/vouchers/${made.body.id}`, { auth: t.apiKey });
    expect(read.body.current_uses).toBe(0);
  });
});
