import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEFAULT_MODULES, projectPath } from '../../engine/index.js';
import { AcctStatusType, Code } from '../../radius/index.js';
import { checkStorm } from '../../bench/storm-check.js';
import { accessRequest, accountingRequest, type AccountingSpec } from '../radius/helpers.js';
import { call, dashed, keys, macs, spawnService, testEnv, until, type ServiceProcess } from '../support/fixture.js';
import { addLoopbackNas, signedReplyTo, type LoopbackNas } from '../support/loopback-nas.js';
import { startRedisCluster, type TestCluster } from '../support/redis-cluster.js';
import { openStream, type SseConnection } from '../support/sse-client.js';

const run = promisify(execFile);
const randomMac = macs();

/** HOTSPOT_LEASE_MS, shorter than its 30 s default so the file is quick: a dead owner's hotspots move within it. */
const LEASE_MS = 6_000;

/**
 * Issue 23, first "Must show": two engine processes (dist/scripts/serve.js,
 * distinct NODE_IDs) on one 3-master Redis Cluster and one Postgres. The
 * voucher's use stays atomic across them, both serve sign-ins and RADIUS,
 * and when one is killed with SIGKILL the other takes its hotspots over
 * within the lease time: the NAS's retransmitted Accounting-Stops, sent to
 * the survivor (a NAS's fail-over server), are answered once the dead
 * process's lease has run out. Every session's start and end reach Postgres
 * exactly once and the tenant's audit chain verifies.
 */
describe('two engine processes on a Redis Cluster', () => {
  let cluster: TestCluster;
  let redis: Cluster;
  let db: pg.Client;
  let env: NodeJS.ProcessEnv;
  const procs: ServiceProcess[] = [];
  const nases: LoopbackNas[] = [];
  const streams: SseConnection[] = [];
  const ids = { a: `mpx-a-${randomBytes(3).toString('hex')}`, b: `mpx-b-${randomBytes(3).toString('hex')}` };

  beforeAll(async () => {
    cluster = await startRedisCluster();
    env = { ...process.env, ...testEnv({ REDIS_URL: cluster.url, ACTOR_THREADS: '1', HOTSPOT_LEASE_MS: String(LEASE_MS) }) };
    // One after the other: the first applies the migrations the second then finds done.
    procs.push(await spawnService({ ...env, NODE_ID: ids.a }));
    procs.push(await spawnService({ ...env, NODE_ID: ids.b }));
    redis = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }]);
    db = new pg.Client(inject('databaseUrl'));
    await db.connect();
  }, 90_000);
  afterAll(async () => {
    for (const c of streams) c.close();
    for (const n of nases) await n.radius.close();
    await Promise.all(procs.map((p) => p.stop()));
    await db?.end();
    redis?.disconnect();
    await cluster?.stop();
  });

  const cli = async (args: string[]): Promise<any> =>
    JSON.parse((await run(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), ...args], { env, timeout: 60_000 })).stdout);

  async function registerNas(base: string, apiKey: string, hotspotId: string): Promise<LoopbackNas> {
    const nas = await addLoopbackNas(base, { apiKey, hotspotId });
    nases.push(nas);
    return nas;
  }

  /**
   * An Accounting-Request as a NAS sends it: again (a fresh Identifier each
   * time, the same Acct-Session-Id) every second until it is answered, at
   * most `tries` times (RFC 5080 §2.2.1: the NAS retransmits; the record is
   * the same).
   */
  async function account(nas: LoopbackNas, port: number, spec: Partial<AccountingSpec>, tries = 5): Promise<number> {
    for (let i = 1; i <= tries; i++) {
      const req = accountingRequest({ secret: nas.secret, id: nas.nextId(), ...spec });
      await nas.radius.send(req, port);
      const reply = await signedReplyTo(nas, req, 1_000);
      if (reply) {
        expect(reply[0]).toBe(Code.ACCOUNTING_RESPONSE);
        return i;
      }
    }
    throw new Error(`Accounting-Request (status ${spec.status}) for ${spec.callingStationId} not answered in ${tries} tries`);
  }

  async function authorize(nas: LoopbackNas, port: number, mac: string): Promise<number> {
    const req = accessRequest({ secret: nas.secret, id: nas.nextId(), callingStationId: dashed(mac) });
    await nas.radius.send(req, port);
    const reply = await signedReplyTo(nas, req, 5_000);
    expect(reply, `an Access-Request for ${mac} answered`).not.toBeNull();
    return reply![0]!;
  }

  async function leaseHolder(tenant: string, hotspot: string): Promise<string | null> {
    return redis.get(keys.lease(tenant, hotspot));
  }

  it('1,000 verifies over both give 5; both serve; a kill -9 moves its hotspots within the lease; every record once; chain valid', async () => {
    const [a, b] = procs as [ServiceProcess, ServiceProcess];
    const { tenant_id: tenantId, api_key: apiKey } = await cli(['tenant', 'create', '--name', `Two Process Venue ${randomBytes(3).toString('hex')}`,
      '--modules', [...DEFAULT_MODULES, 'dashboard'].join(','), '--json']);
    const post = async (base: string, path: string, body: unknown): Promise<any> => {
      const r = await call(base, 'POST', path, { auth: apiKey, body });
      expect(r.status, `POST ${path}: ${JSON.stringify(r.body)}`).toBe(201);
      return r.body;
    };
    // One hotspot first served by A, one by B; the API of either process makes them.
    const h1 = (await post(a.base, '/v1/hotspots', { name: 'North', timezone: 'UTC' })).id as string;
    const h2 = (await post(b.base, '/v1/hotspots', { name: 'South', timezone: 'UTC' })).id as string;
    const code = `TWO-${randomBytes(4).toString('hex').toUpperCase()}`;
    await post(b.base, '/v1/vouchers', { code, max_uses: null, duration_minutes: 120 });
    const nas1 = await registerNas(a.base, apiKey, h1);
    const nas2 = await registerNas(b.base, apiKey, h2);

    const ledger = { authorized: new Set<string>(), stopped: new Set<string>() };
    const signIn = async (base: string, hs: string, mac: string): Promise<{ session_id: string }> => {
      const r = await call(base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hs}`, { body: { code, mac, ip: '10.40.0.5' } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.status).toBe('authorized');
      ledger.authorized.add(mac);
      return r.body;
    };
    // SSE from any process: a dashboard stream on each hears the sessions started through either.
    for (const p of [a, b]) streams.push(await openStream(p.base, '/api/v1/tenants/me/stream/live-sessions', { 'x-api-key': apiKey }));
    const heard = (site: string) => Promise.all(streams.map((c, i) => c.waitFor((f) => {
      if (!f.data) return false;
      const d = JSON.parse(f.data) as { kind?: string; site_id?: string };
      return d.kind === 'session_started' && d.site_id === site;
    }, 15_000, `session_started of ${site} on ${i ? 'B' : 'A'}'s stream`)));
    // A first sign-in wakes the hotspot's actor in the process that served it, which takes the lease.
    const m = Array.from({ length: 4 }, () => randomMac());
    await signIn(a.base, h1, m[0]!);
    await until(async () => (await leaseHolder(tenantId, h1)) === ids.a, { what: 'A holding the North hotspot' });
    await signIn(b.base, h2, m[2]!);
    await until(async () => (await leaseHolder(tenantId, h2)) === ids.b, { what: 'B holding the South hotspot' });
    await heard(h1);
    await heard(h2);
    // Sign-ins through the process that does not own the hotspot: answered from shared state (the scripts on the cluster).
    const viaB = await signIn(b.base, h1, m[1]!);
    await signIn(a.base, h2, m[3]!);
    // What B's actors refuse for A's hotspot goes to A over pub/sub on the cluster (docs/scale.md, "Forwarding"): an operator's extend through B.
    const ext = await call(b.base, 'POST', `/v1/sessions/${viaB.session_id}/extend`, { auth: apiKey, body: { minutes: 5 } });
    expect(ext.status, `extend through B of a session at A's hotspot: ${JSON.stringify(ext.body)}`).toBe(200);

    // 1,000 concurrent verifies of one max_uses 5 voucher, 500 through each process, from two client processes.
    const five = `FIVE-${randomBytes(4).toString('hex').toUpperCase()}`;
    await post(a.base, '/v1/vouchers', { code: five, max_uses: 5, duration_minutes: 120 });
    const storm = (base: string, prefix: string) =>
      run(process.execPath, [projectPath('test', 'fixtures', 'verify-storm.mjs'), base, h1, five, '500', prefix], { maxBuffer: 16 << 20 })
        .then(({ stdout }) => JSON.parse(stdout) as { status: number; body: any }[]);
    const prefixes = [randomBytes(1)[0]!.toString(16).padStart(2, '0'), randomBytes(1)[0]!.toString(16).padStart(2, '0')];
    if (prefixes[0] === prefixes[1]) prefixes[1] = prefixes[0] === 'ff' ? '00' : 'ff';
    const answers = (await Promise.all([storm(a.base, prefixes[0]!), storm(b.base, prefixes[1]!)])).flat();
    expect(answers).toHaveLength(1000);
    const won = answers.filter((x) => x.status === 200);
    expect(won).toHaveLength(5);
    for (const x of answers.filter((y) => y.status !== 200)) expect(x.body).toEqual({ error: 'voucher_exhausted', max_uses: 5, current_uses: 5 });
    expect(await redis.hget(keys.voucher(tenantId, five), 'uses')).toBe('5');
    await until(async () => (await db.query('SELECT 1 FROM voucher_uses vu JOIN vouchers v ON v.id = vu.voucher_id WHERE v.tenant_id = $1 AND v.code = $2',
      [tenantId, five])).rowCount === 5, { what: 'the five uses in Postgres' });
    const fiveMacs = (await db.query<{ mac: string }>(
      'SELECT vu.mac FROM voucher_uses vu JOIN vouchers v ON v.id = vu.voucher_id WHERE v.tenant_id = $1 AND v.code = $2', [tenantId, five])).rows.map((r) => r.mac);
    expect(new Set(fiveMacs).size).toBe(5);
    for (const mac of fiveMacs) ledger.authorized.add(mac);

    // RADIUS on both: each NAS's packets go to the process that owns its hotspot.
    expect(await authorize(nas1, a.radius.auth, m[0]!)).toBe(Code.ACCESS_ACCEPT);
    expect(await authorize(nas2, b.radius.auth, m[2]!)).toBe(Code.ACCESS_ACCEPT);
    const north = [m[0]!, m[1]!, ...fiveMacs];
    const south = [m[2]!, m[3]!];
    const sid = (mac: string) => `acct-${mac.replace(/:/g, '')}`;
    for (const mac of north) await account(nas1, a.radius.acct, { status: AcctStatusType.START, callingStationId: dashed(mac), acctSessionId: sid(mac) });
    for (const mac of south) await account(nas2, b.radius.acct, { status: AcctStatusType.START, callingStationId: dashed(mac), acctSessionId: sid(mac) });
    expect(await leaseHolder(tenantId, h1)).toBe(ids.a);
    expect(await leaseHolder(tenantId, h2)).toBe(ids.b);

    // kill -9 of A, the North hotspot's owner: its lease stays until it runs out.
    await a.kill9();
    const killedAt = Date.now();
    // Read after the kill: a renewal just before it would otherwise add to what is left unseen.
    const leftAtKill = await redis.pttl(keys.lease(tenantId, h1));
    expect(leftAtKill).toBeLessThanOrEqual(LEASE_MS);
    expect(await leaseHolder(tenantId, h1)).toBe(ids.a);

    // North's NAS fails over to B and retransmits its Stop until answered: B serves the hotspot once A's lease is gone.
    const stop = (mac: string, tries: number) => account(nas1, b.radius.acct,
      { status: AcctStatusType.STOP, callingStationId: dashed(mac), acctSessionId: sid(mac), sessionTime: 60, terminateCause: 1 }, tries);
    const tries = await stop(north[0]!, Math.ceil((LEASE_MS + 10_000) / 1_000));
    const movedAfter = Date.now() - killedAt;
    console.info(`two-processes-cluster: North moved to B ${movedAfter} ms after the kill (A's lease had ${leftAtKill} ms left; ${tries} Stop sends)`);
    ledger.stopped.add(north[0]!);
    expect(await leaseHolder(tenantId, h1)).toBe(ids.b);
    // Within the lease time: what was left of A's lease at the kill, plus B's clock and the NAS's one-second retransmission.
    expect(movedAfter, `North moved ${movedAfter} ms after the kill (${tries} tries); A's lease had ${leftAtKill} ms left`).toBeLessThanOrEqual(leftAtKill + 3_000);
    for (const mac of north.slice(1)) { await stop(mac, 5); ledger.stopped.add(mac); }
    for (const mac of south) {
      await account(nas2, b.radius.acct, { status: AcctStatusType.STOP, callingStationId: dashed(mac), acctSessionId: sid(mac), sessionTime: 60, terminateCause: 1 });
      ledger.stopped.add(mac);
    }

    // B's sink stores everything, the dead consumer's pending entries included (claimed after their idle time).
    const total = north.length + south.length;
    await until(async () => (await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_end'", [tenantId])).rows[0]!.n >= total,
    { timeoutMs: 60_000, what: 'every session end in Postgres' });
    const verdict = await checkStorm(db as unknown as pg.Pool, tenantId, ledger, () => cli(['audit', 'verify', '--tenant', tenantId, '--json']));
    expect(verdict.problems).toEqual([]);
    expect({ sessions: verdict.sessions, starts: verdict.starts, ends: verdict.ends, unanswered: verdict.unanswered }).toEqual({ sessions: total, starts: total, ends: total, unanswered: 0 });
    expect(verdict.chainValid).toBe(true);
  }, 180_000);
});
