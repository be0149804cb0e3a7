import { beforeAll, describe, expect } from 'vitest';
import { e2eTest, until, type ServiceProcess } from './own-stack.js';
import { clearOfMidnight, DAY_SCENARIO_MS } from '../support/fixture.js';

const test = e2eTest('e2e-partition-node');

/**
 * The sink remembers which daily partitions of audit_records it created. If
 * one disappears under it (a failover to a replica that missed the CREATE, a
 * restore), Postgres refuses the day's inserts with "no partition found"
 * (23514): that is the sink's cache being wrong, not the records, so they
 * must be retried into a partition made again, never dead-lettered.
 * Its own Redis and Postgres: dropping today's partition would take other
 * test files' records with it.
 */
describe('a daily partition lost under the sink', () => {
  // Its records are read back by their UTC day: the file's scenarios run clear of midnight.
  beforeAll(() => clearOfMidnight(DAY_SCENARIO_MS), DAY_SCENARIO_MS + 10_000);
  let svc: ServiceProcess | undefined;

  test('is made again and the records land; nothing is dead-lettered', async ({ stack, db, spawn }) => {
    svc = await spawn();
    const { tenant_id: tenantId, api_key: apiKey } = await stack.cli(['tenant', 'create', '--name', 'Partition Venue', '--json']);
    const post = async (path: string, body: unknown, key?: string): Promise<{ status: number; body: any }> => {
      const res = await fetch(svc!.base + path, {
        method: 'POST', body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
      });
      return { status: res.status, body: await res.json() };
    };
    const hs = await post('/v1/hotspots', { name: 'Hall', timezone: 'UTC' }, apiKey);
    expect(hs.status).toBe(201);
    expect((await post('/v1/vouchers', { code: 'PART-1', max_uses: null }, apiKey)).status).toBe(201);
    const signIn = async (n: number): Promise<string> => {
      const r = await post(`/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hs.body.id}`, { code: 'PART-1', mac: `02:AB:00:00:00:${n.toString(16).padStart(2, '0')}` });
      expect(r.status).toBe(200);
      return r.body.session_id;
    };
    const count = async (): Promise<number> =>
      (await db.query("SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start'", [tenantId])).rows[0].n;

    const first = await signIn(1);
    await until(async () => (await count()) === 1, { timeoutMs: 10_000, what: 'the first start record in Postgres' });
    // Today's partition goes away; the sink still believes it exists.
    const day = new Date().toISOString().slice(0, 10).replace(/-/g, '');
    await db.query(`DROP TABLE audit_records_${day}`);

    const later = [await signIn(2), await signIn(3)];
    await until(async () => (await count()) === 2, { timeoutMs: 20_000, what: 'both later start records in Postgres' });
    const rows = await db.query("SELECT session_id FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start' ORDER BY seq", [tenantId]);
    expect(rows.rows.map((r) => r.session_id)).toEqual(later);
    expect(first).not.toBe(later[0]);

    const metrics = await (await fetch(`${svc!.base}/metrics`)).text();
    expect(/^guestwifi_outbox_dead_letters_total (\S+)$/m.exec(metrics)?.[1]).toBe('0');
  });
});
