import { describe, expect } from 'vitest';
import { call, keys, newTenant, type Running, serviceTest, type Tenant, until } from '../support/fixture.js';

const test = serviceTest({ ACTOR_THREADS: '2' });

/**
 * Sessions started through the portal, seen and driven through the API:
 * list/read with both id forms, disconnect, extend, block, guests, and the
 * session's end by its own clock. Start and end records reach Postgres.
 */
describe('sessions API', () => {
  let svc: Running;
  let t: Tenant;

  const signIn = async (code: string, mac: string) => {
    const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code, mac, ip: '10.9.0.7', ssid: 'Guest' } });
    expect(r.status).toBe(200);
    return r.body as { session_id: string; expires_at: string };
  };

  test.beforeAll(async ({ svc: s_ }) => {
    svc = s_;
    t = await newTenant(svc.service);
    const v = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'SESS-TEST', max_uses: null, duration_minutes: 120 } });
    expect(v.status).toBe(201);
  });

  test('lists and reads a portal session under ses_ and sess_ ids, with the spec fields', async () => {
    const s = await signIn('SESS-TEST', 'AA:00:00:00:00:01');
    const pub = s.session_id.replace('sess_', 'ses_');
    const one = await call(svc.base, 'GET', `/v1/sessions/${s.session_id}`, { auth: t.apiKey });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: pub, mac: 'AA:00:00:00:00:01', ip: '10.9.0.7', auth_method: 'voucher', username: 'SESS-TEST', hotspot_id: t.hotspotId, status: 'active', bytes_in: 0, bytes_out: 0 });
    expect(typeof one.body.duration_seconds).toBe('number');
    expect((await call(svc.base, 'GET', `/v1/sessions/${pub}`, { auth: t.apiKey })).body.id).toBe(pub);

    await until(async () => (await call(svc.base, 'GET', '/v1/sessions?status=active', { auth: t.apiKey })).body.data.some((x: any) => x.id === pub));
    const list = await call(svc.base, 'GET', '/v1/sessions?status=active&limit=1&offset=0', { auth: t.apiKey });
    expect(list.body).toMatchObject({ limit: 1, offset: 0 });
    expect(list.body.total).toBeGreaterThanOrEqual(1);
  });

  test('DELETE disconnects once (admin_disconnect), then 409; start and end audit records land in Postgres', async ({ redis, db }) => {
    const s = await signIn('SESS-TEST', 'AA:00:00:00:00:02');
    const del = await call(svc.base, 'DELETE', `/v1/sessions/${s.session_id}`, { auth: t.apiKey });
    expect(del.status).toBe(200);
    expect(del.body).toMatchObject({ id: s.session_id.replace('sess_', 'ses_'), status: 'disconnected', reason: 'admin_disconnect' });
    expect(Date.parse(del.body.disconnected_at)).toBeGreaterThan(Date.now() - 10_000);
    expect((await call(svc.base, 'DELETE', `/v1/sessions/${s.session_id}`, { auth: t.apiKey })).status).toBe(409);

    await until(async () => {
      const { rows } = await db.query('SELECT status, end_reason FROM sessions WHERE id = $1', [s.session_id]);
      return rows[0]?.status === 'disconnected' && rows[0]?.end_reason === 'admin_disconnect';
    });
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM audit_records WHERE session_id = $1', [s.session_id])).rows[0].n === 2);
    const audit = await db.query('SELECT event_type, details FROM audit_records WHERE tenant_id = $1 AND session_id = $2 ORDER BY seq', [t.tenantId, s.session_id]);
    expect(audit.rows.map((r) => r.event_type)).toEqual(['session_start', 'session_end']);
    expect(audit.rows[1].details).toMatchObject({ reason: 'admin_disconnect', by: expect.stringMatching(/^api_key:/) });
    // The device's grant is gone: the same MAC now needs a new use.
    expect(await redis.exists(keys.grant(t.tenantId, t.hotspotId, 'AA:00:00:00:00:02'))).toBe(0);
  });

  test("block ends the device's live sessions at the tenant's other hotspots too", async ({ redis, db }) => {
    const mac = 'AA:00:00:00:00:05';
    const other = await svc.service.engine.hotspots.create(t.tenantId, { name: 'Annex', timezone: 'UTC' });
    const here = await signIn('SESS-TEST', mac);
    const there = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${other.id}`, { body: { code: 'SESS-TEST', mac } });
    expect(there.status).toBe(200);
    expect((await call(svc.base, 'POST', `/v1/sessions/${here.session_id}/block`, { auth: t.apiKey, body: { duration: '7d' } })).status).toBe(200);
    for (const sid of [here.session_id, there.body.session_id]) {
      await until(async () => {
        const { rows } = await db.query('SELECT status, end_reason FROM sessions WHERE id = $1', [sid]);
        return rows[0]?.status === 'disconnected' && rows[0]?.end_reason === 'blocked';
      }, { timeoutMs: 10_000 });
    }
    expect(await redis.exists(keys.grant(t.tenantId, other.id, mac))).toBe(0);
    expect((await call(svc.base, 'DELETE', `/v1/blocks/${encodeURIComponent(mac)}`, { auth: t.apiKey })).status).toBe(200);
  });

  test('a sign-in with another code replaces the live session: the old one ends once, as replaced, with its bytes', async ({ redis, db }) => {
    const mac = 'AA:00:00:00:00:06';
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'SESS-OTHER', max_uses: null } })).status).toBe(201);
    const first = await signIn('SESS-TEST', mac);
    await redis.hset(keys.grant(t.tenantId, t.hotspotId, mac), 'bin', 4_096, 'bout', 512);
    const second = await signIn('SESS-OTHER', mac);
    expect(second.session_id).not.toBe(first.session_id);
    await until(async () => (await db.query('SELECT end_reason FROM sessions WHERE id = $1', [first.session_id])).rows[0]?.end_reason === 'replaced', { timeoutMs: 10_000 });
    const row = (await db.query('SELECT status, bytes_in::int, bytes_out::int FROM sessions WHERE id = $1', [first.session_id])).rows[0];
    expect(row).toEqual({ status: 'ended', bytes_in: 4_096, bytes_out: 512 });
    await until(async () => (await db.query("SELECT 1 FROM audit_records WHERE session_id = $1 AND event_type = 'session_start'", [second.session_id])).rowCount === 1);
    const ends = await db.query("SELECT details FROM audit_records WHERE session_id = $1 AND event_type = 'session_end'", [first.session_id]);
    expect(ends.rows).toHaveLength(1);
    expect(ends.rows[0].details).toMatchObject({ reason: 'replaced', bytes_in: 4_096, bytes_out: 512 });
    expect((await call(svc.base, 'GET', `/v1/sessions/${second.session_id}`, { auth: t.apiKey })).body.status).toBe('active');
    expect((await call(svc.base, 'GET', `/v1/sessions/${first.session_id}`, { auth: t.apiKey })).body.status).toBe('ended');
  });

  test('extends by a preset and by minutes, counted from the current end', async ({ db }) => {
    const s = await signIn('SESS-TEST', 'AA:00:00:00:00:03');
    const before = Date.parse(s.expires_at);
    const a = await call(svc.base, 'POST', `/v1/sessions/${s.session_id}/extend`, { auth: t.apiKey, body: { preset: '1h' } });
    expect(a.status).toBe(200);
    expect(Date.parse(a.body.expires_at) - before).toBe(3_600_000);
    const b = await call(svc.base, 'POST', `/v1/sessions/${s.session_id}/extend`, { auth: t.apiKey, body: { minutes: 15 } });
    expect(Date.parse(b.body.expires_at) - before).toBe(75 * 60_000);
    expect((await call(svc.base, 'POST', `/v1/sessions/${s.session_id}/extend`, { auth: t.apiKey, body: {} })).status).toBe(400);
    await until(async () => (await db.query("SELECT count(*)::int AS n FROM audit_records WHERE session_id = $1 AND event_type = 'session_extend'", [s.session_id])).rows[0].n === 2);
  });

  test('block ends the session and refuses the device until unblocked', async ({ db }) => {
    const mac = 'AA:00:00:00:00:04';
    const s = await signIn('SESS-TEST', mac);
    const blk = await call(svc.base, 'POST', `/v1/sessions/${s.session_id}/block`, { auth: t.apiKey, body: { duration: '24h' } });
    expect(blk.status).toBe(200);
    expect(blk.body).toMatchObject({ mac, duration: '24h' });
    expect(Date.parse(blk.body.until) - Date.now()).toBeGreaterThan(86_000_000);
    const again = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'SESS-TEST', mac } });
    expect(again.status).toBe(403);
    expect(again.body.error).toBe('device_blocked');
    const blocks = await call(svc.base, 'GET', '/v1/blocks', { auth: t.apiKey });
    expect(blocks.body.data.map((b: any) => b.mac)).toContain(mac);
    expect((await call(svc.base, 'DELETE', `/v1/blocks/${encodeURIComponent(mac)}`, { auth: t.apiKey })).status).toBe(200);
    expect((await call(svc.base, 'DELETE', `/v1/blocks/${encodeURIComponent(mac)}`, { auth: t.apiKey })).status).toBe(404);
    await signIn('SESS-TEST', mac);
    await until(async () => (await db.query("SELECT end_reason FROM sessions WHERE id = $1", [s.session_id])).rows[0]?.end_reason === 'blocked');
  });

  test('a session ends by itself at its end time (session_timeout), with its end record', async ({ redis, db }) => {
    const mac = 'AA:00:00:00:00:05';
    const s = await signIn('SESS-TEST', mac);
    // Bring its end to 1.5 s from now in Redis, then let the actor reload it.
    const endsAt = Date.now() + 1500;
    await redis.hset(keys.grant(t.tenantId, t.hotspotId, mac), 'until', endsAt);
    await redis.zadd(keys.live(t.tenantId, t.hotspotId), endsAt, s.session_id);
    await svc.service.engine.actors!.request({ t: 'started', tenant: t.tenantId, hs: t.hotspotId, tz: 'Europe/Istanbul', sid: s.session_id, mac, replaced: '' });
    await until(async () => {
      const { rows } = await db.query('SELECT status, end_reason FROM sessions WHERE id = $1', [s.session_id]);
      return rows[0]?.status === 'ended' && rows[0]?.end_reason === 'session_timeout';
    }, { timeoutMs: 8_000 });
  });

  test('guests and history by MAC; another tenant sees none of them', async () => {
    await until(async () => (await call(svc.base, 'GET', '/v1/guests?mac=aa-00-00-00-00-01', { auth: t.apiKey })).body.data.length === 1);
    const g = await call(svc.base, 'GET', '/v1/guests?mac=aa-00-00-00-00-01', { auth: t.apiKey });
    expect(g.body.data[0]).toMatchObject({ mac: 'AA:00:00:00:00:01', sessions: 1, blocked: false, last_auth_method: 'voucher' });
    const h = await call(svc.base, 'GET', '/v1/guests/AA:00:00:00:00:01/history?days=7', { auth: t.apiKey });
    expect(h.status).toBe(200);
    expect(h.body.data).toHaveLength(1);

    const other = await newTenant(svc.service, 'Other');
    expect((await call(svc.base, 'GET', '/v1/guests', { auth: other.apiKey })).body.data).toEqual([]);
    expect((await call(svc.base, 'GET', '/v1/sessions', { auth: other.apiKey })).body.total).toBe(0);
    const any = (await call(svc.base, 'GET', '/v1/sessions', { auth: t.apiKey })).body.data[0];
    expect((await call(svc.base, 'GET', `/v1/sessions/${any.id}`, { auth: other.apiKey })).status).toBe(404);
    expect((await call(svc.base, 'DELETE', `/v1/sessions/${any.id}`, { auth: other.apiKey })).status).toBe(404);
  });
});
