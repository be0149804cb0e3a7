import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, inject } from 'vitest';
import { projectPath, signPlatformToken } from '../../engine/index.js';
import { keyId } from '../../engine/secrets/secret-box.js';
import { FakeCarrier, SMS_PATH, TYPE_C_PATH } from '../support/fake-carrier.js';
import { call, JWT_SECRET, mac as macOf, newTenant, type Running, serviceTest, startService, type Tenant, until } from '../support/fixture.js';
import { SmtpListener } from '../support/smtp-listener.js';

const run = promisify(execFile);
const KEY_A = randomBytes(32);
const KEY_B = randomBytes(32);

const test = serviceTest({ SECRETS_KEY: KEY_A.toString('base64') });

/**
 * Tenant credentials given inline (issue 18, Build 6): sealed with AES-256-GCM
 * under SECRETS_KEY in tenant_secrets, answered only as `*_set: true`, kept out
 * of the audit chain, used by the next send without a restart, and re-sealed
 * under a new key by `cli secrets rotate` (run from dist/: build first).
 */
describe('tenant secrets at rest', () => {
  let svc: Running;
  let carrier: FakeCarrier;
  let smtp: SmtpListener;
  let macs = 0;

  test.beforeAll(async ({ svc: s_ }) => {
    svc = s_;
    carrier = await FakeCarrier.start();
    smtp = await SmtpListener.start();
    return async () => { await carrier.close(); await smtp.close(); };
  });

  const putSettings = (t: Tenant, body: Record<string, unknown>) => call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: t.apiKey, body });
  const smsWith = (credentials: string) => ({ methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', base_url: carrier.url, credentials } });
  const requestSms = (base: string, t: Tenant, phone: string) =>
    call(base, 'POST', '/api/v1/hotspot-portal/sms/request', { body: { phone, mac: macOf(++macs, 0x5e), hotspot_id: t.hotspotId } });
  const basic = (pair: string): string => `Basic ${Buffer.from(pair).toString('base64')}`;
  const rowOf = async (db: { query: Function }, t: Tenant, name: string) =>
    (await db.query('SELECT key_id, nonce, ciphertext FROM tenant_secrets WHERE tenant_id = $1 AND name = $2', [t.tenantId, name])).rows[0];

  test('inline SMS credentials are stored encrypted, answered as credentials_set, audited without them, and used on the next send without a restart', async ({ db }) => {
    const t = await newTenant(svc.service);
    const first = 'netuser1:Pw-first-0a1b2c';
    const put = await putSettings(t, smsWith(first));
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.sms).toEqual({ provider: 'netgsm', base_url: carrier.url, credentials_set: true });
    const read = await call(svc.base, 'GET', '/v1/settings/sign-in', { auth: t.apiKey });
    expect(read.body.sms).toEqual({ provider: 'netgsm', base_url: carrier.url, credentials_set: true });
    expect(JSON.stringify(read.body)).not.toContain('Pw-first');

    // The raw row: the current key's id beside a ciphertext that holds neither half of the pair.
    const row = await rowOf(db, t, 'sms.credentials');
    expect(row.key_id).toBe(keyId(KEY_A));
    expect(row.nonce).toHaveLength(12);
    expect(row.ciphertext.includes(Buffer.from('Pw-first'))).toBe(false);
    expect(row.ciphertext.includes(Buffer.from('netuser1'))).toBe(false);
    const doc = (await db.query('SELECT settings::text AS s FROM sign_in_settings WHERE tenant_id = $1', [t.tenantId])).rows[0].s;
    expect(doc).not.toContain('Pw-first');

    expect((await requestSms(svc.base, t, '+905321110001')).status).toBe(200);
    expect(carrier.to(SMS_PATH).at(-1)!.headers.authorization).toBe(basic(first));

    // A carrier account changed (onboarded) through the API: the very next send uses it.
    const second = 'netuser1:Pw-second-3d4e5f';
    expect((await putSettings(t, smsWith(second))).status).toBe(200);
    expect((await requestSms(svc.base, t, '+905321110002')).status).toBe(200);
    expect(carrier.to(SMS_PATH).at(-1)!.headers.authorization).toBe(basic(second));

    // The chain records the change, never the secret.
    const audited = async () => (await db.query(
      "SELECT details::text AS d FROM audit_records WHERE tenant_id = $1 AND event_type = 'sign_in_settings_changed'", [t.tenantId])).rows;
    await until(async () => (await audited()).length === 2);
    for (const r of await audited()) {
      expect(r.d).not.toContain('Pw-');
      expect(r.d).toContain('"credentials_set": true');
    }
  });

  test('credentials_set: true keeps the stored secret; a reference replaces it and the row goes', async ({ db }) => {
    const t = await newTenant(svc.service);
    expect((await putSettings(t, smsWith('keepme:Pw-keep-778899'))).status).toBe(200);
    const before = await rowOf(db, t, 'sms.credentials');
    const kept = await putSettings(t, { methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', base_url: carrier.url, credentials_set: true } });
    expect(kept.status).toBe(200);
    expect(kept.body.sms.credentials_set).toBe(true);
    expect((await rowOf(db, t, 'sms.credentials')).ciphertext).toEqual(before.ciphertext);
    const ref = `env://${t.tenantId.toUpperCase()}_NETGSM`;
    const byRef = await putSettings(t, { methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', base_url: carrier.url, credentials_ref: ref } });
    expect(byRef.body.sms).toEqual({ provider: 'netgsm', base_url: carrier.url, credentials_ref: ref });
    expect(await rowOf(db, t, 'sms.credentials')).toBeUndefined();
    // Nothing left to keep, and a secret that is not a pair: refused, without echoing it.
    const none = await putSettings(t, { sms: { provider: 'netgsm', credentials_set: true } });
    expect(none.status).toBe(400);
    const bad = await putSettings(t, { sms: { provider: 'netgsm', credentials: 'NoColonSecret-123' } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).not.toContain('NoColonSecret');
  });

  test('an inline SMTP URL is sealed too, answered as smtp_url_set, and the code goes out with its login', async ({ db }) => {
    const t = await newTenant(svc.service);
    const put = await putSettings(t, { methods: ['voucher', 'email'], email: { smtp_url: smtp.urlWithLogin('mailer7', 'Smtp-Pw-445566'), from: 'wifi@otel.example' } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.email).toEqual({ smtp_url_set: true, from: 'wifi@otel.example' });
    expect((await rowOf(db, t, 'email.smtp_url')).ciphertext.includes(Buffer.from('Smtp-Pw'))).toBe(false);
    const seen = smtp.messages.length;
    const r = await call(svc.base, 'POST', '/api/v1/hotspot-portal/email/request', { body: { email: 'guest7@example.org', mac: macOf(++macs, 0x5e), hotspot_id: t.hotspotId } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await until(() => smtp.messages.length > seen);
    expect(smtp.messages.at(-1)).toMatchObject({ to: ['guest7@example.org'], user: 'mailer7' });
  });

  test('the platform gives a messaging-app key inline: sealed, answered as api_key_set, used by the next type C send', async ({ db }) => {
    const t = await newTenant(svc.service);
    const platform = await signPlatformToken(new TextEncoder().encode(JWT_SECRET), 600);
    const pair = 'msguser:Pw-msgapp-c0ffee';
    const put = await call(svc.base, 'PUT', `/admin/msgapp-providers/${t.tenantId}`, { bearer: platform, body: { type: 'C', enabled: true, base_url: carrier.url, api_key: pair } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ api_key_ref: null, api_key_set: true, access_token_set: false, callback_secret_set: false });
    expect(JSON.stringify(put.body)).not.toContain('Pw-msgapp');
    const row = await rowOf(db, t, 'msgapp_provider.api_key');
    expect(row.key_id).toBe(keyId(KEY_A));
    expect(row.ciphertext.includes(Buffer.from('Pw-msgapp'))).toBe(false);
    expect((await putSettings(t, { methods: ['voucher', 'msgapp_otp'] })).status).toBe(200);
    const r = await call(svc.base, 'POST', '/api/v1/hotspot-portal/sms/request', { body: { phone: '+905321110009', mac: macOf(++macs, 0x5e), hotspot_id: t.hotspotId, channel: 'msgapp' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(carrier.to(TYPE_C_PATH).at(-1)!.headers.authorization).toBe(basic(pair));
  });

  test('another process takes new inline credentials on its next send once its copy of the settings renews (seconds), no restart', async () => {
    const t = await newTenant(svc.service);
    const other = await startService({ SECRETS_KEY: KEY_A.toString('base64') });
    try {
      expect((await putSettings(t, smsWith('proc:Pw-proc-old-111'))).status).toBe(200);
      expect((await requestSms(other.base, t, '+905321110021')).status).toBe(200);
      expect(carrier.to(SMS_PATH).at(-1)!.headers.authorization).toBe(basic('proc:Pw-proc-old-111'));
      const seen = await other.service.engine.signInSettings.get(t.tenantId);
      // Onboarded through this process; the other one still holds the settings (and sender) it read.
      expect((await putSettings(t, smsWith('proc:Pw-proc-new-222'))).status).toBe(200);
      await until(async () => (await other.service.engine.signInSettings.get(t.tenantId)) !== seen, { timeoutMs: 30_000, what: 'the other process re-reading the settings' });
      expect((await requestSms(other.base, t, '+905321110022')).status).toBe(200);
      expect(carrier.to(SMS_PATH).at(-1)!.headers.authorization).toBe(basic('proc:Pw-proc-new-222'));
    } finally {
      await other.stop();
    }
  });

  test('cli secrets rotate re-encrypts under the new key, and a service holding only the new key still sends', async ({ db }) => {
    const t = await newTenant(svc.service);
    const pair = 'rotuser:Pw-rotate-99aabb';
    expect((await putSettings(t, smsWith(pair))).status).toBe(200);
    const before = await rowOf(db, t, 'sms.credentials');
    expect(before.key_id).toBe(keyId(KEY_A));

    // The database is shared with the other test files, whose rows are sealed under keys of their own: the command
    // reports those as unreadable and exits 1 for them. This tenant's rows must all be rotated.
    let exit = 0;
    const { stdout } = await run(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), 'secrets', 'rotate', '--json'], {
      env: {
        ...process.env, REDIS_URL: inject('redisUrl'), DATABASE_URL: inject('databaseUrl'), JWT_SECRET,
        SECRETS_KEY: KEY_B.toString('hex'), SECRETS_KEY_OLD: KEY_A.toString('base64'),
      },
    }).catch((err: { code?: number; stdout?: string }) => {
      if (err.code !== 1 || !err.stdout) throw err;
      exit = 1;
      return { stdout: err.stdout };
    });
    const out = JSON.parse(stdout) as { key_id: string; rotated: number; unreadable: { tenant_id: string }[] };
    expect(out.key_id).toBe(keyId(KEY_B));
    expect(out.unreadable.filter((u) => u.tenant_id === t.tenantId)).toEqual([]);
    expect(exit).toBe(out.unreadable.length > 0 ? 1 : 0);
    expect(out.rotated).toBeGreaterThanOrEqual(1);
    const after = await rowOf(db, t, 'sms.credentials');
    expect(after.key_id).toBe(keyId(KEY_B));
    expect(after.ciphertext.equals(before.ciphertext)).toBe(false);

    // Only the new key: the re-sealed row opens, and the carrier gets the same pair.
    const other = await startService({ SECRETS_KEY: KEY_B.toString('hex') });
    try {
      expect((await requestSms(other.base, t, '+905321110003')).status).toBe(200);
      expect(carrier.to(SMS_PATH).at(-1)!.headers.authorization).toBe(basic(pair));
    } finally {
      await other.stop();
    }
  });
});
