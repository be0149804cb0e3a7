import { randomBytes, randomInt } from 'node:crypto';
import type { Locator, Page } from 'playwright-core';
import { afterAll, expect, inject } from 'vitest';
import { signPlatformToken } from '../../engine/index.js';
import { Code, RadiusCrypto } from '../../radius/index.js';
import { TestNas, accessRequest } from '../radius/helpers.js';
import { launchPhone, requireChromium, shot, type PhoneBrowser } from '../support/browser.js';
import { FakeCarrier, SMS_PATH, TYPE_C_PATH } from '../support/fake-carrier.js';
import { call, dashed, JWT_SECRET, macs, newTenant, serviceTest, type Running, type Tenant, until } from '../support/fixture.js';
import { addLoopbackNas } from '../support/loopback-nas.js';
import { SmtpListener } from '../support/smtp-listener.js';

/** The messaging-app provider is the platform's record: it may name any variable. */
const MSGAPP_CRED = `E2E_MSGAPP_${process.pid}`;
const SMS_SECRET = 'e2euser:e2e-Sms-pass';
/** The messaging-app code is given up on after this long and goes by SMS. */
const FALLBACK_SEC = 2;

/**
 * The service keeps its Redis state in a database of its own (7) on the shared
 * test Redis. Messaging-app fallback watches are claimed by any engine on the
 * same Redis, as they must be in production; but other files run engines with
 * recording senders and a clock moved hours ahead (otp-signin), which would
 * claim this file's watches at once and send the fallback where no carrier sees it.
 */
const test = serviceTest(async () => ({ REDIS_URL: `${inject('redisUrl')}/7` }));
const rc = new RadiusCrypto();
const nextMac = macs();

type Lang = 'tr' | 'en';
/** What the guest reads on the page, per language: the test finds every control by its visible label. */
const UI = {
  tr: {
    phoneSection: 'Telefon numarası', emailSection: 'E-posta', phone: 'Cep telefonu numarası', email: 'E-posta adresi',
    sms: 'Kısa mesaj (SMS)', msgapp: 'Mesajlaşma uygulaması', send: 'Kod gönder', code: '6 haneli kod', connect: 'Bağlan',
    terms: 'Kullanım koşullarını kabul ediyorum', done: 'Bağlandınız', locale: 'tr-TR',
    sentSms: 'Kod kısa mesajla (SMS) gönderiliyor.', sentMsgapp: 'Kod mesajlaşma uygulamanıza gönderiliyor.', wrong: 'Kod doğru değil. 4 deneme hakkınız kaldı.',
    resent: 'Mesajlaşma uygulaması kodu iletemedi, bu yüzden kodu kısa mesajla (SMS) gönderdik.',
    smsText: 'Wi-Fi giris kodunuz', mailSubject: 'Wi-Fi giriş kodunuz',
  },
  en: {
    phoneSection: 'Phone number', emailSection: 'E-mail', phone: 'Mobile phone number', email: 'E-mail address',
    sms: 'Text message (SMS)', msgapp: 'Messaging app', send: 'Send code', code: '6-digit code', connect: 'Connect',
    terms: 'I accept the terms of use', done: 'You are connected', locale: 'en-GB',
    sentSms: 'The code is on its way by text message (SMS).', sentMsgapp: 'The code is on its way to your messaging app.', wrong: 'The code is not right. You have 4 tries left.',
    resent: 'The messaging app did not deliver the code, so we sent it by text message (SMS) instead.',
    smsText: 'Your Wi-Fi sign-in code', mailSubject: 'Your Wi-Fi sign-in code',
  },
} as const;

/** A test NAS of the venue's hotspot on its own loopback address (a NAS is known by its source address). */
interface Nas { radius: TestNas; secret: string }

/**
 * A guest on a 360 x 740 phone signs in on the portal page with an SMS code
 * (read from a fake Netgsm on loopback), with a messaging-app code that is
 * never delivered and comes by SMS after the configured fallback time-out
 * (the page says so), and with an e-mail code (read from a real SMTP listener
 * on loopback), in Turkish and English, in Debian's Chromium driven by
 * playwright-core. Each sign-in then gets an Access-Accept for the device's
 * MAC from a test NAS, and the session lists with its method and masked
 * username. Screenshots of each state go to test-artifacts/portal/.
 */
let svc: Running;
let carrier: FakeCarrier;
let smtp: SmtpListener;
let platform: string;
let browser: PhoneBrowser | undefined;
const nases: TestNas[] = [];

test.beforeAll(async ({ svc: s }) => {
  requireChromium();
  svc = s;
  carrier = await FakeCarrier.start();
  smtp = await SmtpListener.start();
  process.env[MSGAPP_CRED] = 'e2euser:e2e-Msgapp-pass';
  platform = await signPlatformToken(new TextEncoder().encode(JWT_SECRET), 600);
  browser = await launchPhone();
});
afterAll(async () => {
  await browser?.close();
  for (const n of nases) await n.close();
  await carrier?.close();
  await smtp?.close();
});

/** A venue offering every code method, its carrier the fake one, with terms to accept, and a NAS. */
async function venue(): Promise<{ t: Tenant; nas: Nas }> {
  const t = await newTenant(svc.service, 'Kafe Deniz');
  // A tenant's own settings may name only the variables named after it.
  const own = t.tenantId.toUpperCase();
  process.env[`${own}_NETGSM`] = SMS_SECRET;
  process.env[`${own}_SMTP`] = smtp.urlWithLogin('wifi', 'mail-pass');
  const put = async (path: string, body: unknown, opts: { auth?: string; bearer?: string }) => {
    const r = await call(svc.base, 'PUT', path, { ...opts, body });
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
  };
  await put(`/v1/hotspots/${t.hotspotId}`, { portal: {
    display_name: 'Kafe Deniz', primary_color: '#0b5394', terms_required: true,
    terms: { tr: 'Bu ağı yasalara uygun kullanacağımı kabul ediyorum.', en: 'I will use this network lawfully.' },
  } }, { auth: t.apiKey });
  await put('/v1/settings/sign-in', {
    methods: ['voucher', 'sms_otp', 'msgapp_otp', 'email'],
    sms: { provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${own}_NETGSM` },
    msgapp: { fallback_sms: true, fallback_timeout_sec: FALLBACK_SEC },
    email: { smtp_url_ref: `env://${own}_SMTP`, from: 'wifi@kafe-deniz.example' },
  }, { auth: t.apiKey });
  // Type C answers "00" to every send and never calls back: the code is never delivered.
  await put(`/admin/msgapp-providers/${t.tenantId}`, { type: 'C', enabled: true, api_key_ref: `env://${MSGAPP_CRED}`, base_url: carrier.url }, { bearer: platform });
  return { t, nas: await registerNas(t) };
}

async function registerNas(t: Tenant): Promise<Nas> {
  const nas = await addLoopbackNas(svc.base, t);
  nases.push(nas.radius);
  return nas;
}

/** The NAS asks for the device by MAC (Calling-Station-Id), as after a captive sign-in; returns the reply's code. */
async function radiusAnswerFor(nas: Nas, mac: string): Promise<number> {
  const req = accessRequest({ secret: nas.secret, id: randomInt(0, 256), callingStationId: dashed(mac) });
  await nas.radius.send(req, svc.service.radiusPorts.auth);
  const endsAt = Date.now() + 5000;
  for (;;) {
    const got = await nas.radius.next(Math.max(1, endsAt - Date.now()));
    if (!got) throw new Error(`no RADIUS reply for ${mac}`);
    if (got.msg[1] === req[1] && rc.verifyResponseAuthenticator(got.msg, got.msg.length, req.subarray(4, 20), nas.secret)) return got.msg[0]!;
  }
}

/** The session the API lists for the device once the outbox sink wrote it. */
async function sessionOf(t: Tenant, mac: string): Promise<{ auth_method: string; username: string; expires_at: string }> {
  let found: { mac: string; auth_method: string; username: string; expires_at: string } | undefined;
  await until(async () => {
    const r = await call(svc.base, 'GET', '/v1/sessions?status=active', { auth: t.apiKey });
    found = r.body.data.find((s: { mac: string }) => s.mac === mac);
    return found !== undefined;
  }, { what: `session of ${mac} listed` });
  return found!;
}

/** The page a guest's phone opens, fresh, for one device. */
async function openPortal(t: Tenant, mac: string, lang: Lang): Promise<Page> {
  const page = await browser!.context.newPage();
  await page.goto(`${svc.base}/portal?hotspot_id=${t.hotspotId}&mac=${encodeURIComponent(mac)}&lang=${lang}`);
  return page;
}

/** A section of the page by its heading (the voucher, phone and e-mail forms each have their own Connect button). */
const section = (page: Page, heading: string): Locator =>
  page.locator('section').filter({ has: page.getByRole('heading', { name: heading, exact: true }) });

async function acceptTerms(page: Page, lang: Lang): Promise<void> {
  const box = page.getByRole('checkbox', { name: UI[lang].terms });
  if (!(await box.isChecked())) await box.check();
}

/** Types the code into the section's code field and connects; waits for the confirmation and returns its text. */
async function connectWith(page: Page, form: Locator, code: string, lang: Lang): Promise<string> {
  await form.getByLabel(UI[lang].code).fill(code);
  await form.getByRole('button', { name: UI[lang].connect }).click();
  await expect.poll(() => page.getByRole('heading', { name: UI[lang].done }).isVisible(), { timeout: 10_000 }).toBe(true);
  return (await page.locator('#success').textContent()) ?? '';
}

/**
 * After the sign-in: the NAS is answered Access-Accept for the device, the
 * session carries the method and masked username, and the confirmation the
 * guest read named the session's end with its date (the default session is
 * 24 h long: a time alone would read as now).
 */
async function expectSignedIn(t: Tenant, nas: Nas, mac: string, method: string, username: string, confirmation: string, lang: Lang): Promise<void> {
  expect(await radiusAnswerFor(nas, mac)).toBe(Code.ACCESS_ACCEPT);
  const s = await sessionOf(t, mac);
  expect(s).toMatchObject({ auth_method: method, username });
  // Chromium and this process share the machine's time zone.
  const end = new Date(s.expires_at).toLocaleString(UI[lang].locale, { day: 'numeric', month: 'long', hour: '2-digit', minute: '2-digit' });
  expect(confirmation).toContain(end);
}

for (const lang of ['tr', 'en'] as const) {
  const ui = UI[lang];
  // Numbers of their own per language: the carrier is shared by the whole file.
  const n = lang === 'tr' ? 1 : 3;
  const smsPhone = { spaced: `+90 532 555 01 0${n}`, e164: `+90532555010${n}`, domestic: `532555010${n}`, masked: `+905*******0${n}` };
  const appPhone = { e164: `+90532555020${n + 1}`, domestic: `532555020${n + 1}`, masked: `+905*******0${n + 1}` };

  test(`signs a guest in with an SMS code, ${lang}`, async () => {
    const { t, nas } = await venue();
    const mac = nextMac();
    const page = await openPortal(t, mac, lang);
    const tag = `sms-${lang}`;
    await shot(page, `${tag}-1-form`);

    const phone = section(page, ui.phoneSection);
    await phone.getByRole('textbox', { name: ui.phone }).fill(smsPhone.spaced);
    await phone.getByRole('radio', { name: ui.sms }).check();
    await acceptTerms(page, lang);
    await phone.getByRole('button', { name: ui.send }).click();
    await expect.poll(() => phone.getByLabel(ui.code).isVisible()).toBe(true);
    await expect.poll(() => phone.getByRole('status').textContent()).toBe(ui.sentSms);
    expect(await phone.getByText(smsPhone.spaced).isVisible()).toBe(true);
    await shot(page, `${tag}-2-code-sent`);

    // The carrier got one SMS on Netgsm's OTP route, with the tenant's credential, in the guest's language.
    await until(() => carrier.lastCode(smsPhone.e164) !== null, { what: 'SMS at the fake carrier' });
    const sms = carrier.to(SMS_PATH).filter((r) => r.json?.no === smsPhone.domestic);
    expect(sms).toHaveLength(1);
    expect(sms[0]!.headers.authorization).toBe(`Basic ${Buffer.from(SMS_SECRET).toString('base64')}`);
    expect(sms[0]!.json.msg).toContain(ui.smsText);
    const code = carrier.lastCode(smsPhone.e164)!;

    // A wrong code first: the error names the problem and the tries left.
    await phone.getByLabel(ui.code).fill(code === '000000' ? '111111' : '000000');
    await phone.getByRole('button', { name: ui.connect }).click();
    await expect.poll(() => page.getByRole('alert').isVisible()).toBe(true);
    expect(await page.getByRole('alert').textContent()).toContain(ui.wrong);
    await shot(page, `${tag}-3-wrong-code`);

    const confirmation = await connectWith(page, phone, code, lang);
    await shot(page, `${tag}-4-connected`);
    await page.close();
    await expectSignedIn(t, nas, mac, 'sms_otp', smsPhone.masked, confirmation, lang);
  });

  test(`a messaging-app code never delivered comes by SMS after the fallback time-out, and the page says so, ${lang}`, async () => {
    const { t, nas } = await venue();
    const mac = nextMac();
    const page = await openPortal(t, mac, lang);
    const tag = `msgapp-fallback-${lang}`;

    const phone = section(page, ui.phoneSection);
    await phone.getByRole('textbox', { name: ui.phone }).fill(appPhone.e164);
    await phone.getByRole('radio', { name: ui.msgapp }).check();
    await acceptTerms(page, lang);
    await shot(page, `${tag}-1-form`);
    await phone.getByRole('button', { name: ui.send }).click();
    await expect.poll(() => phone.getByLabel(ui.code).isVisible()).toBe(true);

    // The messaging app took the send (type C, "00") and never confirmed delivery.
    await until(() => carrier.to(TYPE_C_PATH).some((r) => r.json?.to === appPhone.e164), { what: 'type C send' });
    expect(carrier.to(SMS_PATH).filter((r) => r.json?.no === appPhone.domestic)).toHaveLength(0);
    // The page's first status poll follows the send at once, well inside the time-out.
    await expect.poll(() => phone.getByRole('status').textContent()).toBe(ui.sentMsgapp);
    await shot(page, `${tag}-2-code-sent`);

    // After the time-out the poller sends a fresh code by SMS; the page's status poll tells the guest.
    const status = phone.getByRole('status');
    await expect.poll(() => status.textContent(), { timeout: (FALLBACK_SEC + 15) * 1000 }).toBe(ui.resent);
    // The status turns resent_by_sms when the poller claims the fallback (in Redis), before it hands the SMS to the
    // carrier: the page can say so while the SMS is still on its way. Wait for it at the carrier, then count.
    await until(() => carrier.to(SMS_PATH).some((r) => r.json?.no === appPhone.domestic), { what: 'the fallback SMS at the fake carrier' });
    const sms = carrier.to(SMS_PATH).filter((r) => r.json?.no === appPhone.domestic);
    expect(sms).toHaveLength(1);
    expect(sms[0]!.json.msg).toContain(ui.smsText);
    await shot(page, `${tag}-3-resent-by-sms`);

    const confirmation = await connectWith(page, phone, carrier.lastCode(appPhone.e164)!, lang);
    await shot(page, `${tag}-4-connected`);
    await page.close();
    // The code that signed the guest in came by SMS.
    await expectSignedIn(t, nas, mac, 'sms_otp', appPhone.masked, confirmation, lang);
  });

  test(`signs a guest in with an e-mail code, ${lang}`, async () => {
    const { t, nas } = await venue();
    const mac = nextMac();
    const page = await openPortal(t, mac, lang);
    const tag = `email-${lang}`;
    const address = `misafir-${lang}-${randomBytes(3).toString('hex')}@example.com`;

    const mail = section(page, ui.emailSection);
    await mail.getByRole('textbox', { name: ui.email }).fill(address);
    await acceptTerms(page, lang);
    await shot(page, `${tag}-1-form`);
    await mail.getByRole('button', { name: ui.send }).click();
    await expect.poll(() => mail.getByLabel(ui.code).isVisible()).toBe(true);
    expect(await mail.getByText(address).isVisible()).toBe(true);

    // A real SMTP exchange: the tenant's server (by reference, with its login), the guest's language.
    const got = await smtp.waitFor(address);
    expect(got.user).toBe('wifi');
    expect(got.from).toBe('wifi@kafe-deniz.example');
    expect(got.subject).toContain(ui.mailSubject);
    await shot(page, `${tag}-2-code-sent`);

    const confirmation = await connectWith(page, mail, smtp.lastCode(address)!, lang);
    await shot(page, `${tag}-3-connected`);
    await page.close();
    // Answers mask an address as they mask a phone number: its first letter and its domain.
    const [local = '', domain = ''] = address.split('@');
    await expectSignedIn(t, nas, mac, 'email', `${local.slice(0, 1)}${'*'.repeat(local.length - 1)}@${domain}`, confirmation, lang);
  });
}
