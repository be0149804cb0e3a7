import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchDesktop, requireChromium, type PhoneBrowser } from '../support/browser.js';
import { call, newTenant, startService, type Running, type Tenant } from '../support/fixture.js';

/**
 * The console's CSV upload (issue 20 item 1) in Debian's Chromium, driven by
 * accessible names: the operator picks a file on the vouchers page, posts it,
 * and reads the report (counts, and each row not imported with its line and
 * the reason in words), in English and Turkish; photographed into
 * test-artifacts/console/.
 */

const SHOTS = join('test-artifacts', 'console');
const WORDS = {
  en: { key: 'API key', signIn: 'Sign in', signOut: 'Sign out', language: 'Language', file: 'CSV file', submit: 'Import', line: 'Line',
    done: '2 vouchers imported, 2 rows not imported.', exists: 'A voucher with this code exists already.', dup: 'The same code is on an earlier line; that one was imported.' },
  tr: { key: 'API anahtarı', signIn: 'Giriş yap', signOut: 'Çıkış yap', language: 'Dil', file: 'CSV dosyası', submit: 'İçe aktar', line: 'Satır',
    done: '2 kupon içe aktarıldı, 2 satır aktarılmadı.', exists: 'Bu kodla bir kupon zaten var.', dup: 'Aynı kod daha önceki bir satırda var; o içe aktarıldı.' },
} as const;

describe('console CSV upload in a browser', () => {
  let svc: Running;
  let browser: PhoneBrowser;
  let t: Tenant;

  beforeAll(async () => {
    requireChromium();
    mkdirSync(SHOTS, { recursive: true });
    svc = await startService();
    t = await newTenant(svc.service, 'Import Venue');
    browser = await launchDesktop();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  async function signIn(page: Page, lang: 'en' | 'tr'): Promise<void> {
    const w = WORDS[lang];
    await page.goto(`${svc.base}/console`);
    await page.locator('#api-key').waitFor();
    const shown = await page.evaluate(() => document.documentElement.lang);
    await page.getByLabel(WORDS[shown === 'tr' ? 'tr' : 'en'].language, { exact: true }).selectOption(lang);
    await page.getByLabel(w.key).fill(t.apiKey);
    await page.getByRole('button', { name: w.signIn }).click();
    await page.getByRole('button', { name: w.signOut }).waitFor({ timeout: 10_000 });
  }

  it('uploads a file and shows the report with lines and reasons in words, in English and Turkish', async () => {
    const existing = `OLD-${Date.now().toString(36).toUpperCase()}`;
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: existing } })).status).toBe(201);
    for (const lang of ['en', 'tr'] as const) {
      const w = WORDS[lang];
      const page = await browser.context.newPage();
      await signIn(page, lang);
      const a = `UP-${lang.toUpperCase()}-A`, b = `UP-${lang.toUpperCase()}-B`;
      const csv = `code,max_uses,expires_at,bandwidth_profile,notes\r\n${a},1,,,"Çarşı, giriş"\r\n${existing},1,,,\r\n${b},,,,\r\n${a},2,,,\r\n`;
      await page.getByLabel(w.file, { exact: true }).setInputFiles({ name: 'vouchers.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.getByRole('button', { name: w.submit, exact: true }).click();
      const status = page.getByRole('status').filter({ hasText: w.done });
      await status.waitFor({ timeout: 10_000 });
      const table = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: w.line }) });
      const rows = await table.getByRole('row').allInnerTexts();
      expect(rows.slice(1).map((r) => r.replace(/\s+/g, ' ').trim())).toEqual([`3 ${w.exists}`, `5 ${w.dup}`]);
      // The imported codes are in the list the page refreshes.
      await page.getByRole('cell', { name: a, exact: true }).waitFor({ timeout: 10_000 });
      await page.getByRole('heading', { level: 2, name: lang === 'en' ? 'Import vouchers from a CSV file' : 'CSV dosyasından kupon içe aktar' }).scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, `voucher-import-${lang}.png`), fullPage: true });
      await page.close();
    }
  });
});
