import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject } from 'vitest';
import { ConfigError, loadConfig } from '../../engine/index.js';
import { OutboundPolicy, TargetNotAllowedError, type Resolver } from '../../engine/net/outbound-target.js';
import { WebhookStore } from '../../engine/webhooks/webhook-store.js';
import { OutboundHttp } from '../../engine/net/outbound-http.js';
import { OutboundWebhookTransport } from '../../engine/webhooks/webhook-transport.js';
import { call, serviceTest, testEnv, until } from '../support/fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Where webhooks may go: loopback, private and metadata targets are refused
 * at save without the allow setting (ALLOW_PRIVATE_TARGETS, alias
 * WEBHOOK_ALLOW_PRIVATE_TARGETS), metadata with it too; and again at every
 * connection, to the address checked (a name that rebinds to loopback after
 * the save reaches nothing). The service here runs WITHOUT the setting.
 */
// A Redis database of its own: every engine process dispatches every tenant in its Redis, and the other test files'
// services allow private targets, so one of them could send the delivery this service must refuse.
const test = serviceTest(async () => ({
  REDIS_URL: `${inject('redisUrl')}/12`, SECRETS_KEY: randomBytes(32).toString('base64'), ALLOW_PRIVATE_TARGETS: 'false',
  WEBHOOK_POLL_MS: '20', WEBHOOK_RETRY_BASE_MS: '20',
}));
const SECRET = 'target-test-secret-0123456789';

/** A resolver from a table of answers per name, used in turn (the last one sticks). */
function scripted(table: Record<string, string[][]>): Resolver {
  const seen = new Map<string, number>();
  return async (host) => {
    const seq = table[host];
    if (!seq) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    const n = (seen.get(host) ?? 0) + 1;
    seen.set(host, n);
    return seq[Math.min(n, seq.length) - 1]!.map((address) => ({ address, family: address.includes(':') ? 6 as const : 4 as const }));
  };
}

describe('webhook targets', () => {
  let rx: WebhookReceiver;
  beforeAll(async () => { rx = await WebhookReceiver.start(); });
  afterAll(async () => { await rx.close(); });

  test('without the allow setting: loopback, private, link-local and metadata URLs are 400 target_not_allowed', async ({ svc, tenant }) => {
    const port = new URL(rx.url).port;
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '10.1.2.3', '192.168.1.10', '172.16.0.1', '100.64.0.1', '169.254.169.254',
      'metadata.google.internal', '2130706433', '[::ffff:127.0.0.1]', '[fd00:ec2::254]', '0.0.0.0']) {
      const r = await call(svc.base, 'POST', '/v1/webhooks', { auth: tenant.apiKey, body: { url: `http://${host}:${port}/hook`, events: ['session.start'], secret: SECRET } });
      expect(r.status, host).toBe(400);
      expect(r.body.error, host).toBe('target_not_allowed');
    }
    expect((await call(svc.base, 'GET', '/v1/webhooks', { auth: tenant.apiKey })).body.data).toEqual([]);
    expect(rx.requests).toHaveLength(0);
  });

  test('with the allow setting, loopback is accepted but metadata never', async ({ svc, tenant }) => {
    const e = svc.service.engine;
    const allowing = new WebhookStore(e.pool, e.redis, e.secrets, new OutboundPolicy({ allowPrivate: true }));
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://metadata.google.internal/', 'http://[fd00:ec2::254]/', 'http://100.100.100.200/']) {
      await expect(allowing.create(tenant.tenantId, { url, events: ['session.start'], secret: SECRET }), url).rejects.toMatchObject({ code: 'target_not_allowed' });
    }
    const ok = await allowing.create(tenant.tenantId, { url: rx.url, events: ['session.start'], secret: SECRET });
    expect(ok.active).toBe(true);
  });

  test('checked again at connect: a subscription to loopback saved elsewhere is refused by this service, which sends nothing', async ({ svc, tenant }) => {
    const e = svc.service.engine;
    const allowing = new WebhookStore(e.pool, e.redis, e.secrets, new OutboundPolicy({ allowPrivate: true }));
    const w = await allowing.create(tenant.tenantId, { url: `${rx.url}/connect`, events: ['session.start'], secret: SECRET });
    e.webhooksChanged();
    const before = rx.requests.length;
    await e.events.append(tenant.tenantId, 'session.start', tenant.hotspotId, { session_id: 's-refused' });
    await until(async () => (await call(svc.base, 'GET', `/v1/webhooks/${w.id}/deliveries?status=dead`, { auth: tenant.apiKey })).body.data.length === 1,
      { what: 'the refused delivery dead-lettered' });
    const attempts = (await call(svc.base, 'GET', `/v1/webhooks/${w.id}/deliveries`, { auth: tenant.apiKey })).body.data;
    expect(attempts).toHaveLength(3);
    for (const a of attempts) expect(a.error).toMatch(/^target_not_allowed/);
    expect(rx.requests.length).toBe(before);
  });

  test('DNS rebinding: public at save, loopback at send: refused at connect, the receiver hears nothing; metadata refused at connect even when allowed', async () => {
    const port = new URL(rx.url).port;
    const before = rx.requests.length;
    const rebinding = new OutboundPolicy({ allowPrivate: false, resolve: scripted({ 'hooks.rebind.test': [['93.184.216.34'], ['127.0.0.1']] }) });
    const url = `http://hooks.rebind.test:${port}/hook`;
    await expect(rebinding.checkUrl('url', url, ['http:', 'https:'])).resolves.toBeUndefined();
    const t = new OutboundWebhookTransport(new OutboundHttp({ outbound: rebinding }));
    await expect(t.post(url, {}, '{}', 5_000)).rejects.toBeInstanceOf(TargetNotAllowedError);
    const allowing = new OutboundWebhookTransport(new OutboundHttp({ outbound: new OutboundPolicy({ allowPrivate: true, resolve: scripted({ 'meta.rebind.test': [['169.254.169.254']] }) }) }));
    await expect(allowing.post(`http://meta.rebind.test:${port}/hook`, {}, '{}', 5_000)).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(allowing.post('http://169.254.169.254/latest', {}, '{}', 5_000)).rejects.toBeInstanceOf(TargetNotAllowedError);
    expect(rx.requests.length).toBe(before);
    // Allowed and pinned: the loopback receiver is reached through the checked address.
    expect((await allowing.post(rx.url, {}, '{}', 5_000)).status).toBe(200);
    t.close();
    allowing.close();
  });

  test('WEBHOOK_ALLOW_PRIVATE_TARGETS is the same switch as ALLOW_PRIVATE_TARGETS; set both differently and the service refuses to start', () => {
    const env = { ...testEnv(), ALLOW_PRIVATE_TARGETS: '' };
    expect(loadConfig(env).allowPrivateTargets).toBe(false);
    expect(loadConfig({ ...env, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }).allowPrivateTargets).toBe(true);
    expect(loadConfig({ ...env, ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }).allowPrivateTargets).toBe(true);
    expect(() => loadConfig({ ...env, ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...env, WEBHOOK_RETRY_BASE_MS: '0' })).toThrow(/WEBHOOK_RETRY_BASE_MS/);
    expect(loadConfig(env).webhooks).toEqual({ retryBaseMs: 1000, tenantConcurrency: 64, pollMs: 100, threadNice: 0 });
  });
});
