import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, CDPSession, Locator, Page } from 'playwright-core';
import { expect } from 'vitest';
import { launchDesktop, requireChromium, type PhoneBrowser } from './browser.js';
import { call } from './service.js';

/**
 * Driving the operations dashboard (web/dashboard/) in the browser of
 * browser.ts: signing in, reading a tile, measuring what the first view
 * transferred and how much JavaScript heap the page holds.
 */

/** Where the dashboard's screenshots go (test artefacts). */
export const DASH_SHOTS = join('test-artifacts', 'dashboard');
export const WALL_VIEWPORT = { width: 1920, height: 1080 } as const;

export type Lang = 'en' | 'tr';

/** The words the test drives the page by, in each language (the page's catalogue, web/dashboard/messages.ts). */
export const WORDS = {
  en: { apiKey: 'API key', signIn: 'Sign in', language: 'Language', heading: 'Operations dashboard', active: 'Active sessions',
    guests: 'Active guests', authOk: 'Sign-in success, 24 h', authFail: 'Sign-in failures, 24 h', live: 'Live sessions', activeNow: 'Active now',
    incidents: 'Incident queue', queue: 'Incidents in the queue', triage: 'Triage', confirm: 'Yes, go ahead', triaging: 'Triaging',
    stale: 'Data is stale', liveFigures: 'Live figures', notLicensed: 'The dashboard is not included in your package' },
  tr: { apiKey: 'API anahtarı', signIn: 'Giriş yap', language: 'Dil', heading: 'Operasyon panosu', active: 'Etkin oturumlar',
    guests: 'Etkin misafirler', authOk: 'Giriş başarısı, 24 sa', authFail: 'Başarısız girişler, 24 sa', live: 'Canlı oturumlar', activeNow: 'Şu an etkin',
    incidents: 'Olay kuyruğu', queue: 'Kuyruktaki olaylar', triage: 'İncele', confirm: 'Evet, devam et', triaging: 'İnceleniyor',
    stale: 'Veriler eski', liveFigures: 'Canlı göstergeler', notLicensed: 'Pano paketinize dahil değil' },
} as const;

export function dashShots(): void {
  mkdirSync(DASH_SHOTS, { recursive: true });
}

/** A dashboard test file's Chromium at the wall screen's size (saying what is missing when there is none), its screenshots' folder made. */
export async function dashBrowser(): Promise<PhoneBrowser> {
  requireChromium();
  dashShots();
  return launchDesktop(WALL_VIEWPORT);
}

/** A guest signs in through the portal's verify call, as the portal page does; resolves to the session id. */
export async function portalGuest(base: string, hotspotId: string, code: string, mac: string, ssid = 'Guest'): Promise<string> {
  const r = await call(base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hotspotId}`, { body: { code, mac, ip: '10.40.0.9', ssid } });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.session_id as string;
}

/** A full-page screenshot saved as DASH_SHOTS/<name>.png. */
export function dashShot(page: Page, name: string): Promise<Buffer> {
  return page.screenshot({ path: join(DASH_SHOTS, `${name}.png`), fullPage: true });
}

/** Opens /dashboard, picks the language on the sign-in page and signs in with the key, as an operator would. */
export async function signIn(page: Page, base: string, apiKey: string, lang: Lang): Promise<void> {
  await page.goto(`${base}/dashboard`);
  await page.getByRole('combobox', { name: lang === 'en' ? 'Dil' : 'Language' }).or(page.getByRole('combobox', { name: WORDS[lang].language }))
    .selectOption(lang);
  await page.getByLabel(WORDS[lang].apiKey).fill(apiKey);
  await page.getByRole('button', { name: WORDS[lang].signIn }).click();
  await page.getByRole('heading', { name: WORDS[lang].heading }).waitFor();
}

/** A tile (a labelled group) by its label. */
export const tile = (page: Page, label: string): Locator => page.getByRole('group', { name: label, exact: true });

/** The tile's figure as shown, e.g. "3" or "75%". */
export async function tileValue(page: Page, label: string): Promise<string> {
  return ((await tile(page, label).locator('.value').textContent()) ?? '').trim();
}

/**
 * Bytes the page transferred (compressed, headers included) for every
 * response that finished: CDP's encodedDataLength. Event streams never
 * finish and are not counted; they carry about 50 bytes an event anyway.
 */
export async function countTransfer(ctx: BrowserContext, page: Page): Promise<{ total(): number; cdp: CDPSession }> {
  const cdp = await ctx.newCDPSession(page);
  let total = 0;
  cdp.on('Network.loadingFinished', (e: { encodedDataLength: number }) => { total += e.encodedDataLength; });
  await cdp.send('Network.enable');
  return { total: () => total, cdp };
}

/** The page's JavaScript heap in use, bytes, after a garbage collection (CDP Performance.getMetrics, JSHeapUsedSize). */
export async function heapUsed(cdp: CDPSession): Promise<number> {
  await cdp.send('HeapProfiler.collectGarbage');
  const { metrics } = await cdp.send('Performance.getMetrics') as { metrics: { name: string; value: number }[] };
  const used = metrics.find((m) => m.name === 'JSHeapUsedSize');
  if (!used) throw new Error('Performance.getMetrics gave no JSHeapUsedSize');
  return used.value;
}
