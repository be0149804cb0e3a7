import { beforeAll, describe, expect } from 'vitest';
import { DEFAULT_MODULES, signOperatorToken } from '../../engine/index.js';
import { FakeCarrier } from '../support/fake-carrier.js';
import { call, JWT_SECRET, mac as macOf, newTenant, type Running, serviceTest, type Tenant, until, clearOfMidnight, DAY_SCENARIO_MS } from '../support/fixture.js';
import { SmtpListener } from '../support/smtp-listener.js';

let smtp: SmtpListener;
const test = serviceTest(async () => {
  smtp = await SmtpListener.start();
  return { SMTP_URL: smtp.url };
});
const secret = new TextEncoder().encode(JWT_SECRET);
const today = (): string => new Date().toISOString().slice(0, 10);

/**
 * Issue 18, Build 6: what leaves the API about secrets and guests. A hotspot's
 * UAM secret never reaches the audit chain; the evidence pack and the unmasked
 * chain need the admin or compliance role; phone numbers and e-mail addresses
 * are masked alike in sessions, the audit day and the dashboard's audit page.
 */
describe('identities and roles', () => {
  // Its records are read back by their UTC day: the file's scenarios run clear of midnight.
  beforeAll(() => clearOfMidnight(DAY_SCENARIO_MS), DAY_SCENARIO_MS + 10_000);
  let svc: Running;
  let carrier: FakeCarrier;
  let t: Tenant;
  let viewer: string;
  let auditor: string;

  test.beforeAll(async ({ svc: s_ }) => {
    svc = s_;
    carrier = await FakeCarrier.start();
    t = await newTenant(svc.service, 'Roles Venue', [...DEFAULT_MODULES, 'dashboard']);
    viewer = await signOperatorToken(secret, t.tenantId, ['viewer'], 600);
    auditor = await signOperatorToken(secret, t.tenantId, ['compliance'], 600);
    process.env[`${t.tenantId.toUpperCase()}_NETGSM`] = 'roles:Pw-roles-1';
    const put = await call(svc.base, 'PUT', '/v1/settings/sign-in', {
      auth: t.apiKey,
      body: {
        methods: ['voucher', 'sms_otp', 'email'], email: { from: 'wifi@otel.example' },
        sms: { provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${t.tenantId.toUpperCase()}_NETGSM` },
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    return async () => { await carrier.close(); await smtp.close(); };
  });

  const chain = (opts: { bearer?: string; unmasked?: boolean } = {}) => call(svc.base, 'GET',
    `/v1/compliance/audit-chain?date=${today()}${opts.unmasked ? '&unmasked=true' : ''}`, opts.bearer ? { bearer: opts.bearer } : { auth: t.apiKey });

  test("a hotspot's UAM secret is in the audit chain only as \"[set]\", read back through the API", async () => {
    const uam = 'FasKey-Uam-Secret-5150';
    const put = await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { name: 'Lobby 2', portal: { gateway: 'opennds', uam_secret: uam } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(JSON.stringify(put.body)).not.toContain(uam);
    let record: { details: { changed: { name: string; portal: Record<string, unknown> } } } | undefined;
    await until(async () => {
      const day = await chain();
      record = day.body.records?.find((r: { event_type: string }) => r.event_type === 'hotspot_updated');
      return record !== undefined;
    });
    expect(record!.details.changed).toEqual({ name: 'Lobby 2', portal: { gateway: 'opennds', uam_secret: '[set]' } });
    expect(JSON.stringify((await chain({ unmasked: true })).body)).not.toContain(uam);
  });

  test('a viewer gets 403 with the catalogue body on the evidence pack and the unmasked chain; admin and compliance get them', async () => {
    const pack = (bearer?: string) => call(svc.base, 'GET', `/v1/compliance/5651/export?from=${today()}&to=${today()}`, bearer ? { bearer } : { auth: t.apiKey });
    const refusedPack = await pack(viewer);
    expect(refusedPack.status).toBe(403);
    expect(refusedPack.body).toEqual({ error: 'forbidden', message: expect.stringContaining('compliance') });
    const refusedChain = await chain({ bearer: viewer, unmasked: true });
    expect(refusedChain.status).toBe(403);
    expect(refusedChain.body).toEqual({ error: 'forbidden', message: expect.stringContaining('compliance') });
    // The masked chain stays readable to every role.
    expect((await chain({ bearer: viewer })).status).toBe(200);
    expect((await chain({ bearer: auditor, unmasked: true })).status).toBe(200);
    expect((await pack(auditor)).status).toBe(200);
    expect((await pack()).status).toBe(200);
  });

  test('without SECRETS_KEY a secret given inline is refused (503 secrets_unavailable) and nothing is stored', async ({ db }) => {
    const r = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: t.apiKey, body: { sms: { provider: 'netgsm', credentials: 'nokey:Pw-nokey-1234' } } });
    expect(r.status).toBe(503);
    expect(r.body).toEqual({ error: 'secrets_unavailable', message: expect.any(String) });
    expect((await db.query('SELECT count(*)::int AS n FROM tenant_secrets WHERE tenant_id = $1', [t.tenantId])).rows[0].n).toBe(0);
    // The settings stand as they were.
    expect((await call(svc.base, 'GET', '/v1/settings/sign-in', { auth: t.apiKey })).body.sms.credentials_ref).toMatch(/^env:\/\//);
  });

  test('phone numbers and e-mail addresses are masked alike in sessions, the audit day and the dashboard audit page', async () => {
    const phone = '+905321230001';
    const email = 'ayse.yilmaz@example.org';
    // A guest signs in by SMS, another by e-mail.
    expect((await call(svc.base, 'POST', '/api/v1/hotspot-portal/sms/request', { body: { phone, mac: macOf(1, 0x6a), hotspot_id: t.hotspotId } })).status).toBe(200);
    const bySms = await call(svc.base, 'POST', `/api/v1/hotspot-portal/sms/verify?hotspot_id=${t.hotspotId}`, { body: { phone, code: carrier.lastCode(phone), mac: macOf(1, 0x6a) } });
    expect(bySms.status, JSON.stringify(bySms.body)).toBe(200);
    const seen = smtp.messages.length;
    expect((await call(svc.base, 'POST', '/api/v1/hotspot-portal/email/request', { body: { email, mac: macOf(2, 0x6a), hotspot_id: t.hotspotId } })).status).toBe(200);
    await until(() => smtp.messages.length > seen);
    const byMail = await call(svc.base, 'POST', `/api/v1/hotspot-portal/email/verify?hotspot_id=${t.hotspotId}`, { body: { email, code: smtp.lastCode(email), mac: macOf(2, 0x6a) } });
    expect(byMail.status, JSON.stringify(byMail.body)).toBe(200);

    const maskedPhone = '+905*******01';
    const maskedMail = 'a**********@example.org';
    const list = () => call(svc.base, 'GET', '/v1/sessions', { auth: t.apiKey });
    // Listed once the sink has written both sessions' rows.
    await until(async () => (await list()).body.data?.length >= 2);
    const sessions = await list();
    const names = (sessions.body.data as { username: string }[]).map((s) => s.username);
    expect(names).toEqual(expect.arrayContaining([maskedPhone, maskedMail]));
    expect(JSON.stringify(sessions.body)).not.toContain(email);
    expect(JSON.stringify(sessions.body)).not.toContain(phone);

    const starts = async (unmasked = false) => ((await chain({ unmasked })).body.records as { event_type: string; username: string }[])
      .filter((r) => r.event_type === 'session_start').map((r) => r.username);
    await until(async () => (await starts()).length >= 2);
    expect(await starts()).toEqual(expect.arrayContaining([maskedPhone, maskedMail]));
    expect(JSON.stringify((await chain()).body)).not.toContain('ayse.yilmaz');
    expect(await starts(true)).toEqual(expect.arrayContaining([phone, email]));

    const page = await call(svc.base, 'GET', '/api/v1/tenants/me/audit?limit=100', { auth: t.apiKey });
    expect(page.status).toBe(200);
    const pageNames = (page.body.data as { username: string | null }[]).map((e) => e.username);
    expect(pageNames).toEqual(expect.arrayContaining([maskedPhone, maskedMail]));
    expect(JSON.stringify(page.body)).not.toContain('ayse.yilmaz');
  });
});
