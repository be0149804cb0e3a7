import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { DEFAULT_MODULES } from '../../engine/index.js';
import type { PhoneBrowser } from '../support/browser.js';
import { dashBrowser, dashShot, portalGuest, signIn, tileValue, WALL_VIEWPORT, WORDS, type Lang } from '../support/dashboard-page.js';
import { call, newTenant, newVoucher, serviceTest, type Running, type Tenant } from '../support/fixture.js';

const it = serviceTest();
const DASH = [...DEFAULT_MODULES, 'dashboard'];
/** The top strip is polled every 10 s; a tile follows a change within that, plus a request's and a render's time. */
const TILE_DEADLINE_MS = 10_000 + 3_000;
/**
 * A site row follows a session invalidation within this. Far below the rows'
 * 60 s poll, so only the stream can have made it in time.
 */
const ROW_DEADLINE_MS = 6_000;
/** The sink stores the audit records, then its audit_appended invalidation refetches the timeline. */
const AUDIT_DEADLINE_MS = 15_000;

/** The words of the two widgets this file reads (web/dashboard/messages.ts, web/shared/messages.ts). */
const SITE_WORDS = {
  en: { sites: 'Site health', audit: 'Audit timeline', sessionStart: 'Session started', voucherCreated: 'Voucher created',
    siteFreshness: 'Updated as changes happen and every 60 s' },
  tr: { sites: 'Konum sağlığı', audit: 'Denetim zaman çizelgesi', sessionStart: 'Oturum başladı', voucherCreated: 'Kupon oluşturuldu',
    siteFreshness: 'Değişiklik oldukça ve her 60 sn güncellenir' },
} as const;

declare global {
  interface Window {
    /** Invalidations the page's EventSource received (counted by the init script below). */
    __invalidations?: number;
  }
}

/**
 * The dashboard's site-health rows against its tiles, and its audit
 * timeline's words, in Debian's Chromium: a site row's live count follows a
 * sign-in as the stream tells of it (not a minute later, when the row is next
 * polled) and agrees with the tile, with no more than one fetch per
 * invalidation; the timeline says each event in words with its code beside
 * it, in English and Turkish. Screenshots go to test-artifacts/dashboard/.
 */
describe('dashboard site rows and audit words in a browser', () => {
  let browser: PhoneBrowser;
  beforeAll(async () => { browser = await dashBrowser(); });
  afterAll(async () => { await browser?.close(); });

  /** A dashboard tenant, a voucher its guests share, and a guest's sign-in through the portal. */
  const venue = async (svc: Running, name: string): Promise<{ t: Tenant; guest(mac: string): Promise<string> }> => {
    const t = await newTenant(svc.service, name, DASH);
    const { code } = await newVoucher(svc.base, t, { duration_minutes: 60 });
    return { t, guest: (mac) => portalGuest(svc.base, t.hotspotId, code, mac) };
  };
  /** The Active cell of the tenant's one site (the fixture's "Lobby") in the site-health table. */
  const siteActive = (page: Page, lang: Lang): Locator =>
    page.getByRole('region', { name: SITE_WORDS[lang].sites }).getByRole('row', { name: /^Lobby/ }).getByRole('cell').nth(2);
  const text = async (l: Locator): Promise<string> => ((await l.count()) > 0 ? ((await l.textContent()) ?? '').trim() : '');

  it('shows a sign-in on the site row within seconds, agreeing with the tile, at one fetch per invalidation at most', async ({ svc, mac }) => {
    const { t, guest } = await venue(svc, 'Site Row Venue');
    const page = await browser.context.newPage();
    // Counts what the page's one EventSource (stream/all) receives: the bound on the rows' refetches.
    await page.addInitScript(() => {
      const Native = window.EventSource;
      window.__invalidations = 0;
      window.EventSource = class extends Native {
        constructor(url: string | URL, init?: EventSourceInit) {
          super(url, init);
          this.addEventListener('message', () => { window.__invalidations = (window.__invalidations ?? 0) + 1; });
        }
      };
    });
    const fetches = { sites: 0, metrics: 0 };
    page.on('request', (r) => {
      const path = new URL(r.url()).pathname;
      if (path === '/api/v1/tenants/me/sites') fetches.sites++;
      else if (path === '/api/v1/tenants/me/sites/metrics') fetches.metrics++;
    });
    try {
      await signIn(page, svc.base, t.apiKey, 'en');
      const row = siteActive(page, 'en');
      await expect.poll(() => text(row), { timeout: 15_000 }).toBe('0');
      await expect.poll(() => tileValue(page, WORDS.en.active), { timeout: 15_000 }).toBe('0');
      expect(await page.getByRole('region', { name: SITE_WORDS.en.sites }).getByText(SITE_WORDS.en.siteFreshness, { exact: false }).count()).toBe(1);
      // Let the start-up fetches and the stream's first `connected` settle: from here on, within the rows' 60 s
      // poll, only an invalidation can cause a fetch of them.
      await page.waitForTimeout(1500);
      const startedAt = Date.now();
      const before = { ...fetches, invalidations: await page.evaluate(() => window.__invalidations ?? 0) };

      /** After a change to `want` active sessions: the row shows it within seconds, the tile within its refresh, and they agree. */
      const agree = async (want: string): Promise<void> => {
        const changedAt = Date.now();
        await expect.poll(() => text(row), { timeout: ROW_DEADLINE_MS, interval: 100 }).toBe(want);
        expect(Date.now() - changedAt).toBeLessThan(ROW_DEADLINE_MS);
        await expect.poll(() => tileValue(page, WORDS.en.active), { timeout: TILE_DEADLINE_MS, interval: 250 }).toBe(want);
        expect(await text(row)).toBe(await tileValue(page, WORDS.en.active));
      };
      const first = await guest(mac());
      await agree('1');
      await guest(mac());
      await agree('2');
      expect((await call(svc.base, 'DELETE', `/v1/sessions/${first}`, { auth: t.apiKey })).status).toBe(200);
      await agree('1');

      // An incident at the site makes its health Degraded: the incidents stream brings that too, well within the poll.
      const health = page.getByRole('region', { name: SITE_WORDS.en.sites }).getByRole('row', { name: /^Lobby/ }).getByRole('cell').nth(1);
      expect(await text(health)).toBe('OK');
      const raisedAt = Date.now();
      await svc.service.engine.incidents.raise(t.tenantId, { kind: 'nas_silent', subject: `nas_site_row_${t.hotspotId}`, siteId: t.hotspotId,
        severity: 'warning', title: 'A NAS of Lobby is silent', details: {} });
      await expect.poll(() => text(health), { timeout: ROW_DEADLINE_MS, interval: 100 }).toBe('Degraded');
      expect(Date.now() - raisedAt).toBeLessThan(ROW_DEADLINE_MS);

      const invalidations = (await page.evaluate(() => window.__invalidations ?? 0)) - before.invalidations;
      // A 60 s poll of each falls due at most once per elapsed minute, on top of what the stream caused.
      const polls = Math.ceil((Date.now() - startedAt) / 60_000);
      const sites = fetches.sites - before.sites;
      const metrics = fetches.metrics - before.metrics;
      expect(invalidations).toBeGreaterThanOrEqual(3);
      expect(sites).toBeGreaterThanOrEqual(3);
      expect(sites).toBeLessThanOrEqual(invalidations + polls);
      expect(metrics).toBeGreaterThanOrEqual(3);
      expect(metrics).toBeLessThanOrEqual(invalidations + polls);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('says each audit event in words with its code beside it, in English and Turkish', async ({ svc, mac }) => {
    const { t, guest } = await venue(svc, 'Audit Words Venue');
    await guest(mac());
    const page = await browser.context.newPage();
    try {
      await signIn(page, svc.base, t.apiKey, 'en');
      for (const lang of ['en', 'tr'] as Lang[]) {
        if (lang === 'tr') {
          await page.getByRole('combobox', { name: WORDS.en.language }).selectOption('tr');
          await page.getByRole('heading', { name: WORDS.tr.heading }).waitFor();
        }
        const w = SITE_WORDS[lang];
        const timeline = page.getByRole('region', { name: w.audit });
        const start = timeline.getByRole('listitem').filter({ hasText: w.sessionStart });
        await start.first().waitFor({ timeout: AUDIT_DEADLINE_MS });
        // The code stays on the page, in small type and as the tooltip, for matching it to the API.
        expect(await start.first().locator('.event-code').textContent()).toBe('session_start');
        expect(await start.first().locator('.event').getAttribute('title')).toBe('session_start');
        const created = timeline.getByRole('listitem').filter({ hasText: w.voucherCreated }).first();
        expect(await created.locator('.event-code').textContent()).toBe('voucher_created');
        // No entry shows a bare code where words exist: every entry with words has its code apart, in .event-code.
        const events = await timeline.locator('.event').evaluateAll((els) => els.map((e) => (e.firstChild?.textContent ?? '').trim()));
        expect(events.length).toBeGreaterThanOrEqual(2);
        for (const e of events) expect(e).not.toMatch(/^[a-z]+(_[a-z]+)+$/);
        for (const size of [WALL_VIEWPORT, { width: 1440, height: 900 }]) {
          await page.setViewportSize(size);
          await dashShot(page, `dashboard-sites-audit-${size.width}x${size.height}-${lang}`);
        }
        await page.setViewportSize(WALL_VIEWPORT);
      }
    } finally {
      await page.close();
    }
  }, 90_000);
});
