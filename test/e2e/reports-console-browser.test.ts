import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect } from 'vitest';
import { DEFAULT_MODULES } from '../../engine/tenants/tenant-service.js';
import { launchDesktop, requireChromium, type PhoneBrowser } from '../support/browser.js';
import { call, newTenant, newVoucher, serviceTest, type Running, type Tenant } from '../support/fixture.js';
import { macs } from '../support/macs.js';
import { until } from '../support/poll.js';

const it = serviceTest();
const SHOTS = join('test-artifacts', 'console');
const NARROW = { width: 375, height: 812 } as const;

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const ANDROID = 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Mobile Safari/537.36';

type Lang = 'en' | 'tr';
/** yyyy-mm-dd in Istanbul, the zone of both venues here. */
const istanbulDay = (ms: number): string => new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Istanbul' }).format(ms);
const WORDS = {
  en: { apiKey: 'API key', signIn: 'Sign in', nav: 'Reports', period: 'Period', yesterday: 'Yesterday', empty: 'No sessions in this period.',
    multiRefused: 'needs the multi-venue module', csv: 'Sessions as CSV', pdf: 'Report as PDF', pdfMissing: 'does not offer that export yet' },
  tr: { apiKey: 'API anahtarı', signIn: 'Giriş yap', nav: 'Raporlar', period: 'Dönem', yesterday: 'Dün', empty: 'Bu dönemde oturum yok.',
    multiRefused: 'çoklu mekân modülünü gerektirir', csv: 'Oturumlar (CSV)', pdf: 'Rapor (PDF)', pdfMissing: 'henüz sunmuyor' },
} as const;

interface Report {
  period: { from: string; to: string };
  summary: { total_sessions: number; unique_devices: number; signins_succeeded: number; signins_failed: number; peak_hour: string | null; avg_duration_minutes: number };
  ssids: { ssid: string; sessions: number }[];
  top_devices: { mac: string; sessions: number }[];
  methods: { method: string; sessions: number; attempts: number; succeeded: number; failed: number }[];
  guests: { visitors: number };
}

/**
 * The console's Reports page in Debian's Chromium against the real API: guests
 * sign in through the portal's verify call (two venues, an iPhone and an
 * Android, one wrong code), the page's figures are checked against GET
 * /api/v1/reports/console, then a preset and the venues are switched, the CSV
 * is downloaded, and a tenant without multi_venue is refused in words.
 * Screenshots in both languages, desktop and 375 px wide, in test-artifacts/console/.
 */
describe('console: reports page', () => {
  const browsers: PhoneBrowser[] = [];
  afterAll(async () => { for (const b of browsers) await b.close(); });

  async function open(base: string, apiKey: string, lang: Lang, viewport?: { width: number; height: number }, before?: (page: Page) => Promise<unknown>): Promise<Page> {
    requireChromium();
    mkdirSync(SHOTS, { recursive: true });
    const browser = await launchDesktop(viewport);
    browsers.push(browser);
    const page = await browser.context.newPage();
    await page.goto(`${base}/console`);
    await page.evaluate((l) => localStorage.setItem('gw.lang', l), lang);
    await page.reload();
    await page.getByLabel(WORDS[lang].apiKey).fill(apiKey);
    await page.getByRole('button', { name: WORDS[lang].signIn }).click();
    await before?.(page);
    await page.getByRole('navigation').getByRole('link', { name: WORDS[lang].nav, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: WORDS[lang].nav }).waitFor({ timeout: 10_000 });
    return page;
  }

  const api = async (svc: Running, t: Tenant, q: string): Promise<Report> => {
    const r = await call(svc.base, 'GET', `/api/v1/reports/console?${q}`, { auth: t.apiKey });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as Report;
  };
  const kpi = async (page: Page, id: string): Promise<string> => ((await page.locator(`[data-kpi="${id}"] .value`).textContent()) ?? '').trim();
  /** The figures the page shows once the status line names the period and venues the API answered with. */
  async function shows(page: Page, r: Report, locale: string): Promise<void> {
    const n = (x: number): string => x.toLocaleString(locale);
    await expect.poll(() => kpi(page, 'total_sessions'), { timeout: 10_000 }).toBe(n(r.summary.total_sessions));
    expect(await kpi(page, 'unique_devices')).toBe(n(r.summary.unique_devices));
    expect(await kpi(page, 'signins_succeeded')).toBe(n(r.summary.signins_succeeded));
    expect(await kpi(page, 'signins_failed')).toBe(n(r.summary.signins_failed));
    expect(await kpi(page, 'visitors')).toBe(n(r.guests.visitors));
    if (r.summary.peak_hour) expect(await kpi(page, 'peak_hour')).toBe(r.summary.peak_hour);
  }

  async function guest(svc: Running, hotspotId: string, code: string, m: string, ua: string, ssid: string): Promise<number> {
    const res = await fetch(`${svc.base}/api/v1/hotspot-portal/voucher/verify`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': ua },
      body: JSON.stringify({ hotspot_id: hotspotId, code, mac: m, ip: '10.1.2.3', ssid }),
    });
    await res.arrayBuffer();
    return res.status;
  }

  /**
   * The venues and their guests, made once for the file's tests (each test its own browser and page): the Pro tenant,
   * its Lobby (three devices on two SSIDs, one wrong code) and Terrace (one device), and the Lobby's report as the API
   * tells it once the sign-ins are in.
   */
  interface Seeded { t: Tenant; terraceId: string; lobby: Report; seededOn: string }
  let seeded: Promise<Seeded> | undefined;
  const seed = (svc: Running): Promise<Seeded> => (seeded ??= seedVenues(svc));

  async function seedVenues(svc: Running): Promise<Seeded> {
    const t = await newTenant(svc.service, 'Reports Pro Venue', [...DEFAULT_MODULES, 'multi_venue']);
    const terrace = await svc.service.engine.hotspots.create(t.tenantId, { name: 'Terrace café', timezone: 'Europe/Istanbul' });
    const v = await newVoucher(svc.base, t);
    // Lobby: three devices on two SSIDs; Terrace: one. And one wrong code at the Lobby.
    const next = macs();
    const [a, b, c, d] = [next(), next(), next(), next()];
    // The venues' local day the guests sign in on (both venues are in Istanbul): "yesterday" is empty only while it is before that day.
    const seededOn = istanbulDay(Date.now());
    expect(await guest(svc, t.hotspotId, v.code, a, IPHONE, 'Guest')).toBe(200);
    expect(await guest(svc, t.hotspotId, v.code, b, ANDROID, 'Guest')).toBe(200);
    expect(await guest(svc, t.hotspotId, v.code, d, IPHONE, 'Guest-5G')).toBe(200);
    expect(await guest(svc, terrace.id, v.code, c, ANDROID, 'Terrace')).toBe(200);
    expect(await guest(svc, t.hotspotId, 'NO-SUCH-CODE', b, ANDROID, 'Guest')).not.toBe(200);
    const lobbyQ = `preset=last_7_days&hotspot_id=${t.hotspotId}`;
    let lobby = await api(svc, t, lobbyQ);
    await until(async () => {
      await svc.service.engine.signInMover.runOnce();
      lobby = await api(svc, t, lobbyQ);
      return lobby.summary.total_sessions === 3 && lobby.summary.signins_failed === 1;
    }, { what: 'the Lobby sessions and the failed sign-in in the report', seen: () => lobby.summary });
    expect(lobby.summary).toMatchObject({ total_sessions: 3, unique_devices: 3 });
    return { t, terraceId: terrace.id, lobby, seededOn };
  }

  it('English, desktop: the figures match the API, the CSV and the PDF download, presets and venues switch', async ({ svc }) => {
    const { t, terraceId, lobby, seededOn } = await seed(svc);
    // English, desktop: the Lobby's last 7 days, as the API tells them.
    const page = await open(svc.base, t.apiKey, 'en');
    await shows(page, lobby, 'en-GB');
    expect(await page.getByRole('cell', { name: 'Guest-5G', exact: true }).isVisible()).toBe(true);
    const masked = lobby.top_devices[0]!.mac;
    expect(masked).toMatch(/:\*\*:\*\*$/);
    // Masked MACs may coincide (the test's MACs differ only in the hidden octets): one row each all the same.
    expect(await page.getByRole('cell', { name: masked, exact: true }).count()).toBe(lobby.top_devices.filter((x) => x.mac === masked).length);
    const voucherRow = page.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Voucher', exact: true }) });
    const vm = lobby.methods.find((m) => m.method === 'voucher')!;
    expect((await voucherRow.getByRole('cell').allTextContents()).slice(0, 4)).toEqual([vm.sessions, vm.attempts, vm.succeeded, vm.failed].map(String));
    await page.screenshot({ path: join(SHOTS, 'reports-en.png'), fullPage: true });

    // The CSV of the period: a header row and the Lobby's three sessions.
    const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: WORDS.en.csv }).click()]);
    const csv = readFileSync((await dl.path())!, 'utf8').trimEnd().split('\n');
    expect(csv[0]).toMatch(/^session_id,hotspot_id,/);
    expect(csv).toHaveLength(4);
    // The PDF: downloaded where the service offers it, else a sentence says so; the page goes on either way.
    const [pdf] = await Promise.all([
      Promise.race([
        page.waitForEvent('download', { timeout: 20_000 }).then((d) => d.suggestedFilename()).catch(() => null),
        page.getByText(WORDS.en.pdfMissing).waitFor({ timeout: 20_000 }).then(() => 'missing').catch(() => null),
      ]),
      page.getByRole('button', { name: WORDS.en.pdf }).click(),
    ]);
    expect(pdf === 'missing' || /\.pdf$/.test(pdf ?? '')).toBe(true);

    // Another preset: yesterday had nothing, and the page says so in words. The page's own answer is the one checked, and
    // which days it covers decides what it holds: if the venue's midnight passed since the guests signed in, their day is now yesterday.
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/api/v1/reports/console?') && r.url().includes('preset=yesterday')),
      page.getByRole('combobox', { name: WORDS.en.period, exact: true }).selectOption('yesterday'),
    ]);
    const yesterday = await answer.json() as Report;
    await shows(page, yesterday, 'en-GB');
    if (yesterday.period.to < seededOn) {
      expect(yesterday.summary.total_sessions).toBe(0);
      await page.getByText(WORDS.en.empty).first().waitFor();
    }
    await page.getByRole('combobox', { name: WORDS.en.period, exact: true }).selectOption('last_7_days');

    // Both venues, ticked from the keyboard: the sums; then the Terrace alone.
    await page.getByRole('checkbox', { name: 'Terrace café' }).focus();
    await page.keyboard.press('Space');
    await shows(page, await api(svc, t, `preset=last_7_days&hotspot_id=${t.hotspotId},${terraceId}`), 'en-GB');
    expect(await kpi(page, 'total_sessions')).toBe('4');
    await page.getByRole('checkbox', { name: 'Lobby' }).uncheck();
    await shows(page, await api(svc, t, `preset=last_7_days&hotspot_id=${terraceId}`), 'en-GB');
    expect(await kpi(page, 'total_sessions')).toBe('1');
    await page.close();
  });

  it('Turkish, desktop: the sections hold their place while the first report loads', async ({ svc }) => {
    const { t, lobby } = await seed(svc);
    // Turkish, desktop: the sections hold their place while the first report loads (the answer held back until measured).
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    const tr = await open(svc.base, t.apiKey, 'tr', undefined, (p) => p.route('**/api/v1/reports/console?*', async (route) => { await held; await route.continue(); }));
    await tr.getByRole('checkbox', { name: 'Lobby' }).waitFor();
    await tr.getByText('Rapor yükleniyor…').waitFor();
    const daily = tr.getByRole('heading', { level: 2, name: 'Günlük oturumlar' });
    const before = (await daily.boundingBox())!;
    release();
    await shows(tr, lobby, 'tr-TR');
    expect((await daily.boundingBox())!.y).toBe(before.y);
    await tr.screenshot({ path: join(SHOTS, 'reports-tr.png'), fullPage: true });
    await tr.close();
  });

  it('narrow, in both languages: nothing is wider than the screen', async ({ svc }) => {
    const { t, lobby } = await seed(svc);
    for (const [lang, name] of [['tr', 'reports-tr-narrow'], ['en', 'reports-en-narrow']] as const) {
      const p = await open(svc.base, t.apiKey, lang, NARROW);
      await shows(p, lobby, lang === 'tr' ? 'tr-TR' : 'en-GB');
      // Nothing wider than the screen but the tables that scroll in their own box.
      expect(await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      await p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
      await p.close();
    }
  });

  it('a tenant without multi_venue is told in words why two venues are refused', async ({ svc }) => {
    const t = await newTenant(svc.service, 'Reports Basic Venue');
    await svc.service.engine.hotspots.create(t.tenantId, { name: 'Garden', timezone: 'Europe/Istanbul' });
    const refused = await call(svc.base, 'GET', `/api/v1/reports/console?hotspot_id=${t.hotspotId},x`, { auth: t.apiKey });
    expect([refused.status, refused.body.error]).toEqual([403, 'module_not_licensed']);
    for (const lang of ['en', 'tr'] as const) {
      const page = await open(svc.base, t.apiKey, lang);
      await expect.poll(() => kpi(page, 'total_sessions'), { timeout: 10_000 }).toBe('0');
      await page.getByRole('checkbox', { name: 'Garden' }).check();
      await page.getByRole('alert').filter({ hasText: WORDS[lang].multiRefused }).waitFor({ timeout: 10_000 });
      await page.screenshot({ path: join(SHOTS, `reports-refused-${lang}.png`), fullPage: true });
      // One venue again: the report comes back.
      await page.getByRole('checkbox', { name: 'Lobby' }).uncheck();
      await expect.poll(() => kpi(page, 'total_sessions'), { timeout: 10_000 }).toBe('0');
      expect(await page.getByRole('alert').filter({ hasText: WORDS[lang].multiRefused }).count()).toBe(0);
      await page.close();
    }
  });
});
