import type pg from 'pg';
import { describe, expect } from 'vitest';
import { checkStorm } from '../../bench/storm-check.js';
import { CLUSTER_RIDE_THROUGH_MS, slotOf } from '../../engine/redis/redis-client.js';
import { clusterServiceTest } from '../support/cluster-service.js';
import { call, keys, macs, newVoucher, until } from '../support/fixture.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
/** cluster-node-timeout of the test cluster: a killed master is declared failed after it (2 s is the support's). */
const NODE_TIMEOUT_MS = 1_000;
/** Concurrent sign-in loops (guests at the portal at once). */
const LOOPS = 6;
const test = clusterServiceTest({}, { replicasPerMaster: 1, nodeTimeoutMs: NODE_TIMEOUT_MS });

interface Attempt { mac: string; status: number; error?: string; at: number; ms: number }

/**
 * Issue 23 item 4: an unplanned fail-over. The master that holds a tenant's
 * slot is killed with SIGKILL while several loops sign guests in; its replica
 * is elected after the cluster's node timeout. The sign-in errors are counted
 * over the run and in the outage (kill to the replica serving the slot), and
 * afterwards every sign-in answered by the promoted master has its session
 * and start record in Postgres, nothing is there twice, the chain verifies,
 * and the voucher's use count is the number of sessions (no use counted
 * twice, none handed out again).
 *
 * Without REDIS_WAIT_REPLICAS (this test) a fail-over may lose what the old
 * master acknowledged and had not yet sent to its replica: Redis replicates
 * asynchronously (docs/scale.md, "A master fail-over"). On a quiet machine
 * the replica keeps up and nothing is lost; in a loaded test run it fell
 * seconds behind and 23 of 73 answered sign-ins, all answered by the old
 * master, went with it. So those may be missing; none answered after the
 * promotion may. replica-wait-cluster.test.ts covers REDIS_WAIT_REPLICAS.
 */
describe('kill -9 of a Redis Cluster master under sign-ins', () => {
  test('the engine rides the fail-over out: no sign-in fails within the ride-through bound, every sign-in the promoted master answered once in Postgres, uses exact', async ({ svc, spread, cluster }) => {
    const t = spread[0]!;
    const slot = slotOf(keys.loaded(t.tenantId));
    const mac = macs();
    const v = await newVoucher(svc.base, t);
    const attempts: Attempt[] = [];
    const signIn = async (): Promise<void> => {
      const m = mac();
      const at = Date.now();
      const r = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: v.code, mac: m } });
      attempts.push({ mac: m, status: r.status, error: r.body?.error, at, ms: Date.now() - at });
    };
    await signIn();
    expect(attempts[0]!.status).toBe(200);

    const master = cluster.node(t.master);
    const masterId = String(await master.call('CLUSTER', 'MYID'));
    const replicaLine = ((await master.call('CLUSTER', 'REPLICAS', masterId)) as string[])[0];
    master.disconnect();
    expect(replicaLine, 'the tenant\'s master has a replica').toBeTruthy();
    const replicaPort = Number(/:(\d+)@/.exec(replicaLine!)![1]);
    const replica = cluster.node(replicaPort);
    let running = true;
    try {
      await until(async () => (await replica.info('replication')).includes('master_link_status:up'), { what: 'the replica in sync', timeoutMs: 20_000 });
      const loops = Array.from({ length: LOOPS }, async () => {
        while (running) await signIn();
      });
      await until(() => attempts.length >= 30, { what: 'sign-ins before the kill' });
      const killedAt = Date.now();
      const node = cluster.nodes.find((n) => n.port === t.master)!;
      node.child.kill('SIGKILL');
      // The replica's own view: it serves the slot once it won the election (the dead master cannot answer).
      await until(async () => (await replica.call('CLUSTER', 'INFO') as string).includes('cluster_state:ok')
        && (await replica.info('replication')).includes('role:master'), { what: 'the replica promoted', timeoutMs: 30_000 });
      const promotedAt = Date.now();
      // Sign-ins started after the promotion: only the promoted master can have run them (counted as such below).
      await until(() => attempts.filter((a) => a.at >= promotedAt && a.status === 200).length >= 30, { what: 'sign-ins after the fail-over' });
      running = false;
      await Promise.all(loops);

      const failed = attempts.filter((a) => a.status !== 200);
      const inOutage = attempts.filter((a) => a.at + a.ms >= killedAt && a.at <= promotedAt);
      const slowest = Math.max(...attempts.map((a) => a.ms));
      // The figures, for the docs and the lead (not asserted: they are the machine's).
      console.info(`kill -9 of a master: ${attempts.length} sign-ins, ${failed.length} errors `
        + `(${JSON.stringify([...new Set(failed.map((a) => `${a.status} ${a.error}`))])}); outage ${promotedAt - killedAt} ms, `
        + `${inOutage.length} sign-ins in it, ${inOutage.filter((a) => a.status !== 200).length} failed; slowest ${slowest} ms`);
      // Ridden out: no sign-in fails before it has waited the whole bound (a machine slower to elect the replica than that
      // may see a 503 after the bound, which is the documented cost; on this one the outage is 2-3 s and none fails).
      expect(failed.filter((a) => a.ms < CLUSTER_RIDE_THROUGH_MS), 'sign-ins failed before the ride-through bound').toEqual([]);
      expect(inOutage.length, 'sign-ins were in flight during the outage').toBeGreaterThan(0);

      // In Postgres: every sign-in the promoted master answered (it started after the promotion) has its session and
      // start record; one the old master answered may have gone with it (asynchronous replication); nothing twice.
      const answered = attempts.filter((a) => a.status === 200);
      const authorized = new Set(answered.filter((a) => a.at >= promotedAt).map((a) => a.mac));
      const byOldMaster = answered.length - authorized.size;
      expect(authorized.size, 'sign-ins answered after the promotion').toBeGreaterThanOrEqual(30);
      const pool = svc.service.engine.pool as unknown as pg.Pool;
      const landed = async (): Promise<number> => (await pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1 AND mac = ANY($2)', [t.tenantId, [...authorized]])).rows[0]!.n;
      // And the sink has drained the tenant's outbox: what is in Postgres then is all there will be.
      const outbox = (): Promise<number> => svc.service.engine.redis.xlen(keys.outbox(t.tenantId));
      await until(async () => (await landed()) >= authorized.size && (await outbox()) === 0, {
        what: 'the start record of every sign-in answered after the promotion, the outbox drained', timeoutMs: 60_000,
        seen: async () => `${await landed()} of ${authorized.size}, ${await outbox()} in the outbox` });
      const verdict = await checkStorm(pool, t.tenantId, { authorized, stopped: new Set() },
        async () => svc.service.engine.audit.verify(t.tenantId));
      expect(verdict.problems).toEqual([]);
      // The others in Postgres: sign-ins the old master answered, or whose answer was an error.
      expect(verdict.unanswered).toBeLessThanOrEqual(byOldMaster + failed.length);
      console.info(`answered by the old master: ${byOldMaster}, at least ${Math.max(0, byOldMaster - verdict.unanswered)} of them lost with it`);

      // The voucher's count (Redis, on the promoted master) is the sessions' number: no use counted twice, none lost.
      const got = await call(svc.base, 'GET', `/v1/vouchers/${v.id}`, { auth: t.apiKey });
      expect(got.status).toBe(200);
      expect(got.body.current_uses).toBe(verdict.sessions);
    } finally {
      running = false;
      replica.disconnect();
    }
  }, 180_000);
});
