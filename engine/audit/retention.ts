import type { Logger } from '../logger.js';
import type { Pool, PoolClient } from '../store/postgres.js';
import { partitionName } from './chain-writer.js';
import { retentionCutoff } from './retention-cutoff.js';

export { RETENTION_DAYS, retentionCutoff } from './retention-cutoff.js';

/** The advisory lock one retention run at a time holds (Postgres-wide: every engine process runs the job). */
export const RETENTION_LOCK_ID = 7265012;

/**
 * Drops whole daily partitions of audit_records older than the cutoff, one
 * transaction each, logging every partition it destroyed (and its row count)
 * in audit_retention_log, and per tenant in privacy_deletions; then runs `after`
 * under the same lock (the engine's: engine/privacy/legal-holds.ts, personalDataRetention). An advisory lock lets one process run it at a time.
 */
export async function runRetention(
  pool: Pool, log: Logger, nowMs = Date.now(), after?: (c: PoolClient, nowMs: number) => Promise<void>,
): Promise<{ dropped: string[]; cutoff: string }> {
  const cutoff = retentionCutoff(nowMs);
  const dropped: string[] = [];
  const c = await pool.connect();
  try {
    const got = (await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [RETENTION_LOCK_ID])).rows[0]?.ok;
    if (!got) return { dropped, cutoff };
    try {
      const { rows } = await c.query<{ name: string }>(
        `SELECT child.relname AS name FROM pg_inherits i
         JOIN pg_class child ON child.oid = i.inhrelid JOIN pg_class parent ON parent.oid = i.inhparent
         WHERE parent.relname = 'audit_records' ORDER BY child.relname`);
      for (const { name } of rows) {
        const m = /^audit_records_(\d{4})(\d{2})(\d{2})$/.exec(name);
        if (!m) continue;
        const day = `${m[1]}-${m[2]}-${m[3]}`;
        if (day >= cutoff || partitionName(day) !== name) continue;
        await c.query('BEGIN');
        const n = (await c.query<{ n: number }>(`SELECT count(*)::bigint AS n FROM ${name}`)).rows[0]?.n ?? 0;
        // Remember how far each tenant's chain is gone, so verifiers accept a missing link there and nowhere else.
        await c.query(
          `INSERT INTO audit_retention_tenants (tenant_id, dropped_through_seq)
           SELECT tenant_id, max(seq) FROM ${name} GROUP BY tenant_id
           ON CONFLICT (tenant_id) DO UPDATE
             SET dropped_through_seq = greatest(audit_retention_tenants.dropped_through_seq, excluded.dropped_through_seq), updated_at = now()`);
        // The personal-data log (docs/privacy.md): what each tenant lost with the partition.
        await c.query(
          `INSERT INTO privacy_deletions (tenant_id, at, kind, category, rows, ref)
           SELECT tenant_id, $1, 'retention', 'audit_records', count(*), $2 FROM ${name} GROUP BY tenant_id`, [new Date(nowMs), name]);
        await c.query(`DROP TABLE ${name}`);
        await c.query('INSERT INTO audit_retention_log (partition, day, rows, cutoff) VALUES ($1, $2, $3, $4)', [name, day, n, cutoff]);
        await c.query('COMMIT');
        dropped.push(name);
        log.info({ partition: name, rows: n, cutoff }, 'retention: dropped audit partition');
      }
      // After the partitions: the session rows past retention lose who, and the holds due end (engine/privacy/legal-holds.ts).
      await after?.(c, nowMs);
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_ID]).catch(() => undefined);
    }
  } finally {
    c.release();
  }
  return { dropped, cutoff };
}
