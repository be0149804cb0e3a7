import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startLocalServices, type LocalServices } from '../../scripts/local-services.js';
import { call, mac, newTenant, newVoucher, startService, until, type Running, type Tenant } from '../support/fixture.js';
import { asPostgres } from './own-stack.js';

const run = promisify(execFile);
const isRoot = process.getuid?.() === 0;

/**
 * DATABASE_REPLICA_URL (docs/scale.md, "Postgres: a primary and read replicas"): the reports read
 * from a streaming replica, and nothing else depends on it. The file has its own primary (throw-away)
 * and a hot standby made from it with pg_basebackup, whose replay it pauses and whose server it stops.
 */
describe('reports on a read replica', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-replica-'));
  const standbyDir = join(dir, 'standby');
  let primary: LocalServices;
  let standbyPort: number;
  let svc: Running;
  let db: pg.Client;
  let replica: pg.Client;
  let t: Tenant;
  const DAY = '2026-05-05';

  beforeAll(async () => {
    primary = await startLocalServices({ dir, ephemeral: true });
    mkdirSync(standbyDir, { mode: 0o700 });
    if (isRoot) {
      const id = async (flag: string): Promise<number> => Number((await run('id', [flag, 'postgres'])).stdout.trim());
      chownSync(standbyDir, await id('-u'), await id('-g'));
    }
    await asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.pgPort), '-U', 'postgres', '-D', standbyDir, '-R', '-X', 'stream', '-c', 'fast']);
    standbyPort = await freePort();
    await asPostgres('pg_ctl', ['-D', standbyDir, '-l', join(standbyDir, 'server.log'), '-o', `-p ${standbyPort}`, '-w', '-t', '60', 'start']);
    const standbyUrl = primary.databaseUrl.replace(`:${primary.pgPort}/`, `:${standbyPort}/`);
    svc = await startService({ REDIS_URL: primary.redisUrl, DATABASE_URL: primary.databaseUrl, DATABASE_REPLICA_URL: standbyUrl });
    t = await newTenant(svc.service, 'Replica Venue');
    db = new pg.Client(primary.databaseUrl);
    await db.connect();
    replica = new pg.Client(standbyUrl);
    await replica.connect();
  });
  afterAll(async () => {
    await replica?.end().catch(() => undefined);
    await db?.end();
    await svc?.stop();
    await asPostgres('pg_ctl', ['-D', standbyDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    await primary?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** n sessions of the tenant on DAY, written to the primary as the sink would. */
  const addSessions = (from: number, n: number) => db.query(
    `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, ssid, started_at, ends_at, device_type)
     SELECT 'sess_rep' || $1 || lpad(g::text, 3, '0'), $1, $2, '02:00:00:00:07:' || lpad(to_hex(g), 2, '0'), 'voucher', 'Guest',
            timestamptz '2026-05-05 09:00:00+03' + g * interval '1 minute', timestamptz '2026-05-05 12:00:00+03', 'android'
     FROM generate_series($3::int, $4::int) g`, [t.tenantId, t.hotspotId, from, from + n - 1]);
  const onReplica = async (): Promise<number> =>
    (await replica.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [t.tenantId])).rows[0]!.n;
  const reported = async (): Promise<number> => {
    const r = await call(svc.base, 'GET', `/v1/reports/sessions?from=${DAY}&to=${DAY}`, { auth: t.apiKey });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return (r.body as { data: unknown[] }).data.length;
  };

  it('the session report is what the replica holds: a paused replay hides newer rows, which show once it goes on', async () => {
    await addSessions(1, 3);
    await until(async () => (await onReplica()) === 3, { what: 'the replica replaying the first rows' });
    expect(await reported()).toBe(3);

    await replica.query('SELECT pg_wal_replay_pause()');
    await until(async () => (await replica.query<{ s: string }>('SELECT pg_get_wal_replay_pause_state() AS s')).rows[0]!.s === 'paused',
      { what: 'replay paused' });
    await addSessions(4, 2);
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [t.tenantId])).rows[0]!.n).toBe(5);
    expect(await reported()).toBe(3);

    await replica.query('SELECT pg_wal_replay_resume()');
    await until(async () => (await reported()) === 5, { what: 'the report catching up with the replica' });
  });

  it('with the replica down, reports answer 503 and sign-ins, the API and readiness go on', async () => {
    const v = await newVoucher(svc.base, t, { max_uses: null });
    await replica.end();
    await asPostgres('pg_ctl', ['-D', standbyDir, '-m', 'fast', '-w', 'stop']);
    const r = await call(svc.base, 'GET', `/v1/reports/sessions?from=${DAY}&to=${DAY}`, { auth: t.apiKey });
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body).toMatchObject({ error: 'service_unavailable', message: expect.any(String) });
    const signIn = await call(svc.base, 'POST', '/api/v1/hotspot-portal/voucher/verify', { body: { hotspot_id: t.hotspotId, code: v.code, mac: mac(1, 0x71) } });
    expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);
    expect((await call(svc.base, 'GET', '/v1/hotspots', { auth: t.apiKey })).status).toBe(200);
    expect((await fetch(`${svc.base}/readyz`)).status).toBe(200);
  });
});
