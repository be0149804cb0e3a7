import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect } from 'vitest';
import { launchDesktop, requireChromium, type PhoneBrowser } from '../support/browser.js';
import { serviceTest } from '../support/fixture.js';
import { freePort } from '../../scripts/local-services.js';
import { pdfText, SHEETS } from '../support/voucher-sheet.js';

const it = serviceTest(async () => {
  const port = await freePort();
  return { HTTP_PORT: String(port), PORTAL_PUBLIC_URL: `http://127.0.0.1:${port}` };
});
const SHOTS = join('test-artifacts', 'console');

/** The console's print buttons: after a batch (its batch_id) and on rows ticked in the list, in English and Turkish. */
describe('printing vouchers from the console', () => {
  let browser: PhoneBrowser | null = null;
  afterAll(async () => { await browser?.close(); });

  async function console_(base: string, apiKey: string, lang: 'en' | 'tr'): Promise<Page> {
    requireChromium();
    mkdirSync(SHOTS, { recursive: true });
    browser ??= await launchDesktop();
    const page = await browser.context.newPage();
    await page.goto(`${base}/console`);
    await page.evaluate((l) => localStorage.setItem('gw.lang', l), lang);
    await page.reload();
    await page.getByLabel(lang === 'en' ? 'API key' : 'API anahtarı').fill(apiKey);
    await page.getByRole('button', { name: lang === 'en' ? 'Sign in' : 'Giriş yap' }).click();
    await page.getByRole('heading', { level: 1, name: lang === 'en' ? 'Vouchers' : 'Kuponlar' }).waitFor({ timeout: 10_000 });
    return page;
  }

  async function downloaded(page: Page, click: () => Promise<void>, name: string): Promise<string> {
    const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
    expect(dl.suggestedFilename()).toMatch(/\.pdf$/);
    const file = join(SHEETS, `${name}.pdf`);
    mkdirSync(SHEETS, { recursive: true });
    await dl.saveAs(file);
    return file;
  }

  it('after a batch, English console: a receipt roll in Turkish with a message', async ({ svc, tenant: t }) => {
    const page = await console_(svc.base, t.apiKey, 'en');
    await page.getByLabel('Number of vouchers').fill('3');
    await page.getByRole('button', { name: 'Create batch' }).click();
    const form = page.getByRole('form', { name: 'Print vouchers' }).first();
    await form.waitFor({ timeout: 10_000 });
    await page.locator('#batch-print-layout').selectOption('receipt');
    await page.getByLabel('Language on the vouchers').first().selectOption('tr');
    await page.locator('#batch-print-message').fill('İyi maçlar, şampiyon!');
    await page.screenshot({ path: join(SHOTS, 'vouchers-print-batch-en.png'), fullPage: true });
    const file = await downloaded(page, () => page.getByRole('button', { name: 'Print 3 vouchers (PDF)' }).click(), 'console-batch-receipt-tr');
    const text = await pdfText(file);
    expect(text).toContain('İyi maçlar, şampiyon!');
    expect(text).toContain('Wi-Fi kuponu');
    expect(text.split('\f').filter((p) => p.trim()).length).toBe(3);
    await expect.poll(() => page.getByText('downloaded (3 vouchers)').isVisible()).toBe(true);
    await page.close();
  });

  it('a selection of the list, Turkish console: an A4 sheet in English', async ({ svc, tenant: t }) => {
    const codes = ['SEC-AAA-1', 'SEC-BBB-2', 'SEC-CCC-3'];
    for (const code of codes) {
      const r = await fetch(`${svc.base}/v1/vouchers`, { method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' }, body: JSON.stringify({ code, max_uses: 1 }) });
      expect(r.status).toBe(201);
    }
    const page = await console_(svc.base, t.apiKey, 'tr');
    await page.getByRole('checkbox', { name: 'SEC-AAA-1 kuponunu seç' }).check();
    await page.getByRole('checkbox', { name: 'SEC-CCC-3 kuponunu seç' }).check();
    await page.getByText('Yazdırmak için 2 kupon seçildi.').waitFor();
    await page.locator('#list-print-lang').selectOption('en');
    await page.screenshot({ path: join(SHOTS, 'vouchers-print-selection-tr.png'), fullPage: true });
    const file = await downloaded(page, () => page.getByRole('button', { name: '2 kuponu yazdır (PDF)' }).click(), 'console-selection-a4-en');
    const text = await pdfText(file);
    expect(text).toContain('SEC-AAA-1');
    expect(text).toContain('SEC-CCC-3');
    expect(text).not.toContain('SEC-BBB-2');
    expect(text).toContain('Wi-Fi voucher');
    await page.close();
  });
});
