import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { DEFAULT_MODULES, signOperatorToken } from '../../engine/index.js';
import { AcctStatusType } from '../../radius/index.js';
import { accessRequest, accountingRequest } from '../radius/helpers.js';
import { JWT_SECRET, call, dashed, newTenant, serviceTest, until, type Tenant } from '../support/fixture.js';
import { addLoopbackNas, registerOnFreeLoopback } from '../support/loopback-nas.js';

/**
 * The dashboard's operations paths over HTTP against the real engine:
 * incidents and who may move them, posture ingest, switches, ports and
 * topology fed by real RADIUS datagrams, audit paging, JIT approvals; and
 * that a tenant only ever sees its own.
 */
const test = serviceTest().extend('dash', async ({ svc }) => newTenant(svc.service, 'Ops', [...DEFAULT_MODULES, 'dashboard']));
const ME = '/api/v1/tenants/me';
const SECRET = new TextEncoder().encode(JWT_SECRET);

const raiseNas = (svc: { service: { engine: import('../../engine/index.js').Engine } }, t: Tenant, subject: string) =>
  svc.service.engine.incidents.raise(t.tenantId, {
    kind: 'nas_silent', subject, siteId: t.hotspotId, severity: 'warning', title: `NAS ${subject} silent`, details: { nas_id: subject },
  });

describe('incidents', () => {
  test('raised once; listed with the open count; a viewer reads but cannot move one; an admin moves it forward only', async ({ svc, dash: t, redis, keys }) => {
    const first = await raiseNas(svc, t, 'nas_1');
    expect(first).not.toBeNull();
    expect(await raiseNas(svc, t, 'nas_1')).toBeNull();
    const id = first!.id;

    const viewer = await signOperatorToken(SECRET, t.tenantId, ['viewer'], 600);
    const list = await call(svc.base, 'GET', `${ME}/incidents`, { bearer: viewer });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({
      open: 1,
      data: [{
        id, kind: 'nas_silent', state: 'pending', severity: 'warning', title: 'NAS nas_1 silent', site_id: t.hotspotId, subject: 'nas_1',
        details: { nas_id: 'nas_1' }, opened_at: expect.any(String), updated_at: expect.any(String), resolved_at: null, resolved_by: null,
      }],
    });
    const refused = await call(svc.base, 'POST', `${ME}/incidents/${id}/triage`, { bearer: viewer });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('forbidden');
    expect((await svc.service.engine.incidents.list(t.tenantId, undefined, 10))[0]!.state).toBe('pending');

    const move = (segment: string) => call(svc.base, 'POST', `${ME}/incidents/${id}/${segment}`, { auth: t.apiKey });
    expect((await move('triage')).body.state).toBe('triaging');
    expect((await move('acknowledge')).body.state).toBe('acknowledged');
    const back = await move('triage');
    expect(back.status).toBe(409);
    expect(back.body).toMatchObject({ error: 'incident_transition_invalid', state: 'acknowledged' });
    const resolved = await move('resolve');
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ state: 'resolved', resolved_by: expect.stringMatching(/^api_key:/), resolved_at: expect.any(String) });
    expect((await move('resolve')).status).toBe(409);

    // Resolved, the same problem opens a new incident; any open state may skip ahead.
    const again = await raiseNas(svc, t, 'nas_1');
    expect(again!.id).not.toBe(id);
    expect((await call(svc.base, 'POST', `${ME}/incidents/${again!.id}/resolve`, { auth: t.apiKey })).body.state).toBe('resolved');

    const open = await call(svc.base, 'GET', `${ME}/incidents?state=open`, { auth: t.apiKey });
    expect(open.body).toEqual({ data: [], open: 0 });
    const done = await call(svc.base, 'GET', `${ME}/incidents?state=resolved&limit=1`, { auth: t.apiKey });
    expect(done.body.data.map((i: { id: string }) => i.id)).toEqual([again!.id]);
    expect((await call(svc.base, 'GET', `${ME}/incidents?state=closed`, { auth: t.apiKey })).status).toBe(400);

    const events = (await redis.xrange(keys.events(t.tenantId), '-', '+')).map(([, f]) => f[1]);
    expect(events.filter((e) => e === 'incident.raised')).toHaveLength(2);
    expect(events.filter((e) => e === 'incident.updated')).toHaveLength(4);
    // Each successful operator move (not the refused ones) enters the audit chain.
    const moves = async () => Number((await svc.service.engine.pool.query(
      "SELECT count(*) AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'incident_updated'", [t.tenantId])).rows[0].n);
    await until(async () => (await moves()) >= 4, { timeoutMs: 15_000 });
    expect(await moves()).toBe(4);
  });

  test('another tenant neither sees nor moves an incident: 404 as for an unknown one', async ({ svc, dash: a }) => {
    const b = await newTenant(svc.service, 'Other', [...DEFAULT_MODULES, 'dashboard']);
    const inc = await raiseNas(svc, a, 'nas_x');
    expect((await call(svc.base, 'GET', `${ME}/incidents`, { auth: b.apiKey })).body).toEqual({ data: [], open: 0 });
    const r = await call(svc.base, 'POST', `${ME}/incidents/${inc!.id}/acknowledge`, { auth: b.apiKey });
    expect(r.status).toBe(404);
    expect(r.body.error).toBe('not_found');
    expect((await call(svc.base, 'POST', `${ME}/incidents/inc_nope/acknowledge`, { auth: a.apiKey })).status).toBe(404);
    expect((await svc.service.engine.incidents.list(a.tenantId, 'open', 10)).map((i) => i.state)).toEqual(['pending']);
  });

  test('401 without a credential, 403 module_not_licensed without the dashboard', async ({ svc, tenant: plain }) => {
    expect((await call(svc.base, 'GET', `${ME}/incidents`)).status).toBe(401);
    for (const path of ['incidents', 'switches', 'topology', 'audit', 'jit-approvals']) {
      const r = await call(svc.base, 'GET', `${ME}/${path}`, { auth: plain.apiKey });
      expect(r.status, path).toBe(403);
      expect(r.body.error).toBe('module_not_licensed');
    }
  });
});

describe('posture', () => {
  test('a verdict is kept per device, counted per verdict and as a failure per site; bad input refused', async ({ svc, dash: t, redis, keys }) => {
    const post = (body: unknown, auth: { auth?: string; bearer?: string } = { auth: t.apiKey }) => call(svc.base, 'POST', `${ME}/posture`, { ...auth, body });
    const ok = await post({ mac: '02-aa-bb-cc-dd-01', verdict: 'fail', hotspot_id: t.hotspotId, reason: 'disk not encrypted' });
    expect(ok.status).toBe(201);
    expect(ok.body).toEqual({ mac: '02:AA:BB:CC:DD:01', verdict: 'fail', hotspot_id: t.hotspotId, received_at: expect.any(String) });
    expect((await post({ mac: '02:aa:bb:cc:dd:02', verdict: 'pass' })).body.hotspot_id).toBeNull();
    expect((await post({ mac: '02AABBCCDD01', verdict: 'pass' })).status).toBe(201);
    expect(await redis.hgetall(keys.postureCounts(t.tenantId))).toEqual({ pass: '2' });
    const minute = await redis.hgetall(keys.activityMinute(t.tenantId, Math.floor(Date.parse(ok.body.received_at) / 60_000)));
    expect(minute).toMatchObject({ pfail: '1', [`pfail@${t.hotspotId}`]: '1' });

    const bad = await post({ mac: 'not-a-mac', verdict: 'fail' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'mac' }] });
    expect((await post({ mac: '02:aa:bb:cc:dd:03', verdict: 'unknown' })).body.error).toBe('validation_failed');
    const other = await newTenant(svc.service, 'Other');
    expect((await post({ mac: '02:aa:bb:cc:dd:03', verdict: 'pass', hotspot_id: other.hotspotId })).body.error).toBe('hotspot_not_found');
    const viewer = await signOperatorToken(SECRET, t.tenantId, ['viewer'], 600);
    expect((await post({ mac: '02:aa:bb:cc:dd:03', verdict: 'pass' }, { bearer: viewer })).status).toBe(403);
    expect(await redis.hlen(keys.posture(t.tenantId))).toBe(2);
  });
});

describe('switches, ports and topology from RADIUS', () => {
  test('a NAS that speaks is online with the ports it named; another tenant sees none of it', async ({ svc, dash: t, redis, keys, mac }) => {
    const { id: nasId, ip, secret, radius } = await addLoopbackNas(svc.base, t, { name: 'core-sw-1', require_message_authenticator: false });
    try {
      const before = await call(svc.base, 'GET', `${ME}/switches`, { auth: t.apiKey });
      expect(before.body.data).toEqual([{ id: nasId, name: 'core-sw-1', hotspot_id: t.hotspotId, ip, online: false, last_seen_at: null }]);

      const ports = svc.service.radiusPorts;
      await radius.send(accountingRequest({
        secret, status: AcctStatusType.START, callingStationId: dashed(mac()), acctSessionId: 'p-1', nasPort: 7, nasPortId: 'Gi1/0/7',
        calledStationId: 'AA-BB-CC-DD-EE-01:Guest', nasIdentifier: 'ap-lobby-1',
      }), ports.acct);
      await radius.send(accessRequest({ secret, userName: mac(), callingStationId: dashed(mac()), calledStationId: 'AA-BB-CC-DD-EE-02:Guest', nasPort: 12, messageAuthenticator: 'none' }), ports.auth);
      await redis.hset(keys.liveByAp(t.tenantId), `${t.hotspotId}|ap-lobby-1`, 3);

      await until(async () => (await call(svc.base, 'GET', `${ME}/switches/${nasId}/ports`, { auth: t.apiKey })).body.data?.length === 2, { timeoutMs: 10_000 });
      const sw = await call(svc.base, 'GET', `${ME}/switches`, { auth: t.apiKey });
      expect(sw.body.data).toEqual([{ id: nasId, name: 'core-sw-1', hotspot_id: t.hotspotId, ip, online: true, last_seen_at: expect.any(String) }]);
      const p = await call(svc.base, 'GET', `${ME}/switches/${nasId}/ports`, { auth: t.apiKey });
      expect(p.body).toEqual({
        switch_id: nasId,
        data: [
          { port: 'AA-BB-CC-DD-EE-02:Guest', nas_port: 12, nas_port_id: null, called_station_id: 'AA-BB-CC-DD-EE-02:Guest', last_seen_at: expect.any(String), active_sessions: 0 },
          { port: 'Gi1/0/7', nas_port: 7, nas_port_id: 'Gi1/0/7', called_station_id: 'AA-BB-CC-DD-EE-01:Guest', last_seen_at: expect.any(String), active_sessions: 3 },
        ],
      });
      const online = (await redis.xrange(keys.events(t.tenantId), '-', '+')).filter(([, f]) => f[1] === 'nas.online');
      expect(online).toHaveLength(1);

      // A second NAS at the site, never heard from: offline; the first keeps the access points its ports named.
      await svc.service.engine.hotspots.addNasClient(t.tenantId, t.hotspotId, { ip: `${ip.split('.').slice(0, 3).join('.')}.1`, secret });
      const topo = await call(svc.base, 'GET', `${ME}/topology`, { auth: t.apiKey });
      expect(topo.status).toBe(200);
      expect(topo.body.tenant.id).toBe(t.tenantId);
      const site = topo.body.sites.find((s: { id: string }) => s.id === t.hotspotId);
      expect(site.nas).toHaveLength(2);
      expect(site.nas[0]).toEqual({
        id: nasId, name: 'core-sw-1', ip, online: true, last_seen_at: expect.any(String),
        access_points: [{ id: 'AA-BB-CC-DD-EE-02', active_sessions: 0 }, { id: 'ap-lobby-1', active_sessions: 3 }],
      });
      expect(site.nas[1]).toMatchObject({ online: false, last_seen_at: null, access_points: [] });

      const b = await newTenant(svc.service, 'Other', [...DEFAULT_MODULES, 'dashboard']);
      const stranger = await call(svc.base, 'GET', `${ME}/switches/${nasId}/ports`, { auth: b.apiKey });
      expect(stranger.status).toBe(404);
      expect(stranger.body.error).toBe('not_found');
      expect((await call(svc.base, 'GET', `${ME}/switches/nas_unknown/ports`, { auth: t.apiKey })).status).toBe(404);
      expect((await call(svc.base, 'GET', `${ME}/switches`, { auth: b.apiKey })).body).toEqual({ data: [] });
      const theirs = await call(svc.base, 'GET', `${ME}/topology`, { auth: b.apiKey });
      expect(theirs.body.sites.flatMap((s: { nas: unknown[] }) => s.nas)).toEqual([]);
    } finally {
      await radius.close();
    }
  });
});

describe('audit and JIT approvals', () => {
  test('a site or NAS client added shows at once in sites, switches and topology (no stale cache in the process that made it)', async ({ svc, dash: t }) => {
    const get = async (path: string) => (await call(svc.base, 'GET', `${ME}/${path}`, { auth: t.apiKey })).body;
    // Read first, so the tenant's site directory is cached.
    expect((await get('sites')).data.map((s: { id: string }) => s.id)).toEqual([t.hotspotId]);
    expect((await get('switches')).data).toEqual([]);

    const hs = await call(svc.base, 'POST', '/v1/hotspots', { auth: t.apiKey, body: { name: 'North stand', timezone: 'Europe/Istanbul' } });
    expect(hs.status).toBe(201);
    expect((await get('sites')).data.map((s: { id: string }) => s.id)).toEqual([t.hotspotId, hs.body.id]);
    expect((await get('sites/metrics')).data.map((s: { site_id: string }) => s.site_id)).toEqual([t.hotspotId, hs.body.id]);

    const { ip, answer } = await registerOnFreeLoopback(svc.base, t.apiKey, hs.body.id, (at) => ({ ip: at, secret: `s3cret-${randomBytes(8).toString('hex')}`, name: 'north-sw' }));
    const nasId = answer.body.id as string;
    expect((await get('switches')).data).toEqual([{ id: nasId, name: 'north-sw', hotspot_id: hs.body.id, ip, online: false, last_seen_at: null }]);
    expect((await call(svc.base, 'GET', `${ME}/switches/${nasId}/ports`, { auth: t.apiKey })).body).toEqual({ switch_id: nasId, data: [] });
    const topo = await get('topology');
    expect(topo.sites.map((s: { id: string; nas: { id: string }[] }) => [s.id, s.nas.map((n) => n.id)])).toEqual([[t.hotspotId, []], [hs.body.id, [nasId]]]);

    const renamed = await call(svc.base, 'PUT', `/v1/hotspots/${hs.body.id}`, { auth: t.apiKey, body: { name: 'North stand (upper)' } });
    expect(renamed.status).toBe(200);
    expect((await get('sites')).data.find((s: { id: string }) => s.id === hs.body.id).name).toBe('North stand (upper)');
  });

  test('audit entries newest first, paged by `before`, phone numbers masked; nothing of another tenant', async ({ svc, dash: t, redis, keys, mac }) => {
    // A session start as the session scripts queue it, with a phone number as the user, and a few operator events.
    const sid = `sess_${randomBytes(8).toString('hex')}`;
    const now = Date.now();
    await redis.xadd(keys.outbox(t.tenantId), '*', 'type', 'session_start', 'sid', sid, 'hs', t.hotspotId, 'mac', mac(), 'ip', '10.0.0.9',
      'ssid', 'Guest', 'at', String(now), 'until', String(now + 3_600_000), 'user', '+905321234567', 'method', 'sms_otp', 'vid', '');
    for (let i = 0; i < 4; i++) {
      const r = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: `AUD-${randomBytes(4).toString('hex')}`, max_uses: 1 } });
      expect(r.status).toBe(201);
    }
    const count = async () => Number((await svc.service.engine.pool.query('SELECT count(*) AS n FROM audit_records WHERE tenant_id = $1', [t.tenantId])).rows[0].n);
    await until(async () => (await count()) >= 5, { timeoutMs: 15_000 });
    const total = await count();

    const seen: { id: string; timestamp: string }[] = [];
    let before: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const q: string = before ? `?limit=2&before=${encodeURIComponent(before)}` : '?limit=2';
      const r = await call(svc.base, 'GET', `${ME}/audit${q}`, { auth: t.apiKey });
      expect(r.status).toBe(200);
      seen.push(...r.body.data);
      before = r.body.next_before;
      if (!before) break;
    }
    expect(seen).toHaveLength(total);
    expect(new Set(seen.map((e) => e.id)).size).toBe(total);
    const times = seen.map((e) => Date.parse(e.timestamp));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const start = seen.find((e) => e.id === `${sid}:start`);
    expect(start).toMatchObject({ event_type: 'session_start', username: '+905*******67', auth_method: 'sms_otp', actor: null, hotspot_id: t.hotspotId });
    expect(seen.find((e) => (e as { event_type?: string }).event_type === 'voucher_created')).toMatchObject({ actor: expect.stringMatching(/^api_key:/) });

    const b = await newTenant(svc.service, 'Other', [...DEFAULT_MODULES, 'dashboard']);
    expect((await call(svc.base, 'GET', `${ME}/audit`, { auth: b.apiKey })).body).toEqual({ data: [], next_before: null });
    const foreign = await call(svc.base, 'GET', `${ME}/audit?before=${encodeURIComponent(seen[0]!.id)}`, { auth: b.apiKey });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('validation_failed');
  });

  test('jit-approvals: an empty list while no sponsor request waits', async ({ svc, dash: t }) => {
    expect(await call(svc.base, 'GET', `${ME}/jit-approvals`, { auth: t.apiKey })).toMatchObject({ status: 200, body: { data: [] } });
  });

  test('the OpenAPI document lists every path with its fields', async ({ svc }) => {
    const doc = (await call(svc.base, 'GET', '/v1/openapi.json')).body;
    for (const path of ['incidents', 'incidents/{id}/triage', 'incidents/{id}/acknowledge', 'incidents/{id}/resolve', 'posture', 'switches',
      'switches/{id}/ports', 'topology', 'audit', 'jit-approvals']) {
      expect(doc.paths[`${ME}/${path}`], path).toBeDefined();
    }
    expect(Object.keys(doc.components.schemas.incident.properties)).toEqual([
      'id', 'kind', 'state', 'severity', 'title', 'site_id', 'subject', 'details', 'opened_at', 'updated_at', 'resolved_at', 'resolved_by',
    ]);
    expect(Object.keys(doc.components.schemas.switchPorts.properties.data.items.properties)).toEqual([
      'port', 'nas_port', 'nas_port_id', 'called_station_id', 'last_seen_at', 'active_sessions',
    ]);
  });
});
