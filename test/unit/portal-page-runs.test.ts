import { describe, expect, it } from 'vitest';
import { PORTAL_METHODS, type HotspotRef, type PortalRecord } from '../../engine/index.js';
import { loadAssets, renderPage } from '../../http/routes/portal-page.js';

/**
 * The page's runs (even places) are what http/gzip-runs.ts compresses once and keeps: a value
 * that is a guest's own must be in portal-page.ts's PER_REQUEST list, or every guest's page
 * makes new runs (each compressed again, and the kept ones pushed out). Two guests of one
 * hotspot, in every shape of the page a guest meets, must share every run.
 */
const ref: HotspotRef = {
  id: 'hs_runs', tenantId: 'tn_runs', name: 'Runs', timezone: 'Europe/Istanbul', redirectUrl: null, sessionMinutes: null, uamSecret: null,
  portal: {
    display_name: 'Kafe', logo: 'data:image/png;base64,' + 'A'.repeat(3000), primary_color: '#112233', accent_color: null,
    terms: { tr: 'Kurallar', en: 'Rules' }, terms_required: true, methods: [...PORTAL_METHODS], gateway: null, uam_auth: 'chap', uam_secret_set: false,
  },
};

interface Guest { mac: string; ip: string; ssid: string; userurl: string; code: string; challenge: string }
const guests: Guest[] = [
  { mac: 'AA:BB:CC:DD:EE:01', ip: '10.0.0.5', ssid: 'Kafe', userurl: 'http://captive.apple.com/hotspot-detect.html', code: 'ABC123', challenge: '5b1d296db7826a655411dcd83ee25154' },
  { mac: 'AA:BB:CC:DD:EE:02', ip: '10.0.9.77', ssid: 'Kafe "Misafir" <5G>', userurl: 'http://example.org/a?b=c&d=e', code: 'XYZ', challenge: '0123456789abcdef0123456789abcdef' },
];

function page(g: Guest, lang: 'tr' | 'en', record: PortalRecord | null): string[] {
  const query = new URLSearchParams({
    hotspot_id: ref.id, mac: g.mac, ip: g.ip, ssid: g.ssid, lang, code: g.code,
    res: 'notyet', uamip: '192.168.182.1', uamport: '3660', challenge: g.challenge, called: '94-83-C4-01-42-27', nasid: 'fonlo', userurl: g.userurl,
  });
  return renderPage(assets, {
    lang, query, ref, hotspotId: ref.id, record, errorCode: null, tenantMethods: [...PORTAL_METHODS], sponsor: { offered: true, waiting: false }, room: true,
  });
}

const record = (g: Guest, lang: 'tr' | 'en', ok: boolean, handback: boolean): PortalRecord => ({
  hs: ref.id, mac: g.mac, lang, ip: g.ip, ssid: g.ssid, gateway: `res=notyet&uamip=192.168.182.1&uamport=3660&challenge=${g.challenge}&userurl=${encodeURIComponent(g.userurl)}`,
  code: g.code,
  outcome: ok
    ? { ok: true, body: {
      status: 'authorized', expires_at: new Date(Date.now() + guests.indexOf(g) * 7_200_000 + 3_600_000).toISOString(), redirect_url: g.userurl,
      ...(handback ? { handback: { method: 'GET', url: `http://192.168.182.1:3660/logon?n=${g.ip}`, fields: { username: g.mac, response: g.challenge } } } : {}),
    } }
    : { ok: false, status: 404, body: { error: g === guests[0] ? 'voucher_not_found' : 'voucher_expired', message: 'refused' } },
});

const assets = loadAssets();

describe('the portal page\'s runs', () => {
  for (const lang of ['tr', 'en'] as const) {
    for (const [shape, rec, hb] of [['first view', null, false], ['a refused code', false, false], ['signed in', true, false], ['signed in, handed back', true, true]] as const) {
      it(`are the same for two guests: ${shape}, ${lang}`, () => {
        const [a, b] = guests.map((g) => page(g, lang, rec === null ? null : record(g, lang, rec, hb)));
        expect(a!.length).toBe(b!.length);
        for (let i = 0; i < a!.length; i += 2) expect(b![i], `run ${i} of ${a!.length}`).toBe(a![i]);
        // Each page carries its own guest's values, and only in the per-request places.
        expect(a!.join('')).toContain(guests[0]!.mac);
        expect(b!.join('')).toContain(guests[1]!.mac);
        expect(a!.filter((_, i) => i % 2 === 0).join('')).not.toContain(guests[0]!.mac);
      });
    }
  }
});
