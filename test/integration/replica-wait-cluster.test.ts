import { describe, expect } from 'vitest';
import { clusterServiceTest } from '../support/cluster-service.js';
import { call, keys, macs, newVoucher, until } from '../support/fixture.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
// 2 s for a replica's acknowledgement: the 200s below need one from a replica on a loaded machine,
// the 503 needs the replica stopped (its wait runs out whatever the bound).
const test = clusterServiceTest({ REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '2000' }, { replicasPerMaster: 1 });

/**
 * REDIS_WAIT_REPLICAS on a Redis Cluster: a guest is told they are in only
 * once the replica of the master holding their tenant's slot has the
 * sign-in's writes. Each tenant below sits on another master: the WAIT must
 * go to that master alone (a WAIT sent to a master that took none of the
 * writes answers at once, and the stopped replica would not be noticed).
 */
describe('REDIS_WAIT_REPLICAS on a Redis Cluster', () => {
  test('each sign-in waits on its tenant\'s master alone; a stopped replica holds its master\'s guests only', async ({ svc, spread, cluster }) => {
    const mac = macs();
    const replicaOf = async (masterPort: number): Promise<number> => {
      const master = cluster.node(masterPort);
      try {
        const id = String(await master.call('CLUSTER', 'MYID'));
        let line: string | undefined;
        // cluster_state:ok does not wait for a master to list its replica.
        await until(async () => (line = ((await master.call('CLUSTER', 'REPLICAS', id)) as string[])[0]) !== undefined,
          { what: 'the master lists its replica', timeoutMs: 20_000 });
        return Number(/:(\d+)@/.exec(line!)![1]);
      } finally {
        master.disconnect();
      }
    };
    const waitCalls = async (port: number): Promise<number> => {
      const node = cluster.node(port);
      try {
        return Number(/cmdstat_wait:calls=(\d+)/.exec(await node.info('commandstats'))?.[1] ?? 0);
      } finally {
        node.disconnect();
      }
    };
    const verify = (t: (typeof spread)[number], code: string, device: string) =>
      call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code, mac: device } });

    for (const t of spread) {
      const replica = cluster.node(await replicaOf(t.master));
      try {
        await until(async () => (await replica.info('replication')).includes('master_link_status:up'), { what: 'the replica in sync', timeoutMs: 20_000 });
        const v = await newVoucher(svc.base, t);
        const before = await Promise.all(spread.map((s) => waitCalls(s.master)));
        const r = await verify(t, v.code, mac());
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        const after = await Promise.all(spread.map((s) => waitCalls(s.master)));
        // The WAIT went to the tenant's master, and to no other.
        expect(spread.map((s, i) => after[i]! - before[i]! > 0)).toEqual(spread.map((s) => s.master === t.master));
        await replica.call('READONLY'); // a cluster replica answers reads of its master's slots only after READONLY
        expect(await replica.exists(keys.sessionRef(t.tenantId, r.body.session_id))).toBe(1);
      } finally {
        replica.disconnect();
      }
    }

    // Stop the replica of the first tenant's master: its guests wait for it and are told to retry;
    // the other tenants, on other masters, sign in as before.
    const [held, ...others] = spread;
    const port = await replicaOf(held!.master);
    const stopped = cluster.nodes.find((n) => n.port === port)!.child;
    const v = await newVoucher(svc.base, held!, { max_uses: 1 });
    const device = mac();
    stopped.kill('SIGSTOP');
    try {
      const r = await verify(held!, v.code, device);
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.body.error).toBe('service_unavailable');
      for (const t of others) {
        const w = await newVoucher(svc.base, t);
        const ok = await verify(t, w.code, mac());
        expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      }
    } finally {
      stopped.kill('SIGCONT');
    }
    // The use is spent on the master; the same device's retry gets its live session back, not a
    // second use (retried while the woken replica catches up with its master).
    let again!: Awaited<ReturnType<typeof verify>>;
    await until(async () => (again = await verify(held!, v.code, device)).status !== 503, { what: 'the replica back', timeoutMs: 20_000 });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.uses_left).toBe(0);
  });
});
