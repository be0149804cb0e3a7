import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { slotOf } from '../../engine/redis/redis-client.js';
import { clusterServiceTest } from '../support/cluster-service.js';
import { call, keys, macs, newVoucher, until } from '../support/fixture.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';

/** TRYAGAIN and ASK answers a node has given (INFO errorstats). */
async function redirections(node: Redis): Promise<number> {
  const info = await node.info('errorstats');
  return ['TRYAGAIN', 'ASK'].reduce((n, e) => n + Number(new RegExp(`errorstat_${e}:count=(\\d+)`).exec(info)?.[1] ?? 0), 0);
}
const test = clusterServiceTest();

/**
 * A tenant's slot moved to another master while its guests sign in, as
 * `redis-cli --cluster reshard` moves it (MIGRATE in batches, then SETSLOT
 * NODE): a script call meanwhile gets ASK (its keys already moved) or
 * TRYAGAIN (its keys split between the two, or new keys the importing node
 * cannot take yet), and MOVED once the slot is the new master's. ioredis
 * follows ASK and MOVED and retries TRYAGAIN (every 100 ms, 16 times): a
 * tenant's slot moved in well under that loses no sign-in, each is counted
 * once, and the sink's records all reach Postgres from the new master.
 */
describe('a slot moved under load on a Redis Cluster', () => {
  test('sign-ins during and after the migration of their tenant\'s slot all succeed, once each', async ({ svc, spread, cluster }) => {
    const t = spread[0]!;
    const target = spread[1]!.master;
    const slot = slotOf(keys.loaded(t.tenantId));
    const mac = macs();
    const v = await newVoucher(svc.base, t, { max_uses: 1000 });
    const refused: string[] = [];
    const signIn = async (): Promise<number> => {
      const r = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: v.code, mac: mac() } });
      if (r.status !== 200) refused.push(JSON.stringify(r.body));
      return r.status;
    };
    expect(await signIn()).toBe(200);

    const from = cluster.node(t.master);
    const to = cluster.node(target);
    const others = cluster.nodes.filter((n) => n.port !== t.master && n.port !== target).map((n) => cluster.node(n.port));
    const statuses: number[] = [];
    let migrating = true;
    try {
      const fromId = String(await from.call('CLUSTER', 'MYID'));
      const toId = String(await to.call('CLUSTER', 'MYID'));
      // Sign-ins keep coming, two at a time, for the whole migration.
      const loop = async (): Promise<void> => {
        while (migrating) {
          statuses.push(await signIn());
        }
      };
      const load = Promise.all([loop(), loop()]);
      await until(() => statuses.length >= 2, { what: 'sign-ins before the move' });
      const before = await redirections(from);
      await to.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId);
      await from.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId);
      // A sign-in meets the slot migrating (the old owner answers it TRYAGAIN or ASK) before its keys move.
      await until(async () => (await redirections(from)) > before, { what: 'a call redirected by the migrating slot' });
      for (;;) {
        const batch = (await from.call('CLUSTER', 'GETKEYSINSLOT', slot, 100)) as string[];
        if (batch.length === 0) break;
        await from.call('MIGRATE', '127.0.0.1', target, '', 0, 5000, 'KEYS', ...batch);
      }
      // The new owner first, then the old one, then the rest (the order redis-cli keeps): the other way round,
      // the old owner would send callers to a node that still sends them back.
      for (const n of [to, from, ...others]) await n.call('CLUSTER', 'SETSLOT', slot, 'NODE', toId);
      const seen = statuses.length;
      await until(() => statuses.length >= seen + 4, { what: 'sign-ins after the move (MOVED)' });
      migrating = false;
      await load;

      expect(await cluster.masterOf(slot)).toBe(target);
      expect(statuses.length).toBeGreaterThan(5);
      expect(refused).toEqual([]);
      const count = async (): Promise<number> => (await svc.service.engine.pool.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [t.tenantId])).rows[0]!.n;
      await until(async () => (await count()) === statuses.length + 1, { what: 'every sign-in\'s session row', seen: count });
      expect(Number(await to.hget(keys.voucher(t.tenantId, v.code), 'uses'))).toBe(statuses.length + 1);
    } finally {
      migrating = false;
      for (const n of [from, to, ...others]) n.disconnect();
    }
  });
});
