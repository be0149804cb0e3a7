import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, describe, expect } from 'vitest';
import { call, type Running, serviceTest, until } from '../support/fixture.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = join('test-artifacts', 'portal');
const it = serviceTest();

/**
 * A guest on a 360 x 740 phone signs in with a voucher on the page, with
 * JavaScript on and off, in Turkish and English, in Debian's Chromium driven
 * by playwright-core (never a downloaded browser). Screenshots of each state
 * go to test-artifacts/portal/.
 */
describe('portal page in a browser', () => {
  let svc: Running;
  const dirs: string[] = [];
  /** One browser per JavaScript setting, each with its own fresh profile. */
  const contexts = new Map<boolean, BrowserContext>();

  const open = async (javaScriptEnabled: boolean): Promise<BrowserContext> => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-chromium-'));
    dirs.push(dir);
    const ctx = await chromium.launchPersistentContext(dir, {
      executablePath: CHROMIUM, headless: true, javaScriptEnabled, viewport: { width: 360, height: 740 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync'],
    });
    contexts.set(javaScriptEnabled, ctx);
    return ctx;
  };

  it.beforeAll(({ svc: s_ }) => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium); these tests never download a browser`);
    }
    mkdirSync(SHOTS, { recursive: true });
    svc = s_;
  });
  afterAll(async () => {
    for (const c of contexts.values()) await c.close().catch(() => undefined);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  for (const js of [true, false]) {
    for (const lang of ['tr', 'en'] as const) {
      it(`signs a guest in with a voucher, JavaScript ${js ? 'on' : 'off'}, ${lang}`, async ({ tenant: t, mac: nextMac }) => {
        await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: {
          display_name: 'Kafe Deniz', primary_color: '#0b5394', terms_required: true,
          terms: { tr: 'Bu ağı yasalara uygun kullanacağımı kabul ediyorum.', en: 'I will use this network lawfully.' },
        } } });
        await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'BROWSER-1', max_uses: 10, duration_minutes: 90 } });
        const ctx = contexts.get(js) ?? await open(js);
        const page = await ctx.newPage();
        const mac = nextMac();
        await page.goto(`${svc.base}/portal?hotspot_id=${t.hotspotId}&mac=${encodeURIComponent(mac)}&lang=${lang}`);
        const tag = `voucher-${js ? 'js' : 'nojs'}-${lang}`;
        await shot(page, `${tag}-1-form`);

        const label = lang === 'tr' ? 'Erişim kodu' : 'Access code';
        const button = lang === 'tr' ? 'Bağlan' : 'Connect';
        // A wrong code first: the error summary names the problem and links to the field.
        await page.getByRole('textbox', { name: label }).fill('WRONG-CODE');
        await page.getByRole('checkbox', { name: lang === 'tr' ? 'Kullanım koşullarını kabul ediyorum' : 'I accept the terms of use' }).check();
        await page.getByRole('button', { name: button }).click();
        const summary = page.getByRole('alert');
        await expect.poll(() => summary.isVisible()).toBe(true);
        expect(await summary.textContent()).toContain(lang === 'tr' ? 'Bu erişim kodunu tanımıyoruz' : 'We do not recognise this access code');
        await shot(page, `${tag}-2-error`);

        await page.getByRole('textbox', { name: label }).fill('BROWSER-1');
        const box = page.getByRole('checkbox', { name: lang === 'tr' ? 'Kullanım koşullarını kabul ediyorum' : 'I accept the terms of use' });
        if (!(await box.isChecked())) await box.check();
        await page.getByRole('button', { name: button }).click();
        const done = page.getByRole('heading', { name: lang === 'tr' ? 'Bağlandınız' : 'You are connected' });
        await expect.poll(() => done.isVisible(), { timeout: 10_000 }).toBe(true);
        await shot(page, `${tag}-3-success`);
        if (!js) expect(page.url()).toMatch(/[?&]r=[A-Za-z0-9_-]{22}/);
        await page.close();

        // The API lists the session once the outbox sink wrote it to Postgres.
        await until(async () => (await call(svc.base, 'GET', '/v1/sessions?status=active', { auth: t.apiKey })).body.data
          .some((s: { mac: string }) => s.mac === mac), { what: 'the session listed' });
      });
    }
  }
  for (const js of [true, false]) {
    it(`hands the guest back to an openNDS gateway after sign-in, JavaScript ${js ? 'on' : 'off'}`, async ({ tenant: t, mac: nextMac }) => {
      // A stand-in for the gateway's auth URL on loopback: records what the browser brings.
      const seen: string[] = [];
      const gw: Server = createServer((req, res) => {
        seen.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>gateway</title><h1>Gateway open</h1>');
      });
      await new Promise<void>((resolve) => gw.listen(0, '127.0.0.1', resolve));
      try {
        const port = (gw.address() as { port: number }).port;
        await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'NDS-1', max_uses: 10 } });
        const ctx = contexts.get(js) ?? await open(js);
        const page = await ctx.newPage();
        const mac = nextMac();
        const q = new URLSearchParams({ hotspot_id: t.hotspotId, lang: 'en', clientip: '192.168.8.23', clientmac: mac, gatewayname: 'Cafe',
          tok: 'a1b2c3d4', gatewayaddress: `127.0.0.1:${port}`, redir: 'http://example.com/' });
        await page.goto(`${svc.base}/portal?${q}`);
        await page.getByRole('textbox', { name: 'Access code' }).fill('NDS-1');
        await page.getByRole('button', { name: 'Connect' }).click();
        // With JavaScript the page submits the hand-back itself; without, the confirmation's refresh (4 s) does.
        // (Nothing waits for the confirmation here: under load the refresh may already have left it.)
        await expect.poll(() => seen.length, { timeout: 30_000 }).toBeGreaterThan(0);
        await expect.poll(() => page.url(), { timeout: 10_000 }).toContain(`127.0.0.1:${port}/opennds_auth/`);
        expect(seen[0]).toBe(`/opennds_auth/?tok=a1b2c3d4&redir=${encodeURIComponent('http://example.com/')}`);
        await page.close();
      } finally {
        gw.close();
      }
    }, 90_000);
  }
});
