import { randomBytes, randomInt } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODULES } from '../../engine/index.js';
import { AcctStatusType, Attr, Code, attributeValue } from '../../radius/index.js';
import { type DaRequest } from '../radius/dynamic-auth-listener.js';
import { accessRequest, accountingRequest } from '../radius/helpers.js';
import { launchDesktop, requireChromium, type PhoneBrowser } from '../support/browser.js';
import { call, dashed, macs, newTenant, startService, type Running, type Tenant } from '../support/fixture.js';
import { addCoaNas, type CoaNas, randomLoopback } from '../support/loopback-nas.js';

/**
 * The operator console in Debian's Chromium (playwright-core, never a
 * downloaded browser) at 1440 x 900, driven by accessible names only:
 * sign in with an API key, create a batch of vouchers, watch a guest's
 * voucher session appear on the live panel without a reload, extend it (the
 * NAS gets the CoA-Request) and disconnect it (the NAS gets the
 * Disconnect-Request). Another tenant's operator sees none of it. Every page
 * is photographed in both languages into test-artifacts/console/, and the
 * first view's compressed weight is measured.
 */

const SHOTS = join('test-artifacts', 'console');
/** The budget for the console's first view, compressed. */
const FIRST_VIEW_BUDGET = 200 * 1024;
/** The panel refreshes every 5 s; the issue allows 6 s for a new session to show. */
const LIVE_WITHIN_MS = 6_000;

const EN = {
  key: 'API key', signIn: 'Sign in', vouchers: 'Vouchers', live: 'Live sessions', blocks: 'Blocked devices', hotspots: 'Hotspots',
  guests: 'Guests', signInSettings: 'Sign-in settings', compliance: 'Compliance', language: 'Language', signOut: 'Sign out',
};
const TR = {
  key: 'API anahtarı', signIn: 'Giriş yap', vouchers: 'Kuponlar', live: 'Canlı oturumlar', blocks: 'Engelli cihazlar', hotspots: 'Erişim noktaları',
  guests: 'Misafirler', signInSettings: 'Giriş ayarları', compliance: 'Uyumluluk', language: 'Dil', signOut: 'Çıkış yap',
};
type Words = typeof EN;
const PAGES = ['vouchers', 'live', 'blocks', 'hotspots', 'guests', 'signInSettings', 'compliance'] as const;

const randomMac = macs();

describe('operator console in a browser', () => {
  let svc: Running;
  let browser: PhoneBrowser;
  let t: Tenant;
  let other: Tenant;
  let nas: CoaNas;
  let ident = randomInt(0, 256);

  beforeAll(async () => {
    requireChromium();
    mkdirSync(SHOTS, { recursive: true });
    svc = await startService();
    // With the dashboard package: the live panel's statistics come from the dashboard API.
    t = await newTenant(svc.service, 'Console Venue', [...DEFAULT_MODULES, 'dashboard']);
    other = await newTenant(svc.service, 'Other Venue');
    // The hotspot's NAS on its own loopback address: RADIUS client, and its RFC 5176 listener on coa_port.
    nas = await addCoaNas(svc.base, t);
    browser = await launchDesktop();
  });
  afterAll(async () => {
    await browser?.close();
    await nas?.radius.close();
    await nas?.da.close();
    await svc?.stop();
  });

  const shot = (page: Page, name: string): Promise<Buffer> => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  async function signIn(page: Page, key: string, w: Words): Promise<void> {
    await page.goto(`${svc.base}/console`);
    await page.getByLabel(w.key).fill(key);
    await page.getByRole('button', { name: w.signIn }).click();
    await page.getByRole('button', { name: w.signOut }).waitFor({ timeout: 10_000 });
  }

  const go = async (page: Page, w: Words, to: keyof Words): Promise<void> => {
    await page.getByRole('navigation').getByRole('link', { name: w[to], exact: true }).click();
    await page.getByRole('heading', { level: 1, name: w[to] }).waitFor({ timeout: 10_000 });
  };

  /** The NAS's side of a sign-in: MAC authorisation and Accounting-Start, both answered, so the session is bound to this NAS. */
  async function nasSees(mac: string, acctSessionId: string): Promise<void> {
    const bare = mac.replace(/:/g, '').toLowerCase();
    const { auth, acct } = svc.service.radiusPorts;
    const next = (): number => (ident = (ident + 1) & 255);
    const accept = await nas.radius.exchange(accessRequest({
      secret: nas.secret, id: next(), userName: bare, password: bare, callingStationId: dashed(mac), calledStationId: '00-11-22-33-44-55:Guest', framedIp: '10.20.0.7',
    }), auth, 3000);
    expect(accept?.[0]).toBe(Code.ACCESS_ACCEPT);
    const started = await nas.radius.exchange(accountingRequest({
      secret: nas.secret, id: next(), status: AcctStatusType.START, userName: bare, callingStationId: dashed(mac), acctSessionId,
    }), acct, 3000);
    expect(started?.[0]).toBe(Code.ACCOUNTING_RESPONSE);
  }

  it('first view within its weight; sign in, batch, live session, extend and disconnect reach the NAS; another tenant sees none of it', async () => {
    const page = await browser.context.newPage();
    // The first view, on a fresh profile (nothing cached): the page, its script and style, everything until the
    // sign-in form shows, as compressed bytes on the wire (headers included).
    const sizes: Promise<number>[] = [];
    const onFinished = (req: Request): void => { sizes.push(req.sizes().then((s) => s.responseBodySize + s.responseHeadersSize)); };
    page.on('requestfinished', onFinished);
    await page.goto(`${svc.base}/console`);
    await page.locator('#api-key').waitFor();
    await page.waitForLoadState('networkidle');
    page.off('requestfinished', onFinished);
    const weight = (await Promise.all(sizes)).reduce((a, b) => a + b, 0);
    expect(sizes.length).toBeGreaterThanOrEqual(3); // html, script, style
    expect(weight).toBeGreaterThan(5_000);
    expect(weight, `first view ${weight} bytes`).toBeLessThanOrEqual(FIRST_VIEW_BUDGET);
    await page.evaluate(() => localStorage.setItem('gw.lang', 'en'));
    await page.reload();
    await page.getByLabel(EN.key).waitFor();
    await shot(page, 'sign-in-en');

    // A bad key is a sentence, not JSON.
    await page.getByLabel(EN.key).fill('gwk_00000000_nope');
    await page.getByRole('button', { name: EN.signIn }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('was not accepted');
    expect(await alert.innerText()).not.toContain('{');

    await signIn(page, t.apiKey, EN);
    // The session lives in the tab's sessionStorage, never in localStorage.
    expect(await page.evaluate(() => sessionStorage.getItem('gw.session'))).toContain('"token"');
    expect(await page.evaluate(() => Object.keys(localStorage).filter((k) => k !== 'gw.lang'))).toEqual([]);

    // A batch of vouchers with a prefix, listed.
    await go(page, EN, 'vouchers');
    const prefix = `E${randomBytes(2).toString('hex').toUpperCase()}`;
    await page.getByLabel('Number of vouchers').fill('3');
    await page.getByLabel('Prefix', { exact: true }).fill(prefix);
    await page.getByLabel('Characters', { exact: true }).selectOption('numeric');
    await page.getByLabel('Length', { exact: true }).fill('6');
    await page.getByRole('button', { name: 'Create batch' }).click();
    await page.getByText('3 vouchers created').waitFor();
    const listed = (await call(svc.base, 'GET', '/api/v1/vouchers?status=created', { auth: t.apiKey })).body.data as { code: string }[];
    const codes = listed.map((v) => v.code).filter((c) => c.startsWith(prefix));
    expect(codes).toHaveLength(3);
    for (const c of codes) {
      expect(c).toMatch(new RegExp(`^${prefix}\\d{6}$`));
      await page.getByRole('cell', { name: c, exact: true }).waitFor();
    }
    await page.getByLabel('Search codes and notes').fill(codes[0]!);
    await page.getByText('Showing 1 of').waitFor();
    await page.getByLabel('Search codes and notes').fill('');

    // The live panel is open before the guest arrives: the session must come in by the panel's own refresh.
    await go(page, EN, 'live');
    await page.getByRole('heading', { name: /^Sessions \(\d+\)$/ }).waitFor();
    const mac = randomMac();
    const verified = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, {
      body: { code: codes[0], mac, ip: '10.20.0.7', ssid: 'Guest' },
    });
    expect(verified.status).toBe(200);
    const arrived = Date.now();
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: mac, exact: true }) });
    await row.waitFor({ timeout: LIVE_WITHIN_MS });
    expect(Date.now() - arrived).toBeLessThanOrEqual(LIVE_WITHIN_MS);
    await nasSees(mac, `acct-${mac}`);
    // The statistics: from the dashboard API where the service has it; else a sentence says they are not offered.
    const stats = await call(svc.base, 'GET', '/api/v1/tenants/me/sessions/active', { auth: t.apiKey });
    if (stats.status === 200) {
      await page.getByText("Today's logins").waitFor();
      await page.getByRole('img', { name: 'Connects and disconnects per minute, last hour' }).waitFor();
      await page.getByRole('table', { name: 'Sessions per SSID' }).waitFor();
      await page.getByRole('table', { name: 'Load per access point' }).waitFor();
    } else {
      expect(stats.status).toBe(404);
      await page.getByText('This service does not offer live statistics yet').waitFor();
    }
    await shot(page, 'live-session-en');

    // Extend by one hour: asked, confirmed, and the NAS receives a signed CoA-Request for this device.
    const forMac = (code: number) => (r: DaRequest): boolean => r.code === code && attributeValue(r.packet, Attr.CALLING_STATION_ID)?.toString() === dashed(mac);
    let from = nas.da.received.length;
    await page.getByRole('button', { name: `Extend session of ${mac}` }).click();
    const extendDialog = page.getByRole('dialog', { name: `Extend the session of ${mac}` });
    await extendDialog.getByLabel('1 hour').check();
    await shot(page, 'live-extend-dialog-en');
    await extendDialog.getByRole('button', { name: `Extend session of ${mac}` }).click();
    await page.getByText(`Session of ${mac} extended until`).waitFor();
    const coa = await nas.da.waitFor(forMac(Code.COA_REQUEST), 5000, from);
    expect(coa.signed).toBe(true);
    const afterExtend = (await call(svc.base, 'GET', `/v1/sessions/${verified.body.session_id}`, { auth: t.apiKey })).body;
    expect(Date.parse(afterExtend.expires_at) - Date.parse(verified.body.expires_at)).toBe(3_600_000);

    // Cancel leaves the session alone; confirm disconnects it and the NAS receives the Disconnect-Request.
    await page.getByRole('button', { name: `Disconnect ${mac}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    expect(nas.da.received.slice(from).filter(forMac(Code.DISCONNECT_REQUEST))).toEqual([]);
    from = nas.da.received.length;
    await page.getByRole('button', { name: `Disconnect ${mac}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: `Disconnect ${mac}` }).click();
    await page.getByText(`${mac} disconnected.`).waitFor();
    const dm = await nas.da.waitFor(forMac(Code.DISCONNECT_REQUEST), 5000, from);
    expect(dm.signed).toBe(true);
    await row.waitFor({ state: 'detached', timeout: LIVE_WITHIN_MS });
    expect((await call(svc.base, 'GET', `/v1/sessions/${verified.body.session_id}`, { auth: t.apiKey })).body.status).toBe('disconnected');

    // Another tenant's operator, in a tab of its own: none of the first tenant's vouchers, sessions or hotspots.
    const stranger = await browser.context.newPage();
    await signIn(stranger, other.apiKey, EN);
    await go(stranger, EN, 'vouchers');
    await stranger.getByText('Showing 0 of 0').waitFor();
    for (const c of codes) expect(await stranger.getByText(c).count()).toBe(0);
    await go(stranger, EN, 'hotspots');
    await stranger.getByRole('cell', { name: other.hotspotId }).waitFor();
    expect(await stranger.getByText(t.hotspotId).count()).toBe(0);
    await go(stranger, EN, 'guests');
    await stranger.getByLabel('Device MAC address').fill(mac);
    await stranger.getByRole('button', { name: 'Look up' }).click();
    await stranger.getByText('No guest with this MAC address has been seen.').waitFor();
    await go(stranger, EN, 'live');
    await stranger.getByRole('heading', { name: 'Sessions (0)' }).waitFor();
    await stranger.close();

    // A token the service refuses (401) sends the page back to sign-in, saying why. The live panel polls, so its own
    // next request may meet the 401 first and take the navigation away: the move to another page is made in the same
    // turn as the token is spoiled, and whichever request is refused first, the outcome is the same.
    await page.evaluate(() => {
      const s = JSON.parse(sessionStorage.getItem('gw.session')!) as { token: string };
      sessionStorage.setItem('gw.session', JSON.stringify({ ...s, token: `${s.token.slice(0, -4)}AAAA` }));
      location.hash = '#/blocks';
    });
    await page.getByText('Your session has ended. Sign in again.').waitFor();
    await page.getByLabel(EN.key).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('gw.session'))).toBeNull();
    await signIn(page, t.apiKey, EN);

    // Sign-out forgets the session: the form is back, and a reload stays signed out.
    await page.getByRole('button', { name: EN.signOut }).click();
    await page.getByLabel(EN.key).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('gw.session'))).toBeNull();
    await page.reload();
    await page.getByLabel(EN.key).waitFor();
    await page.close();
  });

  it('block from the live panel and lift it; add and edit a hotspot and its NAS (secret shown once); save sign-in settings; audit chain and evidence pack', async () => {
    const page = await browser.context.newPage();
    await signIn(page, t.apiKey, EN);
    const code = `BLK${randomBytes(3).toString('hex').toUpperCase()}`;
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: 5 } })).status).toBe(201);
    const mac = randomMac();
    expect((await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code, mac, ip: '10.20.0.9' } })).status).toBe(200);

    await go(page, EN, 'live');
    await page.getByRole('button', { name: `Block device ${mac}` }).click();
    const dialog = page.getByRole('dialog', { name: `End the session of ${mac} and block the device` });
    await dialog.getByLabel('7 days').check();
    await dialog.getByRole('button', { name: `Block device ${mac}` }).click();
    await page.getByText(`Device ${mac} blocked.`).waitFor();
    const blocks = async (): Promise<{ mac: string; duration: string }[]> => (await call(svc.base, 'GET', '/v1/blocks', { auth: t.apiKey })).body.data;
    expect((await blocks()).filter((b) => b.mac === mac)).toEqual([expect.objectContaining({ mac, duration: '7d' })]);

    await go(page, EN, 'blocks');
    await page.getByRole('cell', { name: mac, exact: true }).waitFor();
    await shot(page, 'blocks-with-block-en');
    await page.getByRole('button', { name: `Remove block on ${mac}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: `Remove block on ${mac}` }).click();
    await page.getByText(`Block on ${mac} removed.`).waitFor();
    expect((await blocks()).filter((b) => b.mac === mac)).toEqual([]);

    await go(page, EN, 'hotspots');
    const name = `Terrace ${randomBytes(2).toString('hex')}`;
    await page.getByLabel('Name', { exact: true }).last().fill(name);
    await page.getByLabel('Location', { exact: true }).last().fill('Floor 3');
    await page.getByLabel('Time zone', { exact: true }).last().fill('Europe/Istanbul');
    await page.getByRole('button', { name: 'Add hotspot' }).click();
    await page.getByText(`Hotspot ${name} added.`).waitFor();
    await page.getByRole('button', { name: `Edit hotspot ${name}` }).click();
    const edit = page.getByRole('region', { name: `Edit hotspot ${name}` });
    await edit.getByLabel('Name', { exact: true }).fill(`${name} Roof`);
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: `${name} Roof`, exact: true }).waitFor();
    const hs = ((await call(svc.base, 'GET', '/v1/hotspots', { auth: t.apiKey })).body.data as { id: string; name: string; location: string }[])
      .find((h) => h.name === `${name} Roof`);
    expect(hs).toMatchObject({ location: 'Floor 3' });

    await page.getByRole('button', { name: `NAS clients of ${name} Roof` }).click();
    const ip = randomLoopback();
    await page.getByLabel('NAS IP address').fill(ip);
    await page.getByLabel('NAS name').fill('core-switch');
    await page.getByLabel('NAS-Identifier (optional)').fill('roof-ap-1');
    await page.getByLabel('RadSec certificate name (optional)').fill('roof-ap-1.venue.example');
    await page.getByRole('button', { name: 'Add NAS client' }).click();
    const secret = page.getByLabel(`RADIUS shared secret of ${ip}. It is shown only now`, { exact: false });
    await secret.waitFor();
    const shown = await secret.innerText();
    expect(shown).toMatch(/^[A-Za-z0-9_-]{32}$/);
    await page.getByRole('cell', { name: ip, exact: true }).waitFor();
    await shot(page, 'hotspots-nas-secret-en');
    const listed = (await call(svc.base, 'GET', `/v1/hotspots/${hs!.id}/nas-clients`, { auth: t.apiKey }));
    expect(listed.body.data).toEqual([expect.objectContaining({ ip, name: 'core-switch', nas_identifier: 'roof-ap-1', radsec_cert_name: 'roof-ap-1.venue.example' })]);
    await page.getByRole('cell', { name: 'roof-ap-1', exact: true }).waitFor();
    expect(JSON.stringify(listed.body)).not.toContain(shown);
    // Shown once: gone when the page is left and opened again.
    await go(page, EN, 'guests');
    await go(page, EN, 'hotspots');
    await page.getByRole('button', { name: `NAS clients of ${name} Roof` }).click();
    await page.getByRole('cell', { name: ip, exact: true }).waitFor();
    expect(await page.getByText(shown).count()).toBe(0);

    await go(page, EN, 'signInSettings');
    await page.getByLabel('Wait before the SMS fallback (seconds)').fill('45');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Sign-in settings saved.').waitFor();
    const settings = (await call(svc.base, 'GET', '/v1/settings/sign-in', { auth: t.apiKey })).body;
    expect(settings.msgapp.fallback_timeout_sec).toBe(45);
    expect(settings.methods).toContain('voucher');
    // Sponsor approval is its own switch (sponsor.enabled), with who may sponsor beside it.
    await page.getByLabel('Sponsor approval: a host approves the guest by e-mail').check();
    await page.getByLabel('E-mail domains of sponsors (comma-separated, e.g. example.com)').fill('plaza.example, Ofis.example');
    await shot(page, 'sign-in-settings-sponsor-en');
    // The first save's "saved" line is still shown: this save is done when its PUT is answered.
    const [saved] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/v1/settings/sign-in') && r.request().method() === 'PUT'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    expect(saved.status()).toBe(200);
    const sponsor = (await call(svc.base, 'GET', '/v1/settings/sign-in', { auth: t.apiKey })).body.sponsor;
    expect(sponsor).toMatchObject({ enabled: true, allowed_domains: ['plaza.example', 'ofis.example'], allowed_emails: [] });

    // Today's chain holds this tenant's sign-ins and operator changes once the sink has stored them.
    await go(page, EN, 'compliance');
    for (let i = 0; ; i++) {
      await page.getByRole('button', { name: 'Show' }).click();
      const verdict = await page.getByText(/^The chain of \d{4}-\d{2}-\d{2} verifies: \d+ records/).count();
      if (verdict > 0) break;
      if (i > 20) throw new Error(`no verified chain: ${await page.locator('main').innerText()}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    await shot(page, 'compliance-chain-en');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download evidence pack' }).click()]);
    expect(download.suggestedFilename()).toMatch(/\.zip$/);
    await page.getByText(/^Evidence pack .*\.zip downloaded\.$/).waitFor();
    await page.close();
  });

  it('every page in Turkish and English, chosen by the operator and remembered; every control named', async () => {
    for (const [lang, w] of [['en', EN], ['tr', TR]] as const) {
      const page = await browser.context.newPage();
      await page.goto(`${svc.base}/console`);
      await page.locator('#api-key').waitFor();
      // The choice is made on the page (the language select, labelled in the language shown), and holds after a reload.
      const shown = await page.evaluate(() => document.documentElement.lang);
      await page.getByLabel(shown === 'tr' ? TR.language : EN.language, { exact: true }).selectOption(lang);
      await page.getByLabel(w.key).waitFor();
      await page.reload();
      await page.getByLabel(w.key).waitFor();
      expect(await page.evaluate(() => document.documentElement.lang)).toBe(lang);
      await shot(page, `sign-in-${lang}`);
      await signIn(page, t.apiKey, w);
      for (const p of PAGES) {
        await go(page, w, p);
        await page.waitForLoadState('networkidle');
        // Every button, link, input and select has an accessible name.
        const unnamed = await page.evaluate(() => [...document.querySelectorAll('button, a[href], input, select, textarea')].filter((el) => {
          const e = el as HTMLElement;
          const labelled = e.getAttribute('aria-label') || e.getAttribute('aria-labelledby')
            || (e.id && document.querySelector(`label[for="${e.id}"]`)) || e.closest('label') || (e.textContent ?? '').trim();
          return !labelled;
        }).map((el) => el.outerHTML.slice(0, 120)));
        expect(unnamed, `${lang} ${p}`).toEqual([]);
        if (p === 'live') {
          // The chart's legend names its time column in the page's language (uPlot's own is "Time").
          const legend = page.locator('.u-legend').first();
          await legend.waitFor();
          expect(await legend.innerText(), lang).toMatch(lang === 'tr' ? /^Dakika/ : /^Minute/);
        }
        await shot(page, `${p}-${lang}`);
      }
      await page.close();
    }
  });
});
