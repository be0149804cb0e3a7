import { afterAll, describe, expect } from 'vitest';
import { DEFAULT_MODULES } from '../../engine/index.js';
import { Code } from '../../radius/index.js';
import type { PhoneBrowser } from '../support/browser.js';
import { dashBrowser, dashShot, portalGuest, signIn, tileValue, WORDS } from '../support/dashboard-page.js';
import { call, newTenant, serviceTest, type Running } from '../support/fixture.js';
import { ScenarioNas } from '../integration/dashboard-scenario-kit.js';

const it = serviceTest();
const DASH = [...DEFAULT_MODULES, 'dashboard'];

/** What the page shows, read in one turn of its event loop: one moment, as an operator reads the wall screen. */
interface Snapshot {
  tiles: Record<string, [value: string, what: string]>;
  live: Record<string, string>;
  sites: string[][];
  switches: string[];
  topology: string;
  fresh: string[];
  hasNull: boolean;
}

/**
 * The dashboard page after one guest signed in, in Debian's Chromium: its
 * widgets agree with each other at one moment (the live panel and the grid,
 * site health and the top strip), a NAS registered without a name is shown
 * by its address, no `null` reaches the page, and every widget says how old
 * its data is.
 */
describe('the dashboard page tells one truth', () => {
  let svc: Running;
  let browser: PhoneBrowser;
  const nases: ScenarioNas[] = [];
  it.beforeAll(async ({ svc: s }) => {
    svc = s;
    browser = await dashBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    for (const n of nases) await n.close();
  });

  it('after one sign-in every widget agrees at one moment, and nothing shows null', async ({ mac }) => {
    const t = await newTenant(svc.service, 'Truth Venue', DASH);
    const nas = await ScenarioNas.add(svc.base, svc.service.radiusPorts, t.apiKey, t.hotspotId);
    nases.push(nas);
    const code = `TRUTH-${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null, duration_minutes: 60 } })).status).toBe(201);
    const page = await browser.context.newPage();
    try {
      await signIn(page, svc.base, t.apiKey, 'en');
      await expect.poll(() => tileValue(page, WORDS.en.active), { timeout: 15_000 }).toBe('0');

      const device = mac();
      await portalGuest(svc.base, t.hotspotId, code, device);
      // The NAS's first packet: it asks about the device, which now has a live session.
      expect(await nas.macAuth(device)).toBe(Code.ACCESS_ACCEPT);

      const snapshot = (): Promise<Snapshot> => page.evaluate(() => {
        const text = (e: Element | null | undefined): string => (e?.textContent ?? '').trim();
        const region = (title: string): Element | undefined =>
          [...document.querySelectorAll('section')].find((s) => text(s.querySelector('h2')) === title);
        const tiles: Record<string, [string, string]> = {};
        for (const tile of document.querySelectorAll('.tile')) tiles[text(tile.querySelector('.label'))] = [text(tile.querySelector('.value')), text(tile.querySelector('.what'))];
        const live: Record<string, string> = {};
        for (const pair of region('Live sessions')?.querySelectorAll('dl.figures > div') ?? []) live[text(pair.querySelector('dt'))] = text(pair.querySelector('dd'));
        return {
          tiles, live,
          sites: [...(region('Site health')?.querySelectorAll('tbody tr') ?? [])].map((r) => [...r.querySelectorAll('td')].map((c) => text(c))),
          switches: [...(region('Switch port map')?.querySelectorAll('option') ?? [])].map((o) => text(o)),
          topology: text(region('Topology')?.querySelector('.tree')),
          fresh: [...document.querySelectorAll('section.widget .fresh')].map((f) => text(f)),
          hasNull: /\bnull\b/i.test(document.body.innerText),
        };
      });
      const agreeing = (s: Snapshot) => ({
        active: s.tiles['Active sessions']?.[0], switchesOnline: s.tiles['Switches online']?.[0],
        authOk: s.tiles['Sign-in success, 24 h'], edge: s.tiles['Edge health'],
        liveActive: s.live['Active now'], liveLogins: s.live['Sign-ins, 24 h'],
        site: s.sites[0]?.slice(0, 4), switches: s.switches, topology: s.topology, hasNull: s.hasNull,
      });
      const site = (await call(svc.base, 'GET', '/api/v1/tenants/me/sites', { auth: t.apiKey })).body.data[0].name as string;
      // One moment of the page: the figures of every widget at once. They follow the same invalidations, so they come
      // to agree within a fetch of each other; before, the live panel kept "0 sign-ins" and site health "Down, 0/1"
      // for up to a minute (or for good) beside a grid and a strip saying 1.
      await expect.poll(async () => agreeing(await snapshot()), { timeout: 15_000, interval: 200 }).toEqual({
        active: '1', switchesOnline: '1', authOk: ['100%', '1 of 1 sign-ins accepted'], edge: ['100%', '1 of 1 NAS clients online'],
        liveActive: '1', liveLogins: '1', site: [site, 'OK', '1', '1 / 1'],
        switches: [`${nas.ip} (${nas.ip}) · Online`], topology: expect.stringContaining(`${nas.ip} (${nas.ip}): Online`), hasNull: false,
      });
      const moment = await snapshot();
      // Every widget says how old its data is, with the time it was refreshed.
      expect(moment.fresh.length).toBeGreaterThanOrEqual(8);
      for (const f of moment.fresh) expect(f).toMatch(/^Updated \d+ s ago \(/);
      await dashShot(page, 'dashboard-one-sign-in-en');
    } finally {
      await page.close();
    }
  }, 90_000);
});
