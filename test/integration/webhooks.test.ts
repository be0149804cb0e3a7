import { randomBytes } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject } from 'vitest';
import { verifySignatureHeader } from '../../engine/webhooks/webhook-signature.js';
import { call, newTenant, newVoucher, serviceTest, until, type Running, type Tenant } from '../support/fixture.js';
import { WebhookReceiver, type Received } from '../support/webhook-receiver.js';

/**
 * Webhooks end to end on loopback (issue 19 item 2): subscriptions through
 * the public API, deliveries from the events stream to a real HTTP
 * receiver, signed; retries with the same X-Webhook-Id; the 5 s deadline;
 * redirects, 410 and Retry-After; dead letters and redelivery; tenants kept
 * apart. Back-off base 50 ms (WEBHOOK_RETRY_BASE_MS) so retries are quick.
 */
// A Redis database of its own: every engine process dispatches the deliveries of every tenant in its Redis, and a
// process of another test file killed while holding one of these deliveries would keep it for its claim's lease.
const test = serviceTest(async () => ({
  REDIS_URL: `${inject('redisUrl')}/10`, SECRETS_KEY: randomBytes(32).toString('base64'), WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_POLL_MS: '20',
  // The slow-receiver test counts its tenant's slots: 16 here (the default is 64).
  WEBHOOK_TENANT_CONCURRENCY: '16',
}));
const SECRET = 'test-signing-secret-0123456789';

describe('webhooks', () => {
  let rx: WebhookReceiver;
  beforeAll(async () => { rx = await WebhookReceiver.start(); });
  afterAll(async () => { await rx.close(); });

  /** A subscription of `t` to the receiver at `path`. */
  const subscribe = async (svc: Running, t: Tenant, events: string[], path: string, secret = SECRET): Promise<string> => {
    const r = await call(svc.base, 'POST', '/v1/webhooks', { auth: t.apiKey, body: { url: rx.url.replace('/hook', path), events, secret } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.id;
  };
  const emit = (svc: Running, t: Tenant, type: 'session.start' | 'device.new', data: Record<string, unknown>): Promise<string> =>
    svc.service.engine.events.append(t.tenantId, type, t.hotspotId, data);
  const at = (path: string): Received[] => rx.requests.filter((r) => r.path === path);
  const path = (): string => `/hook/${randomBytes(6).toString('hex')}`;

  test('POST /v1/webhooks answers 201 {id, url, events, active, created_at}, never the secret; events are checked against the eight webhook types', async ({ svc, tenant, db }) => {
    const url = rx.url + '/created';
    const r = await call(svc.base, 'POST', '/v1/webhooks', { auth: tenant.apiKey, body: { url, events: ['session.start', 'voucher.redeemed'], secret: SECRET } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ url, events: ['session.start', 'voucher.redeemed'], active: true });
    expect(r.body.id).toMatch(/^whk_/);
    expect(Date.parse(r.body.created_at)).toBeGreaterThan(0);
    expect(JSON.stringify(r.body)).not.toContain(SECRET);
    const list = await call(svc.base, 'GET', '/v1/webhooks', { auth: tenant.apiKey });
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([r.body.id]);
    expect(JSON.stringify(list.body)).not.toContain(SECRET);
    // Sealed at rest, and not in the audit chain's record of the creation.
    const sealed = await db.query<{ ciphertext: Buffer }>('SELECT ciphertext FROM tenant_secrets WHERE tenant_id = $1 AND name = $2', [tenant.tenantId, `webhook.${r.body.id}`]);
    expect(sealed.rows).toHaveLength(1);
    expect(sealed.rows[0]!.ciphertext.toString('latin1')).not.toContain(SECRET);
    await until(async () => (await db.query("SELECT 1 FROM audit_records WHERE tenant_id = $1 AND event_type = 'webhook_created'", [tenant.tenantId])).rowCount === 1,
      { what: 'the audit record' });
    const audit = await db.query("SELECT details::text AS d FROM audit_records WHERE tenant_id = $1 AND event_type = 'webhook_created'", [tenant.tenantId]);
    expect(audit.rows[0].d).not.toContain(SECRET);

    for (const events of [['session.extend'], ['nope'], []]) {
      const bad = await call(svc.base, 'POST', '/v1/webhooks', { auth: tenant.apiKey, body: { url, events, secret: SECRET } });
      expect(bad.status, JSON.stringify(events)).toBe(400);
      expect(bad.body.error).toBe('validation_failed');
    }
    const withCreds = await call(svc.base, 'POST', '/v1/webhooks', { auth: tenant.apiKey, body: { url: rx.url.replace('http://', 'http://u:p@'), events: ['session.start'], secret: SECRET } });
    expect(withCreds.status).toBe(400);
  });

  test("another tenant's webhook id is 404 on every route", async ({ svc, tenant }) => {
    const id = await subscribe(svc, tenant, ['session.start'], path());
    const other = await newTenant(svc.service);
    for (const [method, p] of [['GET', `/v1/webhooks/${id}`], ['DELETE', `/v1/webhooks/${id}`], ['GET', `/v1/webhooks/${id}/deliveries`],
      ['POST', `/v1/webhooks/${id}/deliveries/dlv_x/redeliver`]] as const) {
      const r = await call(svc.base, method, p, { auth: other.apiKey });
      expect(r.status, `${method} ${p}`).toBe(404);
      expect(r.body.error).toBe('webhook_not_found');
    }
    const rotate = await call(svc.base, 'POST', `/v1/webhooks/${id}/rotate-secret`, { auth: other.apiKey, body: { secret: 'another-secret-0123456789' } });
    expect(rotate.status).toBe(404);
    expect((await call(svc.base, 'GET', '/v1/webhooks', { auth: other.apiKey })).body.data).toEqual([]);
    expect((await call(svc.base, 'GET', `/v1/webhooks/${id}`, { auth: tenant.apiKey })).status).toBe(200);
  });

  test("any secret a receiver holds signs its deliveries, GitHub's test vector and a short one among them; control characters are refused", async ({ svc, tenant }) => {
    for (const secret of ["It's a Secret to Everybody", 's3cret']) {
      const p = path();
      await subscribe(svc, tenant, ['device.new'], p, secret);
      await emit(svc, tenant, 'device.new', { mac: '02:00:00:00:00:01' });
      await rx.when(() => at(p).some((r) => r.answered === 200), `a delivery signed with ${JSON.stringify(secret)}`);
      const r = at(p)[0]!;
      expect(verifySignatureHeader(String(r.headers['x-signature-256']), r.body, secret)).toBe(true);
      expect(new StandardWebhook(Buffer.from(secret), { format: 'raw' }).verify(r.body, r.headers as Record<string, string>)).toEqual(JSON.parse(r.body));
    }
    for (const secret of ['', 'line\nbreak', 'x'.repeat(257)]) {
      const bad = await call(svc.base, 'POST', '/v1/webhooks', { auth: tenant.apiKey, body: { url: rx.url, events: ['device.new'], secret } });
      expect(bad.status, JSON.stringify(secret)).toBe(400);
      expect(bad.body.error).toBe('validation_failed');
    }
  });

  test('a real sign-in is delivered signed: session.start and auth.success, the body {id, type, created_at, tenant_id, data}', async ({ svc, tenant, mac }) => {
    const p = path();
    await subscribe(svc, tenant, ['session.start', 'auth.success'], p);
    const voucher = await newVoucher(svc.base, tenant);
    const device = mac();
    const v = await call(svc.base, 'POST', '/api/v1/hotspot-portal/voucher/verify', { body: { hotspot_id: tenant.hotspotId, code: voucher.code, mac: device } });
    expect(v.status).toBe(200);
    await rx.when(() => at(p).filter((r) => r.answered === 200).length >= 2, 'session.start and auth.success');
    const got = at(p);
    expect(got.map((r) => JSON.parse(r.body).type).sort()).toEqual(['auth.success', 'session.start']);
    for (const r of got) {
      const body = JSON.parse(r.body);
      expect(Object.keys(body)).toEqual(['id', 'type', 'created_at', 'tenant_id', 'data']);
      expect(body.id).toMatch(/^evt_/);
      expect(body.tenant_id).toBe(tenant.tenantId);
      expect(verifySignatureHeader(String(r.headers['x-signature-256']), r.body, SECRET)).toBe(true);
      expect(String(r.headers['x-signature-256'])).toMatch(/^sha256=[0-9a-f]{64}$/);
      expect(new StandardWebhook(Buffer.from(SECRET), { format: 'raw' }).verify(r.body, r.headers as Record<string, string>)).toEqual(body);
      expect(r.headers['x-webhook-id']).toBe(r.headers['webhook-id']);
      expect(r.headers['x-webhook-timestamp']).toBe(r.headers['webhook-timestamp']);
    }
    const start = JSON.parse(got.find((r) => JSON.parse(r.body).type === 'session.start')!.body);
    expect(start.data).toMatchObject({ session_id: v.body.session_id, mac: device, method: 'voucher', hotspot_id: tenant.hotspotId });
  });

  test('real flows: a refused code is auth.failure with its reason, an operator disconnect is session.end', async ({ svc, tenant, mac }) => {
    const p = path();
    await subscribe(svc, tenant, ['auth.failure', 'session.end'], p);
    const voucher = await newVoucher(svc.base, tenant);
    const device = mac();
    const bad = await call(svc.base, 'POST', '/api/v1/hotspot-portal/voucher/verify', { body: { hotspot_id: tenant.hotspotId, code: 'NO-SUCH-CODE', mac: device } });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    const v = await call(svc.base, 'POST', '/api/v1/hotspot-portal/voucher/verify', { body: { hotspot_id: tenant.hotspotId, code: voucher.code, mac: device } });
    expect(v.status).toBe(200);
    expect((await call(svc.base, 'DELETE', `/v1/sessions/${v.body.session_id}`, { auth: tenant.apiKey })).status).toBe(200);
    await rx.when(() => at(p).filter((r) => r.answered === 200).length >= 2, 'auth.failure and session.end');
    const bodies = at(p).map((r) => JSON.parse(r.body));
    expect(bodies.find((b) => b.type === 'auth.failure').data).toMatchObject({ hotspot_id: tenant.hotspotId, method: 'voucher', reason: 'voucher_not_found' });
    expect(bodies.find((b) => b.type === 'session.end').data).toMatchObject({ session_id: v.body.session_id, mac: device, method: 'voucher' });
    // Only the types subscribed to: the session's start and the sign-in's success were not sent here.
    expect(bodies.map((b) => b.type).sort()).toEqual(['auth.failure', 'session.end']);
  });

  test('fails twice, then 200: the third attempt carries the same X-Webhook-Id; the deliveries list shows all three', async ({ svc, tenant }) => {
    const p = path();
    const id = await subscribe(svc, tenant, ['session.start'], p);
    const before = rx.reply;
    rx.reply = (r, i) => (r.path === p && at(p).length <= 2 ? { status: 500 } : before(r, i));
    try {
      await emit(svc, tenant, 'session.start', { session_id: 's-retry' });
      await rx.when(() => at(p).some((r) => r.answered === 200), 'the third attempt answered 200');
    } finally { rx.reply = before; }
    const got = at(p);
    expect(got).toHaveLength(3);
    expect(new Set(got.map((r) => r.headers['x-webhook-id'])).size).toBe(1);
    expect(new Set(got.map((r) => r.body)).size).toBe(1);
    await until(async () => (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries`, { auth: tenant.apiKey })).body.data.length === 3,
      { what: 'three attempts listed' });
    const list = (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries`, { auth: tenant.apiKey })).body.data;
    expect(list.map((a: { status: string; code: number; attempt: number }) => [a.attempt, a.status, a.code])).toEqual([[3, 'delivered', 200], [2, 'failed', 500], [1, 'failed', 500]]);
    expect(list[0].delivery_id).toBe(got[0]!.headers['x-webhook-id']);
  });

  test('an answer after 6 s is a failed attempt (timed out at 5 s); the retry is delivered', async ({ svc, tenant }) => {
    const p = path();
    const id = await subscribe(svc, tenant, ['session.start'], p);
    const before = rx.reply;
    rx.reply = (r, i) => (r.path === p && at(p).length === 1 ? { status: 200, delayMs: 6_000 } : before(r, i));
    try {
      await emit(svc, tenant, 'session.start', { session_id: 's-slow' });
      await rx.when(() => at(p).some((r) => r.answered === 200), 'the second attempt answered 200', 30_000);
    } finally { rx.reply = before; }
    const got = at(p);
    expect(got).toHaveLength(2);
    expect(got[0]!.answered).toBe(0); // the sender had gone when the slow answer was due
    const list = (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries`, { auth: tenant.apiKey })).body.data;
    const first = list.find((a: { attempt: number }) => a.attempt === 1);
    expect(first).toMatchObject({ status: 'failed', code: null });
    expect(first.error).toMatch(/timeout/);
    expect(first.duration_ms).toBeGreaterThanOrEqual(4_900);
    expect(first.duration_ms).toBeLessThan(6_000);
  });

  test('three failures: dead letter, listed with status=dead, counted; redelivery sends it again with the same id', async ({ svc, tenant }) => {
    const p = path();
    const id = await subscribe(svc, tenant, ['device.new'], p);
    const before = rx.reply;
    const deadBefore = svc.service.engine.metrics.value('webhook_dead_letters_total');
    let healthy = false;
    rx.reply = (r, i) => (r.path === p && !healthy ? { status: 503 } : before(r, i));
    try {
      await emit(svc, tenant, 'device.new', { mac: '02:00:00:00:00:01' });
      await until(async () => (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries?status=dead`, { auth: tenant.apiKey })).body.data.length === 1,
        { what: 'the dead letter' });
      expect(at(p)).toHaveLength(3);
      const dead = (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries?status=dead`, { auth: tenant.apiKey })).body.data[0];
      expect(dead).toMatchObject({ status: 'dead', attempt: 3, code: 503, event_type: 'device.new' });
      // The dispatcher's thread reports its counters to the main thread a moment after it settles.
      await until(async () => svc.service.engine.metrics.value('webhook_dead_letters_total') === deadBefore + 1, { what: 'the dead letter counted' });
      expect(await svc.service.engine.metrics.render()).toContain('guestwifi_webhook_dead_letters_total');
      healthy = true;
      const again = await call(svc.base, 'POST', `/v1/webhooks/${id}/deliveries/${dead.delivery_id}/redeliver`, { auth: tenant.apiKey });
      expect(again.status).toBe(202);
      await rx.when(() => at(p).some((r) => r.answered === 200), 'the redelivery');
      expect(at(p)[3]!.headers['x-webhook-id']).toBe(dead.delivery_id);
      const unknown = await call(svc.base, 'POST', `/v1/webhooks/${id}/deliveries/dlv_nope/redeliver`, { auth: tenant.apiKey });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toBe('webhook_delivery_not_found');
    } finally { rx.reply = before; }
  });

  test("a slow receiver holds only its tenant's slots (WEBHOOK_TENANT_CONCURRENCY, 16): another tenant is delivered meanwhile", async ({ svc, tenant }) => {
    const slow = path();
    await subscribe(svc, tenant, ['device.new'], slow);
    const other = await newTenant(svc.service);
    const fast = path();
    await subscribe(svc, other, ['device.new'], fast);
    const before = rx.reply;
    rx.reply = (r, i) => (r.path === slow && at(slow).length <= 16 ? { status: 200, delayMs: 6_000 } : before(r, i));
    try {
      for (let i = 0; i < 20; i++) await emit(svc, tenant, 'device.new', { mac: `02:00:00:00:01:${String(i).padStart(2, '0')}` });
      await rx.when(() => at(slow).length >= 16, "the slow tenant's slots full");
      await emit(svc, other, 'device.new', { mac: '02:00:00:00:02:01' });
      await rx.when(() => at(fast).some((r) => r.answered === 200), "the other tenant's delivery");
      // Still all hanging, and no more than the bound in flight: the other four wait for a slot.
      expect(at(slow)).toHaveLength(16);
      expect(at(slow).every((r) => r.answered === 0)).toBe(true);
    } finally { rx.reply = before; }
  });

  test('a redirect is a failed attempt, never followed', async ({ svc, tenant }) => {
    const p = path();
    const id = await subscribe(svc, tenant, ['session.start'], p);
    const before = rx.reply;
    rx.reply = (r, i) => (r.path === p ? { status: 302, headers: { location: `${p}/elsewhere` } } : before(r, i));
    try {
      await emit(svc, tenant, 'session.start', { session_id: 's-redirect' });
      await until(async () => (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries?status=dead`, { auth: tenant.apiKey })).body.data.length === 1,
        { what: 'dead after three redirects' });
    } finally { rx.reply = before; }
    expect(at(p)).toHaveLength(3);
    expect(at(`${p}/elsewhere`)).toHaveLength(0);
    const list = (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries`, { auth: tenant.apiKey })).body.data;
    expect(list.every((a: { code: number; error: string }) => a.code === 302 && /redirect/.test(a.error))).toBe(true);
  });

  test('a 2xx with a long answer body is a delivery (success is the status), sent once', async ({ svc, tenant }) => {
    const p = path();
    const id = await subscribe(svc, tenant, ['session.start'], p);
    const before = rx.reply;
    rx.reply = (r, i) => (r.path === p ? { status: 200, body: 'x'.repeat(200 * 1024) } : before(r, i));
    try {
      await emit(svc, tenant, 'session.start', { session_id: 's-long-answer' });
      await until(async () => (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries`, { auth: tenant.apiKey })).body.data.length === 1,
        { what: 'the attempt recorded' });
    } finally { rx.reply = before; }
    const list = (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries`, { auth: tenant.apiKey })).body.data;
    expect(list.map((a: { status: string; code: number }) => [a.status, a.code])).toEqual([['delivered', 200]]);
    expect(at(p)).toHaveLength(1);
  });

  test('410 Gone disables the subscription (active: false) and nothing more is sent to it, a redelivery neither (409)', async ({ svc, tenant }) => {
    const p = path();
    const id = await subscribe(svc, tenant, ['session.start'], p);
    const before = rx.reply;
    rx.reply = (r, i) => (r.path === p ? { status: 410 } : before(r, i));
    try {
      await emit(svc, tenant, 'session.start', { session_id: 's-gone' });
      await until(async () => (await call(svc.base, 'GET', `/v1/webhooks/${id}`, { auth: tenant.apiKey })).body.active === false, { what: 'disabled' });
    } finally { rx.reply = before; }
    expect((await call(svc.base, 'GET', `/v1/webhooks/${id}`, { auth: tenant.apiKey })).body).toMatchObject({ active: false, disabled_reason: 'gone' });
    expect(at(p)).toHaveLength(1);
    // Its one delivery is kept (dead), but asking for it again is refused, not accepted and then dropped unsent.
    const gone = String(at(p)[0]!.headers['x-webhook-id']);
    const again = await call(svc.base, 'POST', `/v1/webhooks/${id}/deliveries/${gone}/redeliver`, { auth: tenant.apiKey });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 'webhook_inactive', message: expect.stringContaining('disabled') });
    // A control subscription of the same tenant proves later events flow; the disabled one gets none of them.
    const q = path();
    await subscribe(svc, tenant, ['session.start'], q);
    await emit(svc, tenant, 'session.start', { session_id: 's-after' });
    await rx.when(() => at(q).length === 1, 'the control delivery');
    expect(at(p)).toHaveLength(1);
  });

  test('429 with Retry-After: the next attempt waits for it, not for the back-off', async ({ svc, tenant }) => {
    const p = path();
    await subscribe(svc, tenant, ['session.start'], p);
    const before = rx.reply;
    rx.reply = (r, i) => (r.path === p && at(p).length === 1 ? { status: 429, headers: { 'retry-after': '1' } } : before(r, i));
    try {
      await emit(svc, tenant, 'session.start', { session_id: 's-429' });
      await rx.when(() => at(p).some((r) => r.answered === 200), 'the attempt after Retry-After');
    } finally { rx.reply = before; }
    const [first, second] = at(p);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  });

  test('a rotated secret: both signatures during the overlap, each verifies', async ({ svc, tenant }) => {
    const p = path();
    const id = await subscribe(svc, tenant, ['session.start'], p);
    const next = 'the-next-secret-0123456789';
    const r = await call(svc.base, 'POST', `/v1/webhooks/${id}/rotate-secret`, { auth: tenant.apiKey, body: { secret: next, overlap_sec: 3600 } });
    expect(r.status).toBe(200);
    expect(Date.parse(r.body.previous_secret_until)).toBeGreaterThan(Date.now());
    expect(JSON.stringify(r.body)).not.toContain(next);
    await emit(svc, tenant, 'session.start', { session_id: 's-rotated' });
    await rx.when(() => at(p).length === 1, 'the delivery');
    const got = at(p)[0]!;
    const sigs = String(got.headers['x-signature-256']).split(' ');
    expect(sigs).toHaveLength(2);
    expect(verifySignatureHeader(String(got.headers['x-signature-256']), got.body, next)).toBe(true);
    expect(verifySignatureHeader(String(got.headers['x-signature-256']), got.body, SECRET)).toBe(true);
    expect(String(got.headers['webhook-signature']).split(' ')).toHaveLength(2);
  });

  test('a subscription whose secret opens under no key given: the delivery is dead-lettered as secret_unavailable, not dropped', async ({ svc, tenant, db }) => {
    const p = path();
    const id = await subscribe(svc, tenant, ['device.new'], p);
    // As after SECRETS_KEY_OLD lost the key the secret was sealed under.
    await db.query("UPDATE tenant_secrets SET key_id = 'k-dropped' WHERE tenant_id = $1 AND name = $2", [tenant.tenantId, `webhook.${id}`]);
    await emit(svc, tenant, 'device.new', { mac: '02:00:00:00:00:5e' });
    await until(async () => (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries?status=dead`, { auth: tenant.apiKey })).body.data.length === 1,
      { what: 'the delivery dead-lettered' });
    const dead = (await call(svc.base, 'GET', `/v1/webhooks/${id}/deliveries?status=dead`, { auth: tenant.apiKey })).body.data[0];
    expect(dead).toMatchObject({ status: 'dead', event_type: 'device.new' });
    expect(dead.error).toMatch(/^secret_unavailable/);
    expect(at(p)).toHaveLength(0);
  });
});
