import { randomInt } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchDesktop, requireChromium, type PhoneBrowser } from '../support/browser.js';
import { call, newTenant, startService, type Running, type Tenant } from '../support/fixture.js';

/**
 * The console's NAS clients form in Debian's Chromium, by accessible names
 * (issue 24 item 5): an operator registers access points by their subnet,
 * with a NAS type and the reply's role and VLAN, and sees them listed.
 * Photographed in English and Turkish into test-artifacts/console/.
 */
const SHOTS = join('test-artifacts', 'console');

describe('console: a NAS client by subnet, with its type, role and VLAN', () => {
  let svc: Running;
  let browser: PhoneBrowser;
  let t: Tenant;

  beforeAll(async () => {
    requireChromium();
    mkdirSync(SHOTS, { recursive: true });
    svc = await startService({ LOG_LEVEL: 'silent' });
    t = await newTenant(svc.service, 'NAS Console Venue');
    browser = await launchDesktop();
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.stop();
  });

  it('registers 127.x.y.0/24 as an Aruba NAS with a role and VLAN; listed with them; the form in Turkish too', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${svc.base}/console`);
    await page.getByLabel('API key').fill(t.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation').getByRole('link', { name: 'Hotspots', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Hotspots' }).waitFor({ timeout: 10_000 });
    await page.getByRole('button', { name: 'NAS clients of Lobby' }).click();

    let subnet = '';
    for (let attempt = 0; attempt < 5 && !subnet; attempt++) {
      const net = `127.${randomInt(16, 250)}.${randomInt(0, 256)}.0/24`;
      await page.getByLabel('NAS IP address').fill(net);
      await page.getByLabel('NAS type').selectOption({ label: 'Aruba' });
      await page.getByLabel('Role or group (optional)').fill('guest-internet');
      await page.getByLabel('Guest VLAN (optional)').fill('42');
      await page.getByRole('button', { name: 'Add NAS client' }).click();
      const secret = page.getByLabel(`RADIUS shared secret of ${net}. It is shown only now`, { exact: false });
      const taken = page.getByText('another account registered', { exact: false });
      await secret.or(taken).first().waitFor({ timeout: 10_000 });
      if (await secret.count()) subnet = net;
    }
    expect(subnet, 'a free loopback /24').not.toBe('');
    await page.getByRole('cell', { name: subnet, exact: true }).waitFor();
    await page.getByRole('cell', { name: 'Aruba · guest-internet · VLAN 42', exact: true }).waitFor();
    await page.screenshot({ path: join(SHOTS, 'hotspots-nas-subnet-en.png'), fullPage: true });
    const listed = await call(svc.base, 'GET', `/v1/hotspots/${t.hotspotId}/nas-clients`, { auth: t.apiKey });
    expect(listed.body.data).toEqual([expect.objectContaining({ ip: subnet, nas_type: 'aruba', reply_role: 'guest-internet', reply_vlan: 42, reply_filter_id: null })]);

    await page.getByLabel('Language', { exact: true }).selectOption('tr');
    await page.getByRole('heading', { level: 1, name: 'Erişim noktaları' }).waitFor({ timeout: 10_000 });
    // The panel may stay open across the switch; else open it again, by its Turkish name.
    if ((await page.getByLabel('NAS türü').count()) === 0) await page.getByRole('button', { name: 'NAS istemcileri: Lobby' }).click();
    await page.getByLabel('NAS türü').waitFor();
    await page.getByRole('cell', { name: 'Aruba · guest-internet · VLAN 42', exact: true }).waitFor();
    expect(await page.getByLabel('NAS türü').locator('option').allTextContents()).toEqual(['Genel', 'CoovaChilli', 'MikroTik RouterOS', 'UniFi', 'Cisco 9800', 'Aruba', 'Ruckus']);
    await page.screenshot({ path: join(SHOTS, 'hotspots-nas-subnet-tr.png'), fullPage: true });
    await page.close();
  });
});
