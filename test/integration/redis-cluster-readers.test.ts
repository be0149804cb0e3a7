import { describe, expect } from 'vitest';
import type { DomainEvent } from '../../engine/events/types.js';
import { clusterServiceTest } from '../support/cluster-service.js';
import { call, keys, macs, newVoucher, until } from '../support/fixture.js';
import { OUTBOX_GROUP } from '../../engine/redis/keys.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const test = clusterServiceTest();

/**
 * The readers that span tenants, on a 3-master Redis Cluster with tenants on
 * every master: the outbox sink's XREADGROUP over all tenants' streams and
 * the event fan-out's XREAD over its listeners' tenants. One command over
 * streams of several slots is refused there (CROSSSLOT); split per slot, every
 * tenant's records reach Postgres and every tenant's events its listeners.
 */
describe('readers across tenants on a Redis Cluster', () => {
  test('sign-ins of tenants on three masters: each session row in Postgres once, each event at its own tenant\'s listener', async ({ svc, spread, cluster }) => {
    const engine = svc.service.engine;
    const mac = macs();
    expect(new Set(spread.map((t) => t.master)).size).toBe(3);
    const seen = new Map<string, DomainEvent[]>(spread.map((t) => [t.tenantId, []]));
    const stops = spread.map((t) => engine.fanout.subscribe(t.tenantId, (e) => seen.get(t.tenantId)!.push(e)));
    try {
      await Promise.all(spread.map((t) => engine.fanout.ready(t.tenantId)));
      const sessions = new Map<string, string[]>();
      for (const t of spread) {
        const v = await newVoucher(svc.base, t);
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: v.code, mac: mac() } });
          expect(r.status, JSON.stringify(r.body)).toBe(200);
          ids.push(String(r.body.session_id));
        }
        sessions.set(t.tenantId, ids);
      }

      // The fan-out: each tenant's listener gets its three redemptions, and nothing of the others.
      await until(() => spread.every((t) => seen.get(t.tenantId)!.filter((e) => e.type === 'voucher.redeemed').length === 3), {
        what: 'three voucher.redeemed per tenant at its listener',
        seen: () => [...seen].map(([t, es]) => [t, es.map((e) => e.type)]),
      });
      for (const t of spread) expect(seen.get(t.tenantId)!.every((e) => e.tenantId === t.tenantId)).toBe(true);

      // The outbox sink: every session's start record in Postgres, once.
      const rows = async (): Promise<{ tenant_id: string; n: number }[]> => (await engine.pool.query<{ tenant_id: string; n: number }>(
        'SELECT tenant_id, count(*)::int AS n FROM sessions WHERE tenant_id = ANY($1) GROUP BY tenant_id', [spread.map((t) => t.tenantId)])).rows;
      await until(async () => (await rows()).length === 3 && (await rows()).every((r) => r.n === 3), { what: 'three session rows per tenant', seen: rows });
      const { rows: dup } = await engine.pool.query('SELECT id FROM sessions WHERE tenant_id = ANY($1) GROUP BY id HAVING count(*) > 1', [spread.map((t) => t.tenantId)]);
      expect(dup).toEqual([]);

      // And the streams were read and acknowledged on each master: nothing is left pending in the sink's group.
      for (const t of spread) {
        const node = cluster.node(t.master);
        try {
          await until(async () => Number((await node.xpending(keys.outbox(t.tenantId), OUTBOX_GROUP) as [number])[0]) === 0, { what: `no pending outbox entry of ${t.tenantId}` });
        } finally {
          node.disconnect();
        }
      }
    } finally {
      for (const stop of stops) stop();
    }
  });
});
