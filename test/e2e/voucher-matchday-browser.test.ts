import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchDesktop, launchPhone, requireChromium, type PhoneBrowser } from '../support/browser.js';
import { call, macs, newTenant, startService, type Running, type Tenant } from '../support/fixture.js';

/**
 * Issue 20 items 2 and 5 in Debian's Chromium: the console's batch form with
 * the match-day window, the CSV download of the batch just made and of the
 * list's filter (both labelled, both languages), and the portal page with
 * JavaScript refusing a code before its window with the start at the
 * hotspot's clock (Europe/Istanbul). Screenshots in test-artifacts/console/
 * and test-artifacts/portal/.
 */
const SHOTS = join('test-artifacts', 'console');
const PORTAL_SHOTS = join('test-artifacts', 'portal');
const HEADER = 'code,max_uses,expires_at,bandwidth_profile,notes';

describe('match-day vouchers and the CSV export in a browser', () => {
  let svc: Running;
  let desk: PhoneBrowser;
  let phone: PhoneBrowser;
  let t: Tenant;

  beforeAll(async () => {
    requireChromium();
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(PORTAL_SHOTS, { recursive: true });
    svc = await startService();
    t = await newTenant(svc.service, 'Stadium');
    desk = await launchDesktop();
    phone = await launchPhone();
  });
  afterAll(async () => {
    await desk?.close();
    await phone?.close();
    await svc?.stop();
  });

  async function signIn(page: Page, lang: 'en' | 'tr'): Promise<void> {
    await page.goto(`${svc.base}/console`);
    await page.evaluate((l) => localStorage.setItem('gw.lang', l), lang);
    await page.reload();
    await page.getByLabel(lang === 'en' ? 'API key' : 'API anahtarı').fill(t.apiKey);
    await page.getByRole('button', { name: lang === 'en' ? 'Sign in' : 'Giriş yap' }).click();
    await page.getByRole('navigation').getByRole('link', { name: lang === 'en' ? 'Vouchers' : 'Kuponlar', exact: true }).click();
  }

  /** Clicks a download button and returns the saved file's name and text. */
  async function download(page: Page, button: string): Promise<{ name: string; text: string }> {
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: button }).click()]);
    return { name: file.suggestedFilename(), text: readFileSync((await file.path())!, 'utf8') };
  }

  it('the console: a batch with a window, downloaded right after; the filtered list downloaded; both languages', async () => {
    const page = await desk.context.newPage();
    await signIn(page, 'en');
    await page.getByLabel('Number of vouchers').fill('3');
    await page.getByLabel('Notes').nth(1).fill('Derby, gate "B"');
    await page.getByLabel('Match day: valid from (date and time)').fill('2031-05-04T19:00');
    await page.getByLabel('Match day: valid to (date and time)').fill('2031-05-04T23:30');
    await page.getByRole('button', { name: 'Create batch' }).click();
    await page.getByText('3 vouchers created').waitFor();
    await page.getByRole('button', { name: 'Download this batch as CSV' }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'vouchers-matchday-en.png'), fullPage: true });

    const batch = await download(page, 'Download this batch as CSV');
    expect(batch.name).toMatch(/^vouchers-vbt_[0-9a-z]+\.csv$/);
    const lines = batch.text.trimEnd().split('\n');
    expect(lines[0]).toBe(HEADER);
    expect(lines).toHaveLength(4);
    for (const l of lines.slice(1)) expect(l).toMatch(/^[A-Z0-9]+,1,,,"Derby, gate ""B"""$/);

    // The window went in as the browser's local time, stored as that instant.
    const expectFrom = await page.evaluate(() => new Date('2031-05-04T19:00').toISOString());
    const listed = (await call(svc.base, 'GET', '/api/v1/vouchers?q=Derby', { auth: t.apiKey })).body.data as Array<{ code: string; valid_from: string }>;
    expect(listed.map((v) => v.valid_from)).toEqual([expectFrom, expectFrom, expectFrom]);
    expect(listed.map((v) => v.code).sort()).toEqual(lines.slice(1).map((l) => l.split(',')[0]).sort());

    // The list's filter: a search keeps one code.
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'SOLO-1', notes: 'single' } });
    await page.getByLabel('Search codes and notes').fill('SOLO');
    await page.getByRole('cell', { name: 'SOLO-1', exact: true }).waitFor();
    const filtered = await download(page, 'Download these vouchers as CSV');
    expect(filtered.text).toBe(`${HEADER}\nSOLO-1,1,,,single\n`);

    const tr = await desk.context.newPage();
    await signIn(tr, 'tr');
    await tr.getByLabel('Maç günü: geçerlilik başlangıcı (tarih ve saat)').waitFor();
    await tr.getByLabel('Maç günü: geçerlilik bitişi (tarih ve saat)').waitFor();
    const trFile = await download(tr, 'Bu kuponları CSV olarak indir');
    expect(trFile.text.split('\n')[0]).toBe(HEADER);
    expect(trFile.text.trimEnd().split('\n')).toHaveLength(5);
    await tr.screenshot({ path: join(SHOTS, 'vouchers-matchday-tr.png'), fullPage: true });
  });

  it('the portal with JavaScript: before the window, the start at the hotspot\'s clock, in both languages', async () => {
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'DERBY-31', valid_from: '2031-05-04T17:45:00Z' } });
    const nextMac = macs(0x3c);
    for (const [lang, label, button, said] of [
      ['en', 'Access code', 'Connect', /It works from 4 May(?: at|,) 20:45\./],
      ['tr', 'Erişim kodu', 'Bağlan', /4 Mayıs 20:45 itibarıyla kullanılabilir\./],
    ] as const) {
      const page = await phone.context.newPage();
      await page.goto(`${svc.base}/portal?hotspot_id=${t.hotspotId}&mac=${encodeURIComponent(nextMac())}&lang=${lang}`);
      await page.getByRole('textbox', { name: label }).fill('DERBY-31');
      await page.getByRole('button', { name: button }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.innerText()).toMatch(said);
      await page.screenshot({ path: join(PORTAL_SHOTS, `voucher-not-yet-valid-js-${lang}.png`), fullPage: true });
    }
    const v = (await call(svc.base, 'GET', '/v1/vouchers?q=DERBY-31', { auth: t.apiKey })).body.data[0];
    expect(v.current_uses).toBe(0);
  });
});
