import { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { AuditIntentSweep } from '../../engine/audit/intent-sweep.js';
import { AuditLog } from '../../engine/audit/audit-log.js';
import { createLogger, type Engine } from '../../engine/index.js';
import { call, keys, serviceTest, until } from '../support/fixture.js';

const test = serviceTest();

/** The audit log's own Redis connection, to break it for a test and put it back. */
type WithRedis = { redis: Redis };
const auditRedis = (engine: Engine): WithRedis => engine.auditLog as unknown as WithRedis;

/**
 * Issue 18, item 9: every operator change is audited, or not made. The
 * change's intent is in Redis before the change; a change whose audit
 * queue fails is not made; text Postgres would refuse is refused before
 * anything changes (so no record goes to the dead letters while its change stands).
 */
describe('audited, or not made', () => {
  test('with the audit queue broken, a hotspot change answers 503 and is not made', async ({ svc, tenant }) => {
    const engine = svc.service.engine;
    const a = auditRedis(engine);
    const kept = a.redis;
    // A connection that can send nothing: every command fails at once, as Redis gone away would.
    const broken = new Redis({ port: 1, host: '127.0.0.1', lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    broken.on('error', () => undefined);
    a.redis = broken;
    try {
      const created = await call(svc.base, 'POST', '/v1/hotspots', { auth: tenant.apiKey, body: { name: 'Never Made', timezone: 'Europe/Istanbul' } });
      expect(created.status, JSON.stringify(created.body)).toBe(503);
      expect(created.body).toEqual({ error: 'service_unavailable', message: expect.stringContaining('audit log') });
      const renamed = await call(svc.base, 'PUT', `/v1/hotspots/${tenant.hotspotId}`, { auth: tenant.apiKey, body: { name: 'Renamed Unaudited' } });
      expect(renamed.status).toBe(503);
    } finally {
      a.redis = kept;
      broken.disconnect();
    }
    const list = await call(svc.base, 'GET', '/v1/hotspots', { auth: tenant.apiKey });
    expect(list.body.data.map((h: { name: string }) => h.name)).toEqual(['Lobby']);
  });

  test('a change that fails withdraws its intent: no record, nothing pending', async ({ svc, tenant, redis }) => {
    const r = await call(svc.base, 'PUT', '/v1/hotspots/hs_nope', { auth: tenant.apiKey, body: { name: 'X' } });
    expect(r.status).toBe(404);
    expect(await redis.hlen(keys.auditIntents(tenant.tenantId))).toBe(0);
    expect(await redis.xlen(keys.outbox(tenant.tenantId))).toBe(0);
  });

  test('a change made whose record could not be committed leaves its intent, which becomes an operator_change_unconfirmed record', async ({ svc, tenant, redis, db }) => {
    const engine = svc.service.engine;
    const a = auditRedis(engine);
    const kept = a.redis;
    // Redis answers the intent, then fails the commit: as when it goes away between the two.
    a.redis = new Proxy(kept, {
      get: (target, prop) => (prop === 'commitAuditV1' ? () => Promise.reject(new Error('connection lost')) : Reflect.get(target, prop, target)),
    });
    let made;
    try {
      made = await call(svc.base, 'PUT', `/v1/hotspots/${tenant.hotspotId}`, { auth: tenant.apiKey, body: { name: 'Renamed' } });
    } finally {
      a.redis = kept;
    }
    expect(made.status).toBe(200);
    expect(await redis.hlen(keys.auditIntents(tenant.tenantId))).toBe(1);
    // Recovered with no further change by the tenant: the once-a-minute sweep, on a clock five minutes on.
    const later = new AuditLog(kept, () => Date.now() + 5 * 60_000 + 1);
    await new AuditIntentSweep(later, { list: async () => [{ id: tenant.tenantId }] }, createLogger('silent')).runOnce();
    expect(await redis.hlen(keys.auditIntents(tenant.tenantId))).toBe(0);
    await until(async () => (await db.query('SELECT 1 FROM audit_records WHERE tenant_id = $1', [tenant.tenantId])).rowCount === 1);
    const { rows } = await db.query('SELECT event_type, details FROM audit_records WHERE tenant_id = $1', [tenant.tenantId]);
    expect(rows[0].event_type).toBe('operator_change_unconfirmed');
    expect(rows[0].details).toMatchObject({ route: 'PUT /v1/hotspots/:id', params: [tenant.hotspotId], by: expect.stringMatching(/^api_key:/) });
  });

  test('a lone surrogate anywhere in a JSON body is 400 before anything changes: no change, no record, no dead letter', async ({ svc, tenant, redis }) => {
    const lone = await call(svc.base, 'POST', '/v1/hotspots', { auth: tenant.apiKey, raw: '{"name":"Lobby \\ud800","timezone":"Europe/Istanbul"}' });
    expect(lone.status).toBe(400);
    expect(lone.body).toMatchObject({ error: 'validation_failed', message: expect.stringContaining('surrogate'), details: [{ field: 'name' }] });
    const low = await call(svc.base, 'PUT', `/v1/hotspots/${tenant.hotspotId}`, { auth: tenant.apiKey, raw: '{"location":{"x\\uDC00":1}}' });
    expect(low.status).toBe(400);
    expect(low.body.details[0].field).toBe('location.x\\udc00');
    const list = await call(svc.base, 'GET', '/v1/hotspots', { auth: tenant.apiKey });
    expect(list.body.data.map((h: { name: string }) => h.name)).toEqual(['Lobby']);
    expect(await redis.xlen(keys.outbox(tenant.tenantId))).toBe(0);
    expect(await redis.xlen(keys.outboxDead(tenant.tenantId))).toBe(0);
    expect(await redis.hlen(keys.auditIntents(tenant.tenantId))).toBe(0);
    // A pair (an emoji) is text: accepted, and its record reaches the chain.
    const pair = await call(svc.base, 'POST', '/v1/hotspots', { auth: tenant.apiKey, raw: '{"name":"Lobby \\ud83d\\ude00","timezone":"Europe/Istanbul"}' });
    expect(pair.status, JSON.stringify(pair.body)).toBe(201);
    expect(pair.body.name).toBe('Lobby 😀');
  });
});
