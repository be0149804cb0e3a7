import { describe, expect } from 'vitest';
import { slotOf } from '../../engine/redis/redis-client.js';
import { clusterServiceTest } from '../support/cluster-service.js';
import { call, keys, macs, newVoucher, until } from '../support/fixture.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const test = clusterServiceTest({}, { replicasPerMaster: 1 });

/**
 * A master fail-over on a Redis Cluster with one replica a master, while a
 * tenant's guests sign in: the replica takes over (CLUSTER FAILOVER, the
 * operator's planned switch: the master stops taking writes until the
 * replica has them all), callers get MOVED and follow it, and the new master
 * has another run_id, so the tenant is loaded again from Postgres before its
 * next sign-in. The errors are counted: none is expected of a planned switch.
 */
describe('a master fail-over on a Redis Cluster', () => {
  test('sign-ins across CLUSTER FAILOVER of their tenant\'s master: none fails, each counted once', async ({ svc, spread, cluster }) => {
    const t = spread[0]!;
    const slot = slotOf(keys.loaded(t.tenantId));
    const mac = macs();
    const v = await newVoucher(svc.base, t, { max_uses: 1000 });
    const signIn = async (): Promise<number> =>
      (await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: v.code, mac: mac() } })).status;
    expect(await signIn()).toBe(200);

    const master = cluster.node(t.master);
    const masterId = String(await master.call('CLUSTER', 'MYID'));
    const replicaLine = ((await master.call('CLUSTER', 'REPLICAS', masterId)) as string[])[0];
    expect(replicaLine, 'the tenant\'s master has a replica').toBeTruthy();
    const replicaPort = Number(/:(\d+)@/.exec(replicaLine!)![1]);
    const replica = cluster.node(replicaPort);
    const statuses: number[] = [];
    let running = true;
    try {
      await until(async () => (await replica.info('replication')).includes('master_link_status:up'), { what: 'the replica in sync', timeoutMs: 20_000 });
      const load = (async () => {
        while (running) statuses.push(await signIn());
      })();
      await until(() => statuses.length >= 3, { what: 'sign-ins before the fail-over' });
      await replica.call('CLUSTER', 'FAILOVER');
      await until(async () => (await cluster.masterOf(slot)) === replicaPort, { what: 'the replica serving the slot', timeoutMs: 20_000 });
      const seen = statuses.length;
      await until(() => statuses.length >= seen + 3, { what: 'sign-ins after the fail-over' });
      running = false;
      await load;

      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      const count = async (): Promise<number> => (await svc.service.engine.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [t.tenantId])).rows[0]!.n;
      await until(async () => (await count()) === statuses.length + 1, { what: 'every sign-in\'s session row', seen: count });
      // The tenant was loaded again into the promoted replica: its marker holds the new master's run_id.
      const runId = /run_id:([0-9a-f]{40})/.exec(await replica.info('server'))![1];
      expect(await replica.get(keys.loaded(t.tenantId))).toBe(runId);
    } finally {
      running = false;
      master.disconnect();
      replica.disconnect();
    }
  });
});
