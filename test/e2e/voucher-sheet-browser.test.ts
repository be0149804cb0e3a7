import { afterAll, describe, expect } from 'vitest';
import { launchPhone, requireChromium, shot, type PhoneBrowser } from '../support/browser.js';
import { call, serviceTest, until } from '../support/fixture.js';
import { freePort } from '../../scripts/local-services.js';
import { decodeQr, getSheet, pageImage, savePdf } from '../support/voucher-sheet.js';

const it = serviceTest(async () => {
  const port = await freePort();
  return { HTTP_PORT: String(port), PORTAL_PUBLIC_URL: `http://127.0.0.1:${port}` };
});

/**
 * From paper to the network: a printed voucher's QR code, decoded from the
 * sheet's image, opened in Chromium at 360 px with the gateway's parameters
 * added, shows the voucher form with the code filled in, and one tap on
 * Connect signs the guest in (JavaScript on and off).
 */
describe('a voucher sheet scanned on a phone', () => {
  const browsers = new Map<boolean, PhoneBrowser>();
  const phone = async (js: boolean): Promise<PhoneBrowser> => {
    let b = browsers.get(js);
    if (!b) {
      requireChromium();
      b = await launchPhone({ javaScriptEnabled: js });
      browsers.set(js, b);
    }
    return b;
  };
  afterAll(async () => {
    for (const b of browsers.values()) await b.close();
  });

  for (const js of [true, false]) {
    it(`the QR URL fills the code and one tap signs the guest in, JavaScript ${js ? 'on' : 'off'}`, async ({ svc, tenant: t, mac: nextMac }) => {
      const b = await call(svc.base, 'POST', '/api/v1/vouchers', { auth: t.apiKey, body: { count: 1, max_uses: 1, duration_minutes: 60 } });
      expect(b.status).toBe(201);
      const code: string = b.body.vouchers[0].code;
      const sheet = await getSheet(svc.base, t.apiKey, { batch_id: b.body.batch_id, layout: 'receipt', lang: 'en' });
      expect(sheet.status).toBe(200);
      const url = decodeQr(await pageImage(savePdf(`scan-${js ? 'js' : 'nojs'}`, sheet.body), 1));
      expect(url).not.toBeNull();
      expect(new URL(url!).searchParams.get('code')).toBe(code);

      // The gateway adds its own parameters as it sends the phone to the portal.
      const mac = nextMac();
      const page = await (await phone(js)).context.newPage();
      await page.goto(`${url}&mac=${encodeURIComponent(mac)}&ip=10.1.0.23&ssid=Lobby&lang=en`);
      const field = page.getByRole('textbox', { name: 'Access code' });
      expect(await field.inputValue()).toBe(code);
      await shot(page, `voucher-sheet-scan-${js ? 'js' : 'nojs'}-1-filled`);
      await page.getByRole('button', { name: 'Connect' }).click();
      const done = page.getByRole('heading', { name: 'You are connected' });
      await expect.poll(() => done.isVisible(), { timeout: 10_000 }).toBe(true);
      await shot(page, `voucher-sheet-scan-${js ? 'js' : 'nojs'}-2-connected`);
      await page.close();
      await until(async () => (await call(svc.base, 'GET', '/v1/sessions?status=active', { auth: t.apiKey })).body.data
        .some((s: { mac: string }) => s.mac === mac), { what: 'the session listed' });
    });
  }

  it('a refused code stays in its field after a form post without JavaScript', async ({ svc, tenant: t, mac: nextMac }) => {
    const b = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'USED-UP-1', max_uses: 1 } });
    expect(b.status).toBe(201);
    expect((await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'USED-UP-1', mac: nextMac() } })).status).toBe(200);
    const page = await (await phone(false)).context.newPage();
    await page.goto(`${svc.base}/portal?hotspot_id=${t.hotspotId}&code=USED-UP-1&mac=${encodeURIComponent(nextMac())}&lang=en`);
    await page.getByRole('button', { name: 'Connect' }).click();
    await expect.poll(() => page.getByRole('alert').isVisible()).toBe(true);
    expect(page.url()).toMatch(/[?&]r=[A-Za-z0-9_-]{22}/);
    expect(await page.getByRole('textbox', { name: 'Access code' }).inputValue()).toBe('USED-UP-1');
    await shot(page, 'voucher-sheet-refused-kept');
    await page.close();
  });

  it('a code from the URL is text, never markup', async ({ svc, tenant: t, mac: nextMac }) => {
    const hostile = '"><script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';
    const q = new URLSearchParams({ hotspot_id: t.hotspotId, code: hostile, mac: nextMac(), lang: 'en' });
    const html = await (await fetch(`${svc.base}/portal?${q}`)).text();
    expect(html).not.toContain('<script>window.__pwned');
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('value="&quot;&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;');
    const page = await (await phone(true)).context.newPage();
    await page.goto(`${svc.base}/portal?${q}`);
    expect(await page.getByRole('textbox', { name: 'Access code' }).inputValue()).toBe(hostile);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.close();
  });

  it("the code survives a gateway that sends the phone to the portal with the QR URL as its userurl", async ({ svc, tenant: t, mac: nextMac }) => {
    const qrUrl = `${svc.base}/portal?${new URLSearchParams({ hotspot_id: t.hotspotId, code: 'VIA-GW-7' })}`;
    const elsewhere = `${svc.base}/portal?${new URLSearchParams({ hotspot_id: 'hs_someoneelse', code: 'NOT-OURS' })}`;
    const html = async (userurl: string): Promise<string> => (await fetch(`${svc.base}/portal?${new URLSearchParams({
      hotspot_id: t.hotspotId, mac: nextMac(), lang: 'en', userurl })}`)).text();
    expect(await html(qrUrl)).toContain('value="VIA-GW-7"');
    // A URL naming another hotspot fills nothing.
    expect(await html(elsewhere)).not.toContain('value="NOT-OURS"');
  });
});
