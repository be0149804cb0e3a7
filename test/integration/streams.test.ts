import { describe, expect } from 'vitest';
import { DEFAULT_MODULES, signOperatorToken, signStreamToken } from '../../engine/index.js';
import {
  call, JWT_SECRET, newTenant, newVoucher, type Running, serviceTest, spawnService, startService, type Tenant, testEnv, until,
} from '../support/fixture.js';
import { openStream, type SseConnection } from '../support/sse-client.js';

const SECRET = new TextEncoder().encode(JWT_SECRET);
const ME = '/api/v1/tenants/me';
const HEARTBEAT_MS = 300;

const test = serviceTest({ STREAM_HEARTBEAT_MS: String(HEARTBEAT_MS) });

/** A tenant with the dashboard module. */
const dashboardTenant = (svc: Running, name = 'Stream Venue'): Promise<Tenant> =>
  newTenant(svc.service, name, [...DEFAULT_MODULES, 'dashboard']);

/** The dashboard's streams (docs/dashboard-api.md, Streams) over real HTTP, fed by the real event streams in Redis. */
describe('dashboard streams', () => {
  let svc: Running;
  const open: SseConnection[] = [];
  test.beforeAll(({ svc: s }) => { svc = s; });
  test.afterEach(() => { for (const c of open.splice(0)) c.close(); });

  const stream = async (path: string, headers: Record<string, string> = {}): Promise<SseConnection> => {
    const c = await openStream(svc.base, path, headers);
    open.push(c);
    return c;
  };
  const mint = async (t: Tenant): Promise<string> => {
    const r = await call(svc.base, 'POST', `${ME}/stream-token`, { auth: t.apiKey });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.expires_in).toBe(300);
    return r.body.token;
  };
  const append = (t: Tenant, type: Parameters<Running['service']['engine']['events']['append']>[1], site: string | null = t.hotspotId) =>
    svc.service.engine.events.append(t.tenantId, type, site, {});

  test('an event appended by the engine reaches a stream client as its kind, with the event id and site', async () => {
    const t = await dashboardTenant(svc);
    const c = await stream(`${ME}/stream/incidents?token=${await mint(t)}`);
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(c.frames[0]).toEqual({ retry: 5000 });
    const id = await append(t, 'incident.raised');
    const f = await c.waitFor((x) => x.data !== undefined, 5000, 'incident_raised');
    expect(f.id).toBe(id);
    const body = JSON.parse(f.data!);
    expect(body).toEqual({ kind: 'incident_raised', ts: expect.any(String), site_id: t.hotspotId });
    expect(Math.abs(Date.parse(body.ts) - Date.now())).toBeLessThan(10_000);
    expect(f.data!.length).toBeLessThan(100);
    // A tenant-wide event names no site.
    await new Promise((r) => setTimeout(r, 600)); // past the coalescing window of the first
    const id2 = await append(t, 'incident.updated', null);
    const g = await c.waitFor((x) => x.id === id2, 5000, 'incident_updated');
    expect(JSON.parse(g.data!)).toEqual({ kind: 'incident_updated', ts: expect.any(String) });
  });

  test('each stream carries only its own kinds', async () => {
    const t = await dashboardTenant(svc);
    const token = await mint(t);
    const [live, audit, jit, incidents] = await Promise.all(
      ['live-sessions', 'audit', 'jit-approvals', 'incidents'].map((s) => stream(`${ME}/stream/${s}?token=${token}`)));
    for (const type of ['session.start', 'audit.written', 'jit.requested', 'posture.verdict', 'incident.raised'] as const) await append(t, type);
    await live!.waitFor((f) => f.data !== undefined);
    await audit!.waitFor((f) => f.data !== undefined);
    await jit!.waitFor((f) => f.data !== undefined);
    await incidents!.waitFor((f) => f.data !== undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(live!.events().map((e) => e.kind)).toEqual(['session_started']);
    expect(audit!.events().map((e) => e.kind)).toEqual(['audit_appended']);
    expect(jit!.events().map((e) => e.kind)).toEqual(['jit_requested']);
    expect(incidents!.events().map((e) => e.kind)).toEqual(['incident_raised']);
  });

  test('stream/all carries every kind of the four streams on one connection, and nothing else', async () => {
    const t = await dashboardTenant(svc);
    const all = await stream(`${ME}/stream/all?token=${await mint(t)}`);
    expect(all.status).toBe(200);
    // auth.success is live-sessions' `signins_counted` (the sign-in counts changed); posture.verdict is on no stream.
    for (const type of ['session.start', 'audit.written', 'posture.verdict', 'jit.requested', 'incident.raised', 'auth.success'] as const) await append(t, type);
    await until(() => all.events().length >= 5, { what: 'five kinds on stream/all', seen: () => all.events() });
    await new Promise((r) => setTimeout(r, 300));
    expect(all.events().map((e) => e.kind).sort()).toEqual(['audit_appended', 'incident_raised', 'jit_requested', 'session_started', 'signins_counted']);
  });

  test('a burst of 1,000 events gives each client a handful, the last naming the newest event', async () => {
    const t = await dashboardTenant(svc);
    const other = await svc.service.engine.hotspots.create(t.tenantId, { name: 'Gate B', timezone: 'UTC' });
    const token = await mint(t);
    const clients = await Promise.all([1, 2, 3].map(() => stream(`${ME}/stream/live-sessions?token=${token}`)));
    // One site: every event the burst's coalesced ones stand for was there, so they name it.
    const ids = await Promise.all(Array.from({ length: 1000 }, () => append(t, 'session.start')));
    const newest = ids.sort(compareIds).at(-1)!;
    for (const c of clients) await c.waitFor((f) => f.id === newest, 5000, 'the newest id');
    for (const c of clients) {
      const got = c.events();
      expect(got.length).toBeGreaterThanOrEqual(1);
      expect(got.length).toBeLessThanOrEqual(6);
      expect(got.every((e) => e.kind === 'session_started' && e.site_id === t.hotspotId)).toBe(true);
    }
    // Two sites in one window: the coalesced event names none.
    await new Promise((r) => setTimeout(r, 700));
    const before = clients.map((c) => c.events().length);
    const mixed = await Promise.all(Array.from({ length: 200 }, (_, i) => append(t, 'session.end', i % 2 ? t.hotspotId : other.id)));
    const last = mixed.sort(compareIds).at(-1)!;
    for (const [i, c] of clients.entries()) {
      const f = await c.waitFor((x) => x.id === last, 5000, 'the mixed burst\'s newest id');
      expect(JSON.parse(f.data!)).not.toHaveProperty('site_id');
      expect(c.events().length - before[i]!).toBeLessThanOrEqual(4);
    }
  });

  test('a reconnect with Last-Event-ID starts with resync', async () => {
    const t = await dashboardTenant(svc);
    const c = await stream(`${ME}/stream/audit?token=${await mint(t)}`, { 'last-event-id': '1700000000000-0' });
    expect(c.frames[0]).toEqual({ retry: 5000 });
    const f = await c.waitFor((x) => x.data !== undefined, 2000, 'resync');
    expect(c.frames.indexOf(f)).toBe(1);
    expect(JSON.parse(f.data!)).toEqual({ kind: 'resync', ts: expect.any(String) });
    const fresh = await stream(`${ME}/stream/audit?token=${await mint(t)}`);
    await new Promise((r) => setTimeout(r, 200));
    expect(fresh.events()).toEqual([]);
  });

  test('kinds pending when a window closes arrive together, one per kind, the newest id last', async () => {
    const t = await dashboardTenant(svc);
    const c = await stream(`${ME}/stream/all?token=${await mint(t)}`);
    // Appended together, in this order: the lead reaches a quiet stream first and goes out at once, opening the
    // window; the three behind it come with it or one paced read later (the fan-out's 20 ms), well inside the window,
    // whatever the test's own round trips to the client take on a busy machine.
    const [lead, ended, raised, endedAgain] = await Promise.all([
      append(t, 'session.start'), append(t, 'session.end'), append(t, 'incident.raised', null), append(t, 'session.end')]);
    await c.waitFor((f) => f.id === endedAgain, 5000, 'the window\'s batch');
    expect(compareIds(ended, endedAgain)).toBeLessThan(0);
    // incident_raised's newest event came before session_ended's newest: it comes first.
    expect(c.events().map((e) => [e.kind, e.id])).toEqual([
      ['session_started', lead], ['incident_raised', raised], ['session_ended', endedAgain],
    ]);
  });

  test('a comment heartbeat keeps an idle stream open', async () => {
    const t = await dashboardTenant(svc);
    const c = await stream(`${ME}/stream/jit-approvals`, { 'x-api-key': t.apiKey });
    const started = Date.now();
    await c.waitFor((f) => f.comment === 'hb', HEARTBEAT_MS * 5, 'heartbeat');
    await c.waitFor((f) => f.comment === 'hb' && c.frames.filter((x) => x.comment === 'hb').length >= 2, HEARTBEAT_MS * 5, 'second heartbeat');
    expect(Date.now() - started).toBeGreaterThanOrEqual(HEARTBEAT_MS);
  });

  test('credentials: headers or a stream token in ?token=; nothing else opens a stream, and a stream token opens nothing else', async () => {
    const t = await dashboardTenant(svc);
    const path = `${ME}/stream/live-sessions`;
    const status = async (p: string, headers: Record<string, string> = {}): Promise<[number, string]> => {
      const c = await stream(p, headers);
      c.close();
      return [c.status, c.status === 200 ? '' : JSON.parse(c.body).error];
    };
    expect(await status(path)).toEqual([401, 'unauthorized']);
    const operator = await signOperatorToken(SECRET, t.tenantId, ['viewer'], 300);
    expect(await status(path, { authorization: `Bearer ${operator}` })).toEqual([200, '']);
    // An operator token or an API key in the URL is refused: URLs end up in logs.
    expect(await status(`${path}?token=${operator}`)).toEqual([401, 'unauthorized']);
    expect(await status(`${path}?token=${t.apiKey}`)).toEqual([401, 'unauthorized']);
    const expired = await signStreamToken(SECRET, t.tenantId, ['admin'], -120, 'test');
    expect(await status(`${path}?token=${expired}`)).toEqual([401, 'unauthorized']);
    expect(await status(`${path}?token=not-a-token`)).toEqual([401, 'unauthorized']);

    // A viewer may mint one (it changes nothing); the token is good on the streams, in the URL only.
    const minted = await call(svc.base, 'POST', `${ME}/stream-token`, { bearer: operator });
    expect(minted.status).toBe(201);
    const token: string = minted.body.token;
    expect(await status(`${path}?token=${encodeURIComponent(token)}`)).toEqual([200, '']);
    expect(await status(path, { authorization: `Bearer ${token}` })).toEqual([401, 'unauthorized']);
    for (const [method, p] of [['GET', ME], ['GET', `${ME}/dashboard/overview`], ['GET', '/v1/sessions'], ['POST', `${ME}/stream-token`]] as const) {
      const r = await call(svc.base, method, p, { bearer: token });
      expect(r.status, `${method} ${p}`).toBe(401);
      expect(r.body.error).toBe('unauthorized');
    }
    expect((await call(svc.base, 'GET', `${ME}/stream/live-sessions?token=${token}`, { bearer: token })).status).toBe(401);
    const unknown = await call(svc.base, 'GET', `${ME}/stream/nope?token=${token}`);
    expect(unknown.status).toBe(404);
  });

  test('403 module_not_licensed for a tenant without the dashboard, for the token and the streams', async () => {
    const t = await newTenant(svc.service, 'No Dashboard');
    const r = await call(svc.base, 'POST', `${ME}/stream-token`, { auth: t.apiKey });
    expect([r.status, r.body.error]).toEqual([403, 'module_not_licensed']);
    const c = await stream(`${ME}/stream/incidents`, { 'x-api-key': t.apiKey });
    expect([c.status, JSON.parse(c.body).error]).toEqual([403, 'module_not_licensed']);
  });

  test("a tenant's streams never carry another tenant's events", async () => {
    const a = await dashboardTenant(svc, 'Venue A');
    const b = await dashboardTenant(svc, 'Venue B');
    const ca = await stream(`${ME}/stream/live-sessions?token=${await mint(a)}`);
    const cb = await stream(`${ME}/stream/live-sessions?token=${await mint(b)}`);
    const idsA = new Set<string>();
    const idsB = new Set<string>();
    // Spaced past the coalescing window, so every event shows up as its own id.
    for (let i = 0; i < 3; i++) {
      idsA.add(await append(a, 'session.start'));
      idsB.add(await append(b, 'session.end'));
      await new Promise((r) => setTimeout(r, 550));
    }
    await until(() => ca.events().length === 3 && cb.events().length === 3, { what: 'three events each', seen: () => [ca.events(), cb.events()] });
    expect(new Set(ca.events().map((e) => e.id))).toEqual(idsA);
    expect(new Set(cb.events().map((e) => e.id))).toEqual(idsB);
    expect(ca.events().every((e) => e.kind === 'session_started' && e.site_id === a.hotspotId)).toBe(true);
    expect(cb.events().every((e) => e.kind === 'session_ended' && e.site_id === b.hotspotId)).toBe(true);
  });

  test('a client that goes away leaves nothing behind: no client, no channel, no tenant read', async () => {
    const engine = svc.service.engine;
    for (const c of open.splice(0)) c.close();
    await until(() => engine.fanout.tenantCount === 0, { what: 'no tenant read', seen: () => engine.fanout.tenantCount });
    const t = await dashboardTenant(svc);
    const token = await mint(t);
    const cs = await Promise.all(['live-sessions', 'audit', 'live-sessions'].map((s) => stream(`${ME}/stream/${s}?token=${token}`)));
    expect(engine.fanout.tenantCount).toBe(1);
    expect(engine.streams.hubCount).toBe(2);
    for (const c of cs) c.close();
    await until(() => engine.fanout.tenantCount === 0 && engine.streams.hubCount === 0,
      { what: 'everything released', seen: () => [engine.fanout.tenantCount, engine.streams.hubCount] });
    expect(await engine.metrics.render()).toMatch(/^guestwifi_stream_clients 0$/m);
  });

  test('a sign-in through the portal reaches the live-sessions stream', async () => {
    const t = await dashboardTenant(svc);
    const v = await newVoucher(svc.base, t);
    const c = await stream(`${ME}/stream/live-sessions?token=${await mint(t)}`);
    const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: v.code, mac: '02:5E:00:00:00:01' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // The session start script writes session.start itself, atomically with the session.
    const f = await c.waitFor((x) => x.data !== undefined, 5000, 'session_started');
    expect(JSON.parse(f.data!)).toEqual({ kind: 'session_started', ts: expect.any(String), site_id: t.hotspotId });
  });

  test('a stream that carries events gets no heartbeat; once quiet it gets one within 1.5 periods', async () => {
    const busy = await startService({ RADIUS_ENABLED: 'false', STREAM_HEARTBEAT_MS: '400', STREAM_COALESCE_MS: '50' });
    try {
      const t = await newTenant(busy.service, 'Busy Venue', [...DEFAULT_MODULES, 'dashboard']);
      const c = await openStream(busy.base, `${ME}/stream/live-sessions`, { 'x-api-key': t.apiKey });
      open.push(c);
      // An event every 60 ms for 2 s (five heartbeat periods): a write at least every ~110 ms.
      const until = Date.now() + 2000;
      while (Date.now() < until) {
        await busy.service.engine.events.append(t.tenantId, 'session.start', t.hotspotId, {});
        await new Promise((r) => setTimeout(r, 60));
      }
      expect(c.events().length).toBeGreaterThanOrEqual(5);
      expect(c.frames.filter((f) => f.comment === 'hb')).toEqual([]);
      const quietAt = Date.now();
      await c.waitFor((f) => f.comment === 'hb', 3000, 'a heartbeat once quiet');
      expect(Date.now() - quietAt).toBeLessThanOrEqual(600 + 300);
    } finally {
      await busy.stop();
    }
  });

  test('a service that stops ends its streams cleanly instead of leaving them hanging', async () => {
    const other = await startService({ RADIUS_ENABLED: 'false' });
    let stopped = false;
    try {
      const t = await newTenant(other.service, 'Closing Venue', [...DEFAULT_MODULES, 'dashboard']);
      const c = await openStream(other.base, `${ME}/stream/audit`, { 'x-api-key': t.apiKey });
      open.push(c);
      expect(c.status).toBe(200);
      const ended = c.ended.then(() => Date.now());
      const at = Date.now();
      await other.stop();
      stopped = true;
      expect(await ended - at).toBeLessThan(5000);
      expect(other.service.engine.fanout.tenantCount).toBe(0);
    } finally {
      if (!stopped) await other.stop();
    }
  });

  test('an event made in one engine process reaches a client of another', async () => {
    const second = await spawnService({ ...process.env, ...testEnv({ RADIUS_ENABLED: 'false' }) });
    try {
      const t = await dashboardTenant(svc);
      const token = await mint(t);
      const there = await openStream(second.base, `${ME}/stream/incidents?token=${token}`);
      open.push(there);
      const id = await append(t, 'incident.raised');
      const f = await there.waitFor((x) => x.data !== undefined, 5000, 'the event from the other process');
      expect(f.id).toBe(id);
      expect(JSON.parse(f.data!).kind).toBe('incident_raised');
    } finally {
      await second.stop();
    }
  });
});

function compareIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number) as [number, number];
  const [bm, bs] = b.split('-').map(Number) as [number, number];
  return am - bm || as - bs;
}
