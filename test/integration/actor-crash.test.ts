import { describe, expect } from 'vitest';
import { threadIndex } from '../../engine/index.js';
import { call, keys, serviceTest, until } from '../support/fixture.js';

const test = serviceTest({ ACTOR_THREADS: '2' });

/**
 * A worker thread killed while sessions are live: its hotspots come back
 * with every session (rebuilt from Redis), none lost, none duplicated, and
 * their clocks still run.
 */
describe('actor thread crash', () => {
  test('sessions of a killed thread survive, answer, and still end on time', async ({ svc, redis, db, tenant: t }) => {
    const engine = svc.service.engine;
    const pool = engine.actors!;
    // A second hotspot on the other thread, so one thread's death is seen beside a healthy one.
    let other = await engine.hotspots.create(t.tenantId, { name: 'Other', timezone: 'UTC' });
    for (let i = 0; i < 20 && threadIndex(t.tenantId, other.id, 2) === threadIndex(t.tenantId, t.hotspotId, 2); i++) {
      other = await engine.hotspots.create(t.tenantId, { name: `Other ${i}`, timezone: 'UTC' });
    }
    expect(threadIndex(t.tenantId, other.id, 2)).not.toBe(threadIndex(t.tenantId, t.hotspotId, 2));
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'CRASH-1', max_uses: null } });

    const sids: string[] = [];
    const signIns = [];
    for (let i = 0; i < 60; i++) {
      const hs = i % 2 ? other.id : t.hotspotId;
      const mac = `CC:00:00:00:00:${i.toString(16).padStart(2, '0')}`;
      signIns.push(call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hs}`, { body: { code: 'CRASH-1', mac } }));
    }
    for (const r of await Promise.all(signIns)) {
      expect(r.status).toBe(200);
      sids.push(r.body.session_id);
    }
    // Actors copy a session when it is first asked about: read each once.
    for (const sid of sids) expect((await call(svc.base, 'GET', `/v1/sessions/${sid}`, { auth: t.apiKey })).status).toBe(200);
    // Counted per hotspot: this process may also adopt hotspots that other test files' finished services left live.
    const held = async (): Promise<number[]> => Promise.all([t.hotspotId, other.id].map((hs) => pool.hotspotSessions(t.tenantId, hs, 'UTC')));
    expect(await held()).toEqual([30, 30]);

    // Kill the thread of the first hotspot while a stream of reads is in flight.
    const victim = threadIndex(t.tenantId, t.hotspotId, 2);
    const reads = sids.map((sid) => call(svc.base, 'GET', `/v1/sessions/${sid}`, { auth: t.apiKey }));
    await pool.killThread(victim);
    const answers = await Promise.all(reads);
    for (const a of answers) expect([200, 503]).toContain(a.status);

    // Every session is readable and live again, each exactly once.
    await until(async () => {
      const again = await Promise.all(sids.map((sid) => call(svc.base, 'GET', `/v1/sessions/${sid}`, { auth: t.apiKey })));
      return again.every((a) => a.status === 200 && a.body.status === 'active');
    }, { timeoutMs: 10_000 });
    // The restarted thread's hotspots were woken again and reloaded every session from Redis.
    await until(async () => (await held()).join() === '30,30', { timeoutMs: 8_000, seen: held });
    const live = await redis.zcard(keys.live(t.tenantId, t.hotspotId));
    expect(live).toBe(30);

    // The restarted thread's clock still ends sessions: shorten one and watch it end exactly once.
    const sid = sids[0]!;
    const endsAt = Date.now() + 1000;
    await redis.hset(keys.grant(t.tenantId, t.hotspotId, 'CC:00:00:00:00:00'), 'until', endsAt);
    await redis.zadd(keys.live(t.tenantId, t.hotspotId), endsAt, sid);
    await pool.request({ t: 'started', tenant: t.tenantId, hs: t.hotspotId, tz: 'UTC', sid, mac: 'CC:00:00:00:00:00', replaced: '' });
    await until(async () => (await db.query("SELECT status FROM sessions WHERE id = $1", [sid])).rows[0]?.status === 'ended', { timeoutMs: 8_000 });
    const ends = await db.query("SELECT count(*)::int AS n FROM audit_records WHERE session_id = $1 AND event_type = 'session_end'", [sid]);
    expect(ends.rows[0].n).toBe(1);
    const starts = await db.query("SELECT count(*)::int AS n, count(DISTINCT session_id)::int AS d FROM audit_records WHERE session_id = ANY($1) AND event_type = 'session_start'", [sids]);
    expect(starts.rows[0]).toEqual({ n: 60, d: 60 });
  });
  test('a session that ran out while no actor watched it ends at its own time, not when it is found', async ({ svc, redis, db, tenant: t }) => {
    const pool = svc.service.engine.actors!;
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'LATE-1', max_uses: null, duration_minutes: 60 } });
    const mac = 'CD:00:00:00:00:01';
    const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'LATE-1', mac } });
    expect(r.status).toBe(200);
    const sid: string = r.body.session_id;
    // As if its hour had run out 20 minutes ago while the engine was away: Redis says so, the actor does not know yet.
    const endsAt = Date.now() - 20 * 60_000;
    await redis.hset(keys.grant(t.tenantId, t.hotspotId, mac), 'until', endsAt);
    await redis.zadd(keys.live(t.tenantId, t.hotspotId), endsAt, sid);
    await pool.killThread(threadIndex(t.tenantId, t.hotspotId, 2));
    await until(async () => (await db.query('SELECT status FROM sessions WHERE id = $1', [sid])).rows[0]?.status === 'ended', { timeoutMs: 10_000 });
    const row = (await db.query('SELECT end_reason, ended_at FROM sessions WHERE id = $1', [sid])).rows[0];
    expect(row.end_reason).toBe('session_timeout');
    expect(row.ended_at.getTime()).toBe(endsAt);
    const end = await db.query("SELECT ts FROM audit_records WHERE session_id = $1 AND event_type = 'session_end'", [sid]);
    expect(end.rows.map((e) => e.ts.getTime())).toEqual([endsAt]);
  });

  test('a hotspot whose lease another process took is answered 503 here, not from an empty actor, until this process holds it again', async ({ svc, redis, tenant: t }) => {
    const engine = svc.service.engine;
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'LEASE-1', max_uses: null } });
    const mac = 'CC:00:00:00:01:01';
    const signIn = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'LEASE-1', mac } });
    expect(signIn.status).toBe(200);
    const live = () => call(svc.base, 'GET', `/v1/sessions/${signIn.body.session_id}`, { auth: t.apiKey });
    expect((await live()).body.status).toBe('active');
    // Another process takes the lease (this one's renewal, every 10 s, finds it gone).
    const lease = keys.lease(t.tenantId, t.hotspotId);
    await redis.set(lease, 'another-node', 'PX', 60_000);
    const nas = { id: 'nas_none', tenantId: t.tenantId, hotspotId: t.hotspotId, ip: '127.0.0.9', secret: 'x', coaPort: 3799, requireMessageAuthenticator: false };
    const ask = async () => engine.radius.authorize({ nas, mac, userName: 'guest' });
    await until(async () => {
      try {
        await ask();
        return false;
      } catch (err) {
        return (err as { code?: string }).code === 'hotspot_owned_elsewhere';
      }
    }, { timeoutMs: 20_000 });
    // Once the other process's lease is gone, this one takes the hotspot back with its sessions at its next request
    // (it asks at most once a second, and is next in line, so no process that merely woke the hotspot gets it first:
    // lease-takeback.test.ts): a second plus a reload of one session; 10 s is room for a busy machine.
    await redis.del(lease);
    await until(async () => (await ask().catch(() => ({ accept: false }))).accept === true,
      { timeoutMs: 10_000, what: 'the take-back', seen: () => redis.get(lease) });
    expect(await ask()).toMatchObject({ accept: true, sessionId: signIn.body.session_id });
  });
});
