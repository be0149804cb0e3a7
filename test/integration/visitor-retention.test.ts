import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { createLogger, RETENTION_LOCK_ID } from '../../engine/index.js';
import { expireVisitors } from '../../engine/privacy/legal-holds.js';
import { retentionCutoff } from '../../engine/audit/retention-cutoff.js';
import { poolTest as test } from '../support/fixture.js';

/**
 * The report's visitor keys (migration 025) are personal data, pseudonymous:
 * the retention job deletes visits past the 730-day cutoff and the visitors
 * left with none, and logs what it deleted per tenant.
 */
describe('visitor keys past retention', () => {
  test('old visits go, a visitor with none left goes, a visitor seen since stays (first day kept)', async ({ pool }) => {
    const tenant = `tn_vret${randomBytes(4).toString('hex')}`;
    const now = Date.parse('2026-11-28T12:00:00Z');
    const cutoff = retentionCutoff(now);
    const day = (offset: number): string => new Date(Date.parse(cutoff) + offset * 86_400_000).toISOString().slice(0, 10);
    const key = (n: string): Buffer => Buffer.from(n.padEnd(32, '.'));
    const visits: [string, string][] = [['a', day(-10)], ['a', day(5)], ['b', day(-3)], ['c', day(700)]];
    // The retention job of a service started by another test file runs on the real clock across every tenant, and may
    // delete these rows (dated around its cutoff) before or after the call under test. It runs under this advisory lock
    // (engine/audit/retention.ts) and skips a turn when it is held: held here from the seeding to the last read.
    const c = await pool.connect();
    await c.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK_ID]);
    try {
      for (const [v, d] of visits) {
        await c.query('INSERT INTO report_visits (tenant_id, hotspot_id, day, visitor) VALUES ($1, $2, $3, $4)', [tenant, 'hs_1', d, key(v)]);
      }
      for (const [v, d] of [['a', day(-10)], ['b', day(-3)], ['c', day(700)]] as const) {
        await c.query('INSERT INTO report_visitors (tenant_id, hotspot_id, visitor, first_day) VALUES ($1, $2, $3, $4)', [tenant, 'hs_1', key(v), d]);
      }
      await expireVisitors(c, createLogger('silent'), now);
      const left = await c.query<{ v: string; day: string }>(
        "SELECT convert_from(rtrim(visitor, '.'), 'UTF8') AS v, day::text AS day FROM report_visits WHERE tenant_id = $1 ORDER BY v, day", [tenant]);
      expect(left.rows).toEqual([{ v: 'a', day: day(5) }, { v: 'c', day: day(700) }]);
      const visitors = await c.query<{ v: string; first_day: string }>(
        "SELECT convert_from(rtrim(visitor, '.'), 'UTF8') AS v, first_day::text AS first_day FROM report_visitors WHERE tenant_id = $1 ORDER BY v", [tenant]);
      // a's first visit is kept as its first day: a visit since then makes it a returning visitor still.
      expect(visitors.rows).toEqual([{ v: 'a', first_day: day(-10) }, { v: 'c', first_day: day(700) }]);
      // What this tenant lost (the call's answer counts every tenant's rows).
      const logged = await c.query('SELECT kind, category, rows FROM privacy_deletions WHERE tenant_id = $1', [tenant]);
      expect(logged.rows).toEqual([{ kind: 'retention', category: 'report_visitors', rows: 3 }]);
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_ID]);
      c.release();
    }
  });
});
