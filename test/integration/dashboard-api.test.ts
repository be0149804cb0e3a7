import { randomInt } from 'node:crypto';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect } from 'vitest';
import { DEFAULT_MODULES, signOperatorToken } from '../../engine/index.js';
import { allRoutes } from '../../http/server.js';
import type { Service } from '../../scripts/serve.js';
import { call, JWT_SECRET, keys, newVoucher, type Running, serviceTest, type Tenant, until } from '../support/fixture.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const test = serviceTest({ ACTOR_THREADS: '2' });

const ME = '/api/v1/tenants/me';
const PATHS = ['dashboard/overview', 'dashboard/kpis-extra', 'sessions/active', 'sites', 'sites/metrics'] as const;
const VERIFY = '/api/v1/hotspot-portal/voucher/verify';

/** A tenant licensed for `modules`, with an API key and a hotspot. */
async function tenantWith(service: Service, modules: string[]): Promise<Tenant> {
  const tenant = await service.engine.tenants.create(`Dash ${Math.random().toString(36).slice(2, 8)}`, modules);
  const { apiKey } = await service.engine.tenants.createApiKey(tenant.id);
  const hs = await service.engine.hotspots.create(tenant.id, { name: 'Gate A', location: 'North', timezone: 'Europe/Istanbul' });
  return { tenantId: tenant.id, apiKey, hotspotId: hs.id };
}

/** A NAS client of the hotspot on an address nobody else registered (198.18.0.0/15 is for tests). */
async function addNas(service: Service, t: Tenant, hotspotId: string): Promise<string> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      const nas = await service.engine.hotspots.addNasClient(t.tenantId, hotspotId, {
        ip: `198.${randomInt(18, 20)}.${randomInt(0, 256)}.${randomInt(1, 255)}`, secret: 'dashboard-test-secret',
      });
      return nas.id;
    } catch (err) {
      if ((err as { code?: string }).code !== 'nas_ip_in_use') throw err;
    }
  }
  throw new Error('no free address for a test NAS');
}

/**
 * The dashboard's read paths through HTTP: guests signed in through the
 * portal and a session ended through the API, read back from every path;
 * access (401, 403 module_not_licensed, 404, a viewer token); the bodies
 * held against the schemas the OpenAPI document publishes; and a second
 * tenant that sees none of the first one's numbers.
 */
describe('dashboard read paths', () => {
  let svc: Running;
  let t: Tenant;
  let annex: string;
  let nasId: string;

  test.beforeAll(async ({ svc: s_ }) => {
    svc = s_;
    t = await tenantWith(svc.service, [...DEFAULT_MODULES, 'dashboard']);
    annex = (await svc.service.engine.hotspots.create(t.tenantId, { name: 'Annex', timezone: 'UTC' })).id;
    nasId = await addNas(svc.service, t, t.hotspotId);
  });

  const get = (path: string, auth: { auth?: string; bearer?: string }) => call(svc.base, 'GET', `${ME}/${path}`, auth);

  test('sign-ins through the portal and an end through the API: live sessions on every path', async ({ redis }) => {
    const v = await newVoucher(svc.base, t);
    const started: string[] = [];
    for (const [i, hs] of [t.hotspotId, t.hotspotId, t.hotspotId, annex].entries()) {
      const r = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${hs}`, { body: { code: v.code, mac: `AA:D0:00:00:00:0${i + 1}`, ssid: 'Guest' } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      started.push(r.body.session_id);
    }
    expect((await call(svc.base, 'DELETE', `/v1/sessions/${started[0]}`, { auth: t.apiKey })).status).toBe(200);
    // The NAS spoke a minute ago (as the RADIUS side records it).
    await redis.hset(keys.nasSeen(t.tenantId), nasId, Date.now() - 60_000);

    await until(async () => (await get('dashboard/overview', { auth: t.apiKey })).body.active_sessions === 3);
    const overview = (await get('dashboard/overview', { auth: t.apiKey })).body;
    expect(overview).toMatchObject({ active_sessions: 3, switches_online: 1, incidents_open: 0, audit_anchor_lag_min: expect.any(Number) });
    expect(Date.now() - Date.parse(overview.generated_at)).toBeLessThan(10_000);

    const kpis = (await get('dashboard/kpis-extra', { auth: t.apiKey })).body;
    expect(kpis).toMatchObject({ edge_health_pct: 100, nas_total: 1, nas_online: 1 });

    const panel = (await get('sessions/active', { auth: t.apiKey })).body;
    expect(panel.summary.active_sessions).toBe(3);
    expect(panel.per_minute).toHaveLength(60);

    const sites = (await get('sites', { auth: t.apiKey })).body;
    expect(sites.data).toEqual([
      { id: t.hotspotId, name: 'Gate A', location: 'North', timezone: 'Europe/Istanbul', active_sessions: 2, nas_total: 1, nas_online: 1, health: 'ok' },
      { id: annex, name: 'Annex', location: '', timezone: 'UTC', active_sessions: 1, nas_total: 0, nas_online: 0, health: 'ok' },
    ]);
    const metrics = (await get('sites/metrics', { auth: t.apiKey })).body;
    expect(metrics.data.map((s: { site_id: string; active_sessions: number }) => [s.site_id, s.active_sessions])).toEqual([[t.hotspotId, 2], [annex, 1]]);

    // Another tenant, licensed through the network-access-control package, sees only its own (empty) site.
    const other = await tenantWith(svc.service, [...DEFAULT_MODULES, 'nac']);
    const theirs = (await get('dashboard/overview', { auth: other.apiKey })).body;
    expect(theirs).toMatchObject({ active_sessions: 0, switches_online: 0, active_guest_count: 0, login_count_24h: 0, audit_anchor_lag_min: 0 });
    expect((await get('sessions/active', { auth: other.apiKey })).body.summary.active_sessions).toBe(0);
    expect((await get('sites', { auth: other.apiKey })).body.data.map((s: { id: string }) => s.id)).toEqual([other.hotspotId]);
    expect((await get('dashboard/kpis-extra', { auth: other.apiKey })).body).toMatchObject({ edge_health_pct: null, nas_total: 0 });
  });

  test('every body is exactly what the OpenAPI document says: all fields, nothing more', async () => {
    const doc = (await call(svc.base, 'GET', '/v1/openapi.json')).body;
    const ajv = addFormats(new Ajv({ strict: false }));
    for (const path of PATHS) {
      const op = doc.paths[`${ME}/${path}`]?.get;
      expect(op, path).toBeDefined();
      const id = String(op.responses['200'].content['application/json'].schema.$ref).replace('#/components/schemas/', '');
      const schema = doc.components.schemas[id];
      expect(schema.additionalProperties, path).toBe(false);
      const body = (await get(path, { auth: t.apiKey })).body;
      const validate = ajv.compile(schema);
      expect(validate(body), `${path}: ${JSON.stringify(validate.errors)}`).toBe(true);
      expect(Object.keys(body).sort(), path).toEqual(Object.keys(schema.properties).sort());
      expect(op.responses['403'].description).toContain('dashboard or nac or onprem');
    }
  });

  test('401 without credentials, 403 module_not_licensed without the dashboard, 404 for an unknown path; a viewer reads', async () => {
    const unlicensed = await tenantWith(svc.service, DEFAULT_MODULES);
    const viewer = await signOperatorToken(new TextEncoder().encode(JWT_SECRET), t.tenantId, ['viewer'], 600);
    for (const path of PATHS) {
      const none = await get(path, {});
      expect(none.status, path).toBe(401);
      expect(none.body.error).toBe('unauthorized');
      const refused = await get(path, { auth: unlicensed.apiKey });
      expect(refused.status, path).toBe(403);
      expect(refused.body.error).toBe('module_not_licensed');
      const read = await get(path, { bearer: viewer });
      expect(read.status, path).toBe(200);
    }
    const unknown = await get('dashboard/nonesuch', { auth: t.apiKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('not_found');
  });

  test('the routes are registered once each, on the dashboard surface', () => {
    const mine = allRoutes(svc.service.engine).filter((r) => PATHS.some((p) => r.path === `${ME}/${p}`));
    expect(mine.map((r) => [r.method, r.surface, r.auth]).sort()).toEqual(PATHS.map(() => ['get', 'dashboard', true]));
  });
});
