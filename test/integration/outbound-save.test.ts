import { afterAll, describe, expect } from 'vitest';
import { signPlatformToken } from '../../engine/index.js';
import { call, JWT_SECRET, serviceTest, type Tenant } from '../support/fixture.js';

/**
 * A service as deployed (ALLOW_PRIVATE_TARGETS=false): a tenant's settings
 * and a platform provider record that name a loopback, private or metadata
 * target are refused when saved, 400 target_not_allowed, and nothing is
 * stored. Before, a regex let every one of these through.
 */
const test = serviceTest({ ALLOW_PRIVATE_TARGETS: 'false' });
const set: string[] = [];
afterAll(() => { for (const name of set) delete process.env[name]; });

describe('outbound targets checked at save, private targets not allowed', () => {
  const sms = (t: Tenant, base_url: string) => ({ methods: ['sms_otp'], sms: { provider: 'netgsm', base_url, credentials_ref: `env://${t.tenantId.toUpperCase()}_NETGSM` } });

  test.for([
    'http://127.0.0.1:8080', 'http://localhost/', 'http://2130706433/', 'http://0x7f.1/', 'http://[::1]/', 'http://10.0.0.5/',
    'http://192.168.1.1/', 'http://100.64.1.1/', 'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/',
    'http://[::ffff:127.0.0.1]/', 'http://0.0.0.0/', 'http://metadata.google.internal/',
  ])('sms.base_url %s: 400 target_not_allowed, settings unchanged', async (url, { svc, tenant }) => {
    const r = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: tenant.apiKey, body: sms(tenant, url) });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body).toEqual({ error: 'target_not_allowed', message: expect.stringContaining('sms.base_url') });
    const now = await call(svc.base, 'GET', '/v1/settings/sign-in', { auth: tenant.apiKey });
    expect(now.body.sms).toBeNull();
  });

  test('a public literal address is saved', async ({ svc, tenant }) => {
    const r = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: tenant.apiKey, body: sms(tenant, 'https://93.184.216.34/') });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });

  test('the SMTP server an e-mail reference names: loopback refused, without the URL (it holds a password) in the answer', async ({ svc, tenant }) => {
    const name = `${tenant.tenantId.toUpperCase()}_SMTP`;
    set.push(name);
    for (const url of ['smtp://mailer:s3cr3t@127.0.0.1:2525', 'smtps://mailer:s3cr3t@2130706433:465', 'smtp://[::1]:25', 'smtp://169.254.169.254:25']) {
      process.env[name] = url;
      const r = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: tenant.apiKey, body: { methods: ['email'], email: { smtp_url_ref: `env://${name}` } } });
      expect(r.status, url).toBe(400);
      expect(r.body.error).toBe('target_not_allowed');
      expect(r.body.message).toContain('email.smtp_url_ref');
      expect(JSON.stringify(r.body)).not.toContain('s3cr3t');
    }
    process.env[name] = 'smtp://mailer:s3cr3t@93.184.216.34:587';
    const ok = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: tenant.apiKey, body: { methods: ['email'], email: { smtp_url_ref: `env://${name}` } } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  test('a messaging-app provider base_url set by the platform: loopback refused, nothing stored', async ({ svc, tenant }) => {
    const platform = await signPlatformToken(new TextEncoder().encode(JWT_SECRET), 600);
    const put = (base_url: string) => call(svc.base, 'PUT', `/admin/msgapp-providers/${tenant.tenantId}`, {
      bearer: platform, body: { type: 'A', enabled: true, api_key_ref: 'env://SOME_KEY', business_device_id: 'd1', template_id: 't1', base_url },
    });
    for (const url of ['http://127.0.0.1:9/', 'http://[fe80::1]/', 'http://169.254.169.254/']) {
      const r = await put(url);
      expect(r.status, url).toBe(400);
      expect(r.body).toEqual({ error: 'target_not_allowed', message: expect.stringContaining('base_url') });
    }
    expect(await svc.service.engine.msgappProviders.get(tenant.tenantId)).toBeNull();
    expect((await put('https://93.184.216.34/')).status).toBe(200);
  });
});
