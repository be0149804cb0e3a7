import type { Page } from 'playwright-core';
import { afterAll, expect } from 'vitest';
import type { TestNas } from '../radius/helpers.js';
import { launchDesktop, launchPhone, requireChromium, shot, type PhoneBrowser } from '../support/browser.js';
import { call, keys, macs, serviceTest, type Running } from '../support/fixture.js';
import { SmtpListener } from '../support/smtp-listener.js';
import { freePort } from '../../scripts/local-services.js';
import { Code, linksIn, radiusAnswerFor, sponsorVenue, SPONSOR_DOMAIN, type Venue } from '../support/sponsor-venue.js';

/**
 * Sponsor approval end to end in Debian's Chromium: a guest on a phone asks
 * a host from the portal page, the e-mail reaches a real SMTP listener on
 * loopback, the host opens the approve link in a page of their own and
 * approves; the guest's page (still open) shows the success, and the NAS's
 * Access-Request for the MAC is accepted. A guest who closed the page is let
 * in all the same; without JavaScript the form posts and the "waiting"
 * page refreshes itself into the success. A used link is 409, an expired
 * one 410. Screenshots go to test-artifacts/portal/.
 */
let port = 0;
const test = serviceTest(async () => {
  port = await freePort();
  return { HTTP_PORT: String(port), PORTAL_PUBLIC_URL: `http://127.0.0.1:${port}` };
});
const nextMac = macs();
let smtp: SmtpListener;
let phone: PhoneBrowser | undefined;
let noJs: PhoneBrowser | undefined;
const nases: TestNas[] = [];

const UI = {
  en: {
    section: 'Ask your host', name: 'Your name', email: "Your host's e-mail address", send: 'Ask for access', waiting: 'Waiting for your host',
    done: 'You are connected', approve: 'Approve', hours8: '8 hours', approved: 'Approved. Deniz Kaya can use the Wi-Fi for 8 hours.',
    used: 'This request has already been answered. Nothing was changed.', expired: 'This link has expired or does not exist. Nothing was changed.',
  },
  tr: {
    section: 'Ev sahibinizden onay isteyin', name: 'Adınız', email: 'Ev sahibinizin e-posta adresi', send: 'Erişim iste', waiting: 'Ev sahibinizin yanıtı bekleniyor',
    done: 'Bağlandınız', approve: 'Onayla', hours8: '8 saat', approved: "Onaylandı. Deniz Kaya Wi-Fi'yi 8 saat kullanabilir.",
    used: 'Bu istek zaten yanıtlandı. Hiçbir şey değişmedi.', expired: 'Bu bağlantının süresi doldu ya da bağlantı geçersiz. Hiçbir şey değişmedi.',
  },
} as const;
type Lang = keyof typeof UI;

test.beforeAll(async () => {
  requireChromium();
  smtp = await SmtpListener.start();
  phone = await launchPhone();
  noJs = await launchPhone({ javaScriptEnabled: false });
});
afterAll(async () => {
  await phone?.close();
  await noJs?.close();
  for (const n of nases) await n.close();
  await smtp?.close();
});

const sponsorOf = (tag: string): string => `${tag}-${Math.random().toString(36).slice(2, 8)}@${SPONSOR_DOMAIN}`;

async function openPortal(b: PhoneBrowser, svc: Running, v: Venue, mac: string, lang: Lang): Promise<Page> {
  const page = await b.context.newPage();
  await page.goto(`${svc.base}/portal?hotspot_id=${v.t.hotspotId}&mac=${encodeURIComponent(mac)}&lang=${lang}`);
  return page;
}

/** The guest fills the sponsor form (found by its heading and labels) and sends it. */
async function askHost(page: Page, lang: Lang, sponsor: string): Promise<void> {
  const ui = UI[lang];
  const section = page.locator('section').filter({ has: page.getByRole('heading', { name: ui.section, exact: true }) });
  await section.getByRole('textbox', { name: ui.name }).fill('Deniz Kaya');
  await section.getByRole('textbox', { name: ui.email }).fill(sponsor);
  await section.getByRole('button', { name: ui.send }).click();
}

/** The host opens the approve link of their e-mail in a page of their own (their language), picks 8 hours and approves. */
async function hostApproves(svc: Running, sponsor: string, lang: Lang, tag: string): Promise<Page> {
  const ui = UI[lang];
  await smtp.waitFor(sponsor);
  const { approve } = linksIn(smtp, sponsor);
  // The link is the service's public address itself (PORTAL_PUBLIC_URL), not rewritten for the test.
  expect(approve.startsWith(`http://127.0.0.1:${port}/portal/sponsor/`)).toBe(true);
  const host = await phone!.context.newPage();
  await host.goto(`${approve}&lang=${lang}`);
  expect(await host.getByText('Deniz Kaya').first().isVisible()).toBe(true);
  await shot(host, `${tag}-host-1-request`);
  await host.getByRole('radio', { name: ui.hours8 }).check();
  await host.getByRole('button', { name: ui.approve }).click();
  await expect.poll(() => host.getByRole('status').textContent()).toContain(ui.approved);
  await shot(host, `${tag}-host-2-approved`);
  return host;
}

test('the guest asks, the host approves from the e-mail, the open page shows success and the NAS accepts the MAC; a second use is 409', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const mac = nextMac();
  const sponsor = sponsorOf('host');
  const page = await openPortal(phone!, svc, v, mac, 'en');
  await shot(page, 'sponsor-en-1-form');
  await askHost(page, 'en', sponsor);
  await expect.poll(() => page.getByRole('heading', { name: UI.en.waiting }).isVisible()).toBe(true);
  await shot(page, 'sponsor-en-2-waiting');

  // A second page on the same link, opened before the first use: its approve comes too late.
  const { approve } = await smtp.waitFor(sponsor).then(() => linksIn(smtp, sponsor));
  const late = await phone!.context.newPage();
  await late.goto(`${approve}&lang=en`);

  const host = await hostApproves(svc, sponsor, 'en', 'sponsor-en');
  await expect.poll(() => page.getByRole('heading', { name: UI.en.done }).isVisible(), { timeout: 15_000 }).toBe(true);
  await shot(page, 'sponsor-en-3-connected');
  expect(await radiusAnswerFor(svc, v.nas, mac)).toBe(Code.ACCESS_ACCEPT);
  const sid = await svc.service.engine.redis.hget(keys.grant(v.t.tenantId, v.t.hotspotId, mac), 'sid');

  const answer = late.waitForResponse((r) => r.request().method() === 'POST');
  await late.getByRole('button', { name: UI.en.approve }).click();
  expect((await answer).status()).toBe(409);
  await expect.poll(() => late.getByRole('alert').textContent()).toContain(UI.en.used);
  await shot(late, 'sponsor-en-4-second-use');
  expect(await svc.service.engine.redis.hget(keys.grant(v.t.tenantId, v.t.hotspotId, mac), 'sid')).toBe(sid);
  for (const p of [page, host, late]) await p.close();
});

test('a guest who closed the page is let in once the host approves (Turkish)', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const mac = nextMac();
  const sponsor = sponsorOf('kapali');
  const page = await openPortal(phone!, svc, v, mac, 'tr');
  await askHost(page, 'tr', sponsor);
  await expect.poll(() => page.getByRole('heading', { name: UI.tr.waiting }).isVisible()).toBe(true);
  await page.close();
  expect(await radiusAnswerFor(svc, v.nas, mac)).toBe(Code.ACCESS_REJECT);
  const host = await hostApproves(svc, sponsor, 'tr', 'sponsor-tr-closed');
  expect(await radiusAnswerFor(svc, v.nas, mac)).toBe(Code.ACCESS_ACCEPT);
  await host.close();
});

test('without JavaScript the form posts, the waiting page refreshes itself into the success (Turkish)', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const mac = nextMac();
  const sponsor = sponsorOf('nojs');
  const page = await openPortal(noJs!, svc, v, mac, 'tr');
  await askHost(page, 'tr', sponsor);
  await expect.poll(() => page.getByRole('heading', { name: UI.tr.waiting }).isVisible()).toBe(true);
  expect(page.url()).toContain('sponsor=spr_');
  await shot(page, 'sponsor-nojs-tr-1-waiting');
  const host = await hostApproves(svc, sponsor, 'tr', 'sponsor-nojs-tr');
  await expect.poll(() => page.getByRole('heading', { name: UI.tr.done }).isVisible(), { timeout: 20_000 }).toBe(true);
  await shot(page, 'sponsor-nojs-tr-2-connected');
  expect(await radiusAnswerFor(svc, v.nas, mac)).toBe(Code.ACCESS_ACCEPT);
  await page.close();
  await host.close();
});

test('an expired link shows a 410 page and changes nothing', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const mac = nextMac();
  const sponsor = sponsorOf('expired');
  const r = await call(svc.base, 'POST', '/api/v1/hotspot-portal/sponsor/request', {
    body: { sponsor_email: sponsor, guest_name: 'Deniz Kaya', mac, hotspot_id: v.t.hotspotId },
  });
  expect(r.status).toBe(200);
  await smtp.waitFor(sponsor);
  await svc.service.engine.redis.hset(keys.sponsorRequest(v.t.tenantId, r.body.request_id), 'exp', Date.now() - 1);
  const host = await phone!.context.newPage();
  const res = await host.goto(`${linksIn(smtp, sponsor).approve}&lang=en`);
  expect(res?.status()).toBe(410);
  expect(await host.getByRole('alert').textContent()).toContain(UI.en.expired);
  expect(await host.getByRole('button', { name: UI.en.approve }).count()).toBe(0);
  await shot(host, 'sponsor-expired-410');
  expect(await radiusAnswerFor(svc, v.nas, mac)).toBe(Code.ACCESS_REJECT);
  await host.close();
});

test("the console's Sponsor requests page lists the tenant's requests with their states", async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const sponsor = sponsorOf('console');
  const r = await call(svc.base, 'POST', '/api/v1/hotspot-portal/sponsor/request', {
    body: { sponsor_email: sponsor, guest_name: 'Deniz Kaya', mac: nextMac(), hotspot_id: v.t.hotspotId },
  });
  expect(r.status).toBe(200);
  const desk = await launchDesktop();
  try {
    const page = await desk.context.newPage();
    await page.goto(`${svc.base}/console`);
    await page.getByLabel(/API (key|anahtarı)/).fill(v.t.apiKey);
    await page.getByRole('button', { name: /^(Sign in|Giriş yap)$/ }).click();
    await page.getByRole('navigation').getByRole('link', { name: /^Sponsor (requests|istekleri)$/ }).click();
    await page.getByRole('heading', { level: 1, name: /^Sponsor (requests|istekleri)$/ }).waitFor({ timeout: 10_000 });
    const row = page.getByRole('row').filter({ hasText: 'Deniz Kaya' });
    await expect.poll(() => row.count(), { timeout: 15_000 }).toBe(1);
    expect(await row.textContent()).toContain(sponsor);
    expect(await row.textContent()).toMatch(/Waiting|Bekliyor/);
    await page.screenshot({ path: 'test-artifacts/portal/sponsor-console-list.png', fullPage: true });
  } finally {
    await desk.close();
  }
});
