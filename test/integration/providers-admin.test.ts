import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { promisify } from 'node:util';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, vi } from 'vitest';
import { projectPath, signOperatorToken, signPlatformToken } from '../../engine/index.js';
import type { SignInConfigSource } from '../../engine/signin/providers/types.js';
import { ProviderRegistry } from '../../engine/signin/providers/provider-registry.js';
import { ProviderFailures } from '../../engine/signin/providers/provider-failures.js';
import { OutboundPolicy } from '../../engine/net/outbound-target.js';
import { FakeCarrier, TYPE_C_PATH } from '../support/fake-carrier.js';
import { call, JWT_SECRET, newTenant, type Running, serviceTest, type Tenant, testEnv } from '../support/fixture.js';
import { capturingLogger } from '../support/log-capture.js';

const secret = new TextEncoder().encode(JWT_SECRET);
const ENV = `ADMIN_TEST_${process.pid}`;
const CRED = 'usr9:Very-S3cret-pass';
const CB_SECRET = 'cb-S3cret-token-42';

const test = serviceTest();

/**
 * Platform administration of messaging-app providers (types A, B and C; the
 * issue's contract): who may call it, what it stores and shows, and the delivery
 * callbacks it makes possible; plus the sender registry over real tables.
 */
describe('platform administration and provider resolution', () => {
  let svc: Running;
  let carrier: FakeCarrier;
  let platform: string;
  // One tenant for the whole file: the list and the registry tests look at what the first test stored.
  let t: Tenant;

  test.beforeAll(async ({ svc: s_ }) => {
    process.env[ENV] = CRED;
    process.env[`${ENV}_CB`] = CB_SECRET;
    svc = s_;
    carrier = await FakeCarrier.start();
    platform = await signPlatformToken(secret, 600);
    t = await newTenant(svc.service);
  });
  afterAll(async () => {
    await carrier?.close();
  });

  const putC = (tenantId: string, bearer: string, extra: Record<string, unknown> = {}) =>
    call(svc.base, 'PUT', `/admin/msgapp-providers/${tenantId}`, { bearer, body: { type: 'C', enabled: true, api_key_ref: `env://${ENV}`, ...extra } });

  test('a platform token sets type C: provider netgsm, production base_url, references shown and no secret value', async () => {
    const r = await putC(t.tenantId, platform);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      tenant_id: t.tenantId, type: 'C', provider: 'netgsm', enabled: true, base_url: 'https://api.netgsm.com.tr',
      api_key_ref: `env://${ENV}`, business_device_id: null, template_id: null, template_name: null,
    });
    const list = await call(svc.base, 'GET', '/admin/msgapp-providers', { bearer: platform });
    expect(list.status).toBe(200);
    expect(list.body.data.find((p: { tenant_id: string }) => p.tenant_id === t.tenantId)).toEqual(r.body);
    for (const text of [JSON.stringify(r.body), JSON.stringify(list.body)]) {
      expect(text).not.toContain('Very-S3cret');
      expect(text).not.toContain(CB_SECRET);
    }
  });

  test('tenant credentials are refused on /admin/ (403), missing or bad tokens are 401', async () => {
    const tenantJwt = await signOperatorToken(secret, t.tenantId, ['admin', 'platform_admin'], 600);
    for (const [opts, status] of [
      [{ auth: t.apiKey }, 403], [{ bearer: t.apiKey }, 403], [{ bearer: tenantJwt }, 403], [{}, 401], [{ bearer: 'not.a.jwt' }, 401],
    ] as const) {
      const r = await call(svc.base, 'GET', '/admin/msgapp-providers', opts);
      expect(r.status, JSON.stringify(opts)).toBe(status);
      const w = await call(svc.base, 'PUT', `/admin/msgapp-providers/${t.tenantId}`, { ...opts, body: { type: 'C', enabled: false } });
      expect(w.status).toBe(status);
    }
    // A platform JWT without the role is not a platform administrator either.
    const { SignJWT } = await import('jose');
    const roleless = await new SignJWT({ roles: ['admin'] }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('10m').sign(secret);
    expect((await call(svc.base, 'GET', '/admin/msgapp-providers', { bearer: roleless })).body.error).toBe('platform_only');
  });

  test('a platform token opens no tenant route', async () => {
    const r = await call(svc.base, 'GET', '/v1/vouchers', { bearer: platform });
    expect(r.status).toBe(401);
  });

  test('refuses bodies the type forbids, secrets in clear, and unknown tenants', async () => {
    const bad = await putC(t.tenantId, platform, { business_device_id: 'dev-1' });
    expect(bad.status).toBe(400);
    expect(bad.body.details).toEqual([{ field: 'business_device_id', message: 'must stay empty for type C' }]);
    const clear = await call(svc.base, 'PUT', `/admin/msgapp-providers/${t.tenantId}`, { bearer: platform, body: { type: 'C', enabled: true, api_key_ref: CRED } });
    expect(clear.status).toBe(400);
    expect(JSON.stringify(clear.body)).not.toContain('Very-S3cret');
    expect((await putC('ten_does_not_exist', platform)).status).toBe(404);
    expect((await call(svc.base, 'PUT', `/admin/msgapp-providers/${t.tenantId}`, { bearer: platform, body: { type: 'D', enabled: true } })).status).toBe(400);
  });

  test('npm run cli -- token --platform prints a JWT with roles [platform_admin] and no tenant_id that the admin API takes', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), 'token', '--platform', '--ttl', '120'],
      { env: { ...process.env, ...testEnv() } });
    const token = stdout.trim();
    const claims = decodeJwt(token);
    expect(claims.roles).toEqual(['platform_admin']);
    expect(claims).not.toHaveProperty('tenant_id');
    expect(claims.exp! - claims.iat!).toBe(120);
    expect((await call(svc.base, 'GET', '/admin/msgapp-providers', { bearer: token })).status).toBe(200);
  });

  describe('senders and delivery callbacks', () => {
    let tc: Tenant;
    const delivered: [string, string, string][] = [];

    beforeAll(async () => {
      tc = await newTenant(svc.service);
      // The OTP service is the receiver; the report here names a request it never made, so only the call is observed.
      vi.spyOn(svc.service.engine.otp, 'delivered').mockImplementation(async (a, b, c) => { delivered.push([a, b, c]); });
    });

    const callback = (provider: string, query: string, body: string, headers: Record<string, string> = {}) =>
      fetch(`${svc.base}/api/v1/hotspot-portal/otp/delivery/${provider}?${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

    test('type C: the engine sends through the configured carrier; the carrier\'s report with the right token marks the request delivered', async () => {
      const put = await putC(tc.tenantId, platform, { base_url: carrier.url, callback_secret_ref: `env://${ENV}_CB` });
      expect(put.body.callback_secret_ref).toBe(`env://${ENV}_CB`);
      const sender = await svc.service.engine.otpSenders.forTenant(tc.tenantId, 'msgapp');
      expect(sender).toMatchObject({ channel: 'msgapp', provider: 'netgsm' });
      const r = await sender!.send({ tenantId: tc.tenantId, requestId: 'otp_req_9', to: '+905551112233', code: '123456', locale: 'tr' });
      expect(r.ok).toBe(true);
      const jobid = (r as { providerRef: string }).providerRef;
      expect(carrier.to(TYPE_C_PATH).at(-1)!.json).toEqual({ to: '+905551112233', code: '123456' });

      const wrong = await callback('netgsm', `tenant_id=${tc.tenantId}&token=guess`, JSON.stringify({ jobid, status: 1 }));
      expect(wrong.status).toBe(401);
      expect((await wrong.json()).error).toBe('callback_refused');
      expect(await callback('netgsm', `tenant_id=${t.tenantId}&token=${CB_SECRET}`, JSON.stringify({ jobid, status: 1 }))).toMatchObject({ status: 401 });
      expect(await callback('msgapp-b', `tenant_id=${tc.tenantId}`, '{}', { 'x-hub-signature-256': 'sha256=00' })).toMatchObject({ status: 401 });
      expect(delivered).toEqual([]);

      const ok = await callback('netgsm', `tenant_id=${tc.tenantId}&token=${CB_SECRET}`, JSON.stringify({ jobid, status: 1 }));
      expect(ok.status).toBe(204);
      expect(delivered).toEqual([[tc.tenantId, 'otp_req_9', 'msgapp']]);
      expect((await callback('unknown', `tenant_id=${tc.tenantId}`, '{}')).status).toBe(404);
    });

    test('type B: an X-Hub-Signature-256 over the raw body is accepted; the same signature on another body is refused', async () => {
      const tb = await newTenant(svc.service);
      const put = await call(svc.base, 'PUT', `/admin/msgapp-providers/${tb.tenantId}`, { bearer: platform, body: {
        type: 'B', enabled: true, base_url: carrier.url, access_token_ref: `env://${ENV}`, phone_number_id: '42', template_name: 'wifi_code:tr',
        callback_secret_ref: `env://${ENV}_CB`,
      } });
      expect(put.status).toBe(200);
      carrier.answerNext('/42/messages', { status: 200, body: { messages: [{ id: 'wamid.B1' }] } });
      const sender = await svc.service.engine.otpSenders.forTenant(tb.tenantId, 'msgapp');
      expect((await sender!.send({ tenantId: tb.tenantId, requestId: 'otp_req_b', to: '+905551112244', code: '654321', locale: 'en' })).ok).toBe(true);
      const body = JSON.stringify({ entry: [{ changes: [{ value: { statuses: [{ id: 'wamid.B1', status: 'delivered' }] } }] }] });
      const sig = 'sha256=' + createHmac('sha256', CB_SECRET).update(body).digest('hex');
      expect((await callback('msgapp-b', `tenant_id=${tb.tenantId}`, body.replace('delivered', 'read '), { 'x-hub-signature-256': sig })).status).toBe(401);
      expect((await callback('msgapp-b', `tenant_id=${tb.tenantId}`, body, { 'x-signature-256': sig })).status).toBe(401);
      expect((await callback('msgapp-b', `tenant_id=${tb.tenantId}`, body, { 'x-hub-signature-256': sig })).status).toBe(204);
      expect(delivered.at(-1)).toEqual([tb.tenantId, 'otp_req_b', 'msgapp']);
    });

    test('a disabled provider resolves to no sender, at once after the change', async () => {
      expect(await svc.service.engine.otpSenders.forTenant(tc.tenantId, 'msgapp')).not.toBeNull();
      expect((await putC(tc.tenantId, platform, { enabled: false })).status).toBe(200);
      expect(await svc.service.engine.otpSenders.forTenant(tc.tenantId, 'msgapp')).toBeNull();
    });
  });

  test('the registry resolves SMS and e-mail from the sign-in settings port, caches for its TTL, and forgets on invalidate', async () => {
    let clock = 1_000_000;
    let reads = 0;
    const source: SignInConfigSource = {
      smsConfig: async (id) => { reads++; return id === t.tenantId ? { provider: 'netgsm', credentials_ref: `env://${t.tenantId.toUpperCase()}_SMS`, base_url: carrier.url } : null; },
      emailConfig: async (id) => (id === t.tenantId ? { from: 'wifi@otel.example' } : null),
    };
    const engine = svc.service.engine;
    const mk = (smtpUrl: string | undefined): ProviderRegistry => new ProviderRegistry({
      config: source, msgapp: engine.msgappProviders, redis: engine.redis, failures: new ProviderFailures(capturingLogger().log, engine.metrics),
      outbound: new OutboundPolicy({ allowPrivate: true }), smtpUrl, smtpFrom: 'x@localhost', ttlMs: 1000, now: () => clock,
    });
    const reg = mk(undefined);
    const sms = await reg.forTenant(t.tenantId, 'sms');
    expect(sms).toMatchObject({ channel: 'sms', provider: 'netgsm_sms' });
    expect(await reg.forTenant(t.tenantId, 'sms')).toBe(sms);
    expect(reads).toBe(1);
    clock += 1001;
    expect(await reg.forTenant(t.tenantId, 'sms')).not.toBe(sms);
    expect(reads).toBe(2);
    reg.invalidate(t.tenantId);
    await reg.forTenant(t.tenantId, 'sms');
    expect(reads).toBe(3);
    expect(await reg.forTenant('ten_other', 'sms')).toBeNull();
    // A setting naming a variable outside the tenant's own (a row written before that rule) gives no sender.
    const foreign = new ProviderRegistry({
      config: { smsConfig: async () => ({ provider: 'netgsm', credentials_ref: 'env://DATABASE_URL', base_url: carrier.url }), emailConfig: async () => null },
      msgapp: engine.msgappProviders, redis: engine.redis, failures: new ProviderFailures(capturingLogger().log, engine.metrics), smtpFrom: 'x@localhost', smtpUrl: undefined,
      outbound: new OutboundPolicy({ allowPrivate: true }),
    });
    expect(await foreign.forTenant(t.tenantId, 'sms')).toBeNull();
    // E-mail needs an SMTP server: the tenant's own or the service-wide one.
    expect(await reg.forTenant(t.tenantId, 'email')).toBeNull();
    expect(await mk('smtp://127.0.0.1:2525').forTenant(t.tenantId, 'email')).toMatchObject({ channel: 'email', provider: 'smtp' });
  });
});
