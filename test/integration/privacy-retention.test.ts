import { randomBytes } from 'node:crypto';
import { describe, expect } from 'vitest';
import { createLogger, personalDataRetention, runRetention } from '../../engine/index.js';
import { poolTest as test, until } from '../support/fixture.js';

/**
 * Issue 21, Build 6: automatic deletions at the end of retention are logged per tenant
 * (privacy_deletions, read by GET /v1/privacy/deletions), and session rows past retention lose
 * the guest (MAC, IP, user name) unless a legal hold keeps them.
 */
describe('personal data: deletions at the end of retention', () => {
  test('a dropped audit partition and expired session rows are logged per tenant; held rows wait for their hold', async ({ pool, db }) => {
    const tenant = `tn_prv_${randomBytes(5).toString('hex')}`;
    const day = '2021-07-03';
    // In one transaction: another file's retention run either sees the partition with its rows or not at all.
    await db.query('BEGIN');
    await db.query(`CREATE TABLE IF NOT EXISTS audit_records_20210703 PARTITION OF audit_records FOR VALUES FROM ('2021-07-03') TO ('2021-07-04')`);
    await db.query(
      `INSERT INTO audit_records (tenant_id, seq, id, event_type, ts, mac_address, username, prev_hash, hash_chain_value, day)
       VALUES ($1, 1, 'r1', 'session_start', '2021-07-03T10:00:00Z', '02:AA:00:00:00:01', '+905320000001', 'sha256:0', 'sha256:1', $2),
              ($1, 2, 'r2', 'session_end', '2021-07-03T11:00:00Z', '02:AA:00:00:00:01', '+905320000001', 'sha256:1', 'sha256:2', $2)`, [tenant, day]);
    await db.query('COMMIT');
    const session = (id: string, hold: string | null) => db.query(
      `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, ip, username, auth_method, started_at, ends_at, status, legal_hold)
       VALUES ($1, $2, 'hs_x', '02:AA:00:00:00:01', '10.0.0.9', '+905320000001', 'sms_otp', '2021-07-03T10:00:00Z', '2021-07-03T11:00:00Z', 'ended', $3)`,
      [id, tenant, hold]);
    await session(`sess_${tenant}_a`, null);
    await session(`sess_${tenant}_held`, 'lgh_held0000000000');

    // Another file's retention run may hold the job's lock (or drop this partition itself): either way the drop is logged.
    await until(async () => {
      const log = createLogger('silent');
      await runRetention(pool, log, Date.parse('2026-11-22T00:00:00Z'), (c, at) => personalDataRetention(c, log, at));
      const { rows } = await db.query('SELECT DISTINCT category FROM privacy_deletions WHERE tenant_id = $1', [tenant]);
      return rows.length === 2;
    }, { what: 'the retention run' });
    const log = await db.query<{ kind: string; category: string; rows: number; ref: string }>(
      'SELECT kind, category, rows, ref FROM privacy_deletions WHERE tenant_id = $1 ORDER BY category', [tenant]);
    expect(log.rows).toEqual([
      { kind: 'retention', category: 'audit_records', rows: 2, ref: 'audit_records_20210703' },
      { kind: 'retention', category: 'sessions', rows: 1, ref: expect.stringMatching(/^before \d{4}-\d{2}-\d{2}$/) },
    ]);
    const rows = await db.query('SELECT id, mac, ip, username FROM sessions WHERE tenant_id = $1 ORDER BY id', [tenant]);
    expect(rows.rows).toEqual([
      { id: `sess_${tenant}_a`, mac: 'expired', ip: null, username: null },
      { id: `sess_${tenant}_held`, mac: '02:AA:00:00:00:01', ip: '10.0.0.9', username: '+905320000001' },
    ]);
  });
});
