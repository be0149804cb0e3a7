import { randomBytes } from 'node:crypto';
import { describe, expect, inject } from 'vitest';
import { createLogger, personalDataRetention, runRetention } from '../../engine/index.js';
import { releaseHolds } from '../../engine/privacy/legal-holds.js';
import type { PoolClient } from '../../engine/store/postgres.js';
import { poolTest as test, until } from '../support/fixture.js';
import { underRetentionLock } from '../support/retention-lock.js';

/**
 * Issue 21, Build 6: automatic deletions at the end of retention are logged per tenant
 * (privacy_deletions, read by GET /v1/privacy/deletions), and session rows past retention lose
 * the guest (MAC, IP, user name), held or not (a hold never extends retention); a released hold's
 * pseudonym stays.
 */
describe('personal data: deletions at the end of retention', () => {
  test('a dropped audit partition and expired session rows are logged per tenant; a held row goes at its own end of retention, a released one keeps its pseudonym', async ({ pool, db }) => {
    const tenant = `tn_prv_${randomBytes(5).toString('hex')}`;
    const day = '2021-07-03';
    // Set up under the retention job's lock: no other file's run (real clock, all tenants) sees the partition without
    // its rows, nor logs the expired sessions in two runs.
    await underRetentionLock(inject('databaseUrl'), async () => {
      await db.query(`CREATE TABLE IF NOT EXISTS audit_records_20210703 PARTITION OF audit_records FOR VALUES FROM ('2021-07-03') TO ('2021-07-04')`);
      await db.query(
        `INSERT INTO audit_records (tenant_id, seq, id, event_type, ts, mac_address, username, prev_hash, hash_chain_value, day)
         VALUES ($1, 1, 'r1', 'session_start', '2021-07-03T10:00:00Z', '02:AA:00:00:00:01', '+905320000001', 'sha256:0', 'sha256:1', $2),
                ($1, 2, 'r2', 'session_end', '2021-07-03T11:00:00Z', '02:AA:00:00:00:01', '+905320000001', 'sha256:1', 'sha256:2', $2)`, [tenant, day]);
      const session = (id: string, hold: string | null, mac = '02:AA:00:00:00:01', startedAt = '2021-07-03T10:00:00Z') => db.query(
        `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, ip, username, auth_method, started_at, ends_at, status, legal_hold)
         VALUES ($1, $2, 'hs_x', $4, '10.0.0.9', '+905320000001', 'sms_otp', $5, $5::timestamptz + interval '1 hour', 'ended', $3)`,
        [id, tenant, hold, mac, startedAt]);
      await session(`sess_${tenant}_a`, null);
      // A hold marks an old row and a recent one: the old one is past its own end of retention and goes
      // now (the hold only stops an early erasure); the recent one waits for its own end, in clear.
      await session(`sess_${tenant}_held`, 'lgh_held0000000000');
      await session(`sess_${tenant}_held_new`, 'lgh_held0000000000', '02:AA:00:00:00:01', '2026-11-01T10:00:00Z');
      // A row a released hold pseudonymised keeps that pseudonym (and is not logged again).
      await db.query(
        `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, ip, username, auth_method, started_at, ends_at, status)
         VALUES ($1, $2, 'hs_x', 'erased-0123456789ab', NULL, NULL, 'sms_otp', '2021-07-03T10:00:00Z', '2021-07-03T11:00:00Z', 'ended')`,
        [`sess_${tenant}_released`, tenant]);
    });
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
      { kind: 'retention', category: 'sessions', rows: 2, ref: expect.stringMatching(/^before \d{4}-\d{2}-\d{2}$/) },
    ]);
    const rows = await db.query('SELECT id, mac, ip, username, legal_hold FROM sessions WHERE tenant_id = $1 ORDER BY id', [tenant]);
    expect(rows.rows).toEqual([
      { id: `sess_${tenant}_a`, mac: 'expired', ip: null, username: null, legal_hold: null },
      { id: `sess_${tenant}_held`, mac: 'expired', ip: null, username: null, legal_hold: null },
      { id: `sess_${tenant}_held_new`, mac: '02:AA:00:00:00:01', ip: '10.0.0.9', username: '+905320000001', legal_hold: 'lgh_held0000000000' },
      { id: `sess_${tenant}_released`, mac: 'erased-0123456789ab', ip: null, username: null, legal_hold: null },
    ]);
  });

  test('a release that fails part-way is rolled back: the connection is usable and the hold still holds', async ({ pool, db }) => {
    const tenant = `tn_prv_${randomBytes(5).toString('hex')}`;
    const hold = `lgh_${randomBytes(6).toString('hex')}`;
    // The hold and the session are due on the real clock too: another file's retention run would release the hold
    // between these steps. Its lock is held throughout.
    await underRetentionLock(inject('databaseUrl'), async () => {
      await db.query(`INSERT INTO tenants (id, name) VALUES ($1, 'rollback') ON CONFLICT DO NOTHING`, [tenant]);
      await db.query(
        `INSERT INTO legal_holds (tenant_id, id, request_id, subject_kind, subject_ref, reason, held, created_at, held_until)
         VALUES ($1, $2, 'dsr_x', 'phone', 'sref_x', 'law_5651_access_log', '{}', '1999-01-01', '2000-01-01')`, [tenant, hold]);
      await db.query(
        `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, ip, username, auth_method, started_at, ends_at, status, legal_hold)
         VALUES ($1, $2, 'hs_x', '02:AA:00:00:00:02', '10.0.0.9', '+905320000002', 'sms_otp', '1999-06-01', '1999-06-01', 'ended', $3)`,
        [`sess_${tenant}`, tenant, hold]);
      const c = await pool.connect();
      try {
        // The hold's own row update fails in Postgres (division by zero) after the sessions were rewritten in the same transaction.
        const failing = new Proxy(c, {
          get: (target, prop, recv) => (prop === 'query'
            ? (sql: string, params?: unknown[]) => (String(sql).startsWith('UPDATE legal_holds') ? target.query('SELECT 1 / 0') : target.query(sql, params))
            : Reflect.get(target, prop, recv)),
        }) as PoolClient;
        await expect(releaseHolds(failing, createLogger('silent'), Date.parse('2000-01-02T00:00:00Z'))).rejects.toThrow(/division by zero/);
        expect((await c.query<{ ok: number }>('SELECT 1 AS ok')).rows).toEqual([{ ok: 1 }]);
      } finally { c.release(); }
      expect((await db.query('SELECT mac, legal_hold FROM sessions WHERE tenant_id = $1', [tenant])).rows).toEqual([{ mac: '02:AA:00:00:00:02', legal_hold: hold }]);
      expect((await db.query('SELECT released_at FROM legal_holds WHERE tenant_id = $1', [tenant])).rows).toEqual([{ released_at: null }]);
    });
  });
});
