import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { launchDesktop, requireChromium, type PhoneBrowser } from '../support/browser.js';
import { newTenant, startService, type Running, type Tenant } from '../support/fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The console's Webhooks page in Debian's Chromium, by accessible names:
 * an operator adds a webhook to a loopback receiver, sees it listed, opens
 * its deliveries and finds the attempt (status, answer code), then deletes
 * it. Photographed into test-artifacts/console/.
 */
const SHOTS = join('test-artifacts', 'console');

describe('console: webhooks page', () => {
  let svc: Running;
  let browser: PhoneBrowser;
  let t: Tenant;
  let rx: WebhookReceiver;

  beforeAll(async () => {
    requireChromium();
    mkdirSync(SHOTS, { recursive: true });
    // A Redis database of its own, as for every webhook test file: no other file's process (one killed while it
    // held this delivery, say) takes part in these deliveries.
    svc = await startService({ REDIS_URL: `${inject('redisUrl')}/13`, SECRETS_KEY: randomBytes(32).toString('base64'), WEBHOOK_POLL_MS: '20' });
    t = await newTenant(svc.service, 'Webhook Console Venue');
    rx = await WebhookReceiver.start();
    browser = await launchDesktop();
  });
  afterAll(async () => {
    await browser?.close();
    await rx?.close();
    await svc?.stop();
  });

  it('add a webhook, see its delivery with status and code, delete it', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${svc.base}/console`);
    await page.getByLabel('API key').fill(t.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor({ timeout: 10_000 });
    await page.getByText('Nothing here yet.').waitFor();

    await page.getByLabel('Receiver URL').fill(rx.url);
    await page.getByLabel('device.new').check();
    await page.getByLabel('Signing secret').fill('console-secret-0123456789');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByText(`Webhook to ${rx.url} added.`).waitFor();
    await page.getByRole('cell', { name: rx.url, exact: true }).waitFor();
    await page.getByRole('cell', { name: 'session.start, device.new', exact: true }).waitFor();

    await svc.service.engine.events.append(t.tenantId, 'device.new', t.hotspotId, { mac: '02:00:00:00:00:09' });
    await rx.when(() => rx.requests.some((r) => r.answered === 200), 'the delivery');
    await page.getByRole('button', { name: `Recent deliveries to ${rx.url}` }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'device.new', exact: true }) });
    await row.getByRole('cell', { name: 'Delivered', exact: true }).waitFor({ timeout: 10_000 });
    await row.getByRole('cell', { name: '200', exact: true }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'webhooks-en.png'), fullPage: true });

    await page.getByRole('button', { name: `Delete webhook ${rx.url}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: `Delete webhook ${rx.url}` }).click();
    await page.getByText(`Webhook to ${rx.url} deleted.`).waitFor();
    await page.getByRole('cell', { name: rx.url, exact: true }).waitFor({ state: 'detached' });
    await page.getByText('Nothing here yet.').waitFor();
    await page.close();
  });
});
