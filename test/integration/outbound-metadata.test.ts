import { describe, expect } from 'vitest';
import { call, serviceTest, type Tenant } from '../support/fixture.js';

/**
 * ALLOW_PRIVATE_TARGETS=true (tests, on-premises): loopback and private
 * targets are saved, cloud metadata addresses still are not, in any spelling.
 */
const test = serviceTest({ ALLOW_PRIVATE_TARGETS: 'true' });

const sms = (t: Tenant, base_url: string) => ({ methods: ['sms_otp'], sms: { provider: 'netgsm', base_url, credentials_ref: `env://${t.tenantId.toUpperCase()}_NETGSM` } });

describe('metadata targets with ALLOW_PRIVATE_TARGETS=true', () => {
  test.for([
    'http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://[::ffff:169.254.169.254]/', 'http://[::ffff:a9fe:a9fe]/',
    'http://2852039166/', 'http://0xa9.0xfe.0xa9.0xfe/', 'http://100.100.100.200/', 'http://metadata.google.internal/computeMetadata/v1/',
  ])('sms.base_url %s: 400 target_not_allowed', async (url, { svc, tenant }) => {
    const r = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: tenant.apiKey, body: sms(tenant, url) });
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toBe('target_not_allowed');
  });

  test('loopback and private targets are saved', async ({ svc, tenant }) => {
    for (const url of ['http://127.0.0.1:8080', 'http://10.1.2.3/', 'http://[::1]:9000/']) {
      const r = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: tenant.apiKey, body: sms(tenant, url) });
      expect(r.status, `${url} ${JSON.stringify(r.body)}`).toBe(200);
    }
  });
});
