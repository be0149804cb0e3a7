import { retentionCutoff } from '../audit/retention-cutoff.js';
import type { Logger } from '../logger.js';
import type { PoolClient } from '../store/postgres.js';

/**
 * The first moment at which the retention job no longer keeps a record of UTC day `lastDay`:
 * retention keeps 730 days or two calendar years, whichever reaches further back
 * (engine/audit/retention.ts), so the hold ends on the first day whose cutoff is past `lastDay`.
 */
export function holdEnd(lastMs: number): Date {
  const lastDay = new Date(lastMs).toISOString().slice(0, 10);
  let t = Date.UTC(new Date(lastMs).getUTCFullYear(), new Date(lastMs).getUTCMonth(), new Date(lastMs).getUTCDate()) + 730 * 86_400_000;
  while (retentionCutoff(t) <= lastDay) t += 86_400_000;
  return new Date(t);
}

/** The pseudonym a held session row's MAC gets when its hold ends: one per hold, so a released guest still counts as one device. */
export const releasedMac = (holdId: string): string => `erased-${holdId.slice(4, 16)}`;

/**
 * Ends the holds whose time has come: their marked session rows (those retention has not already
 * expired) lose the MAC (one pseudonym per hold), the address and the user name; the audit chain's
 * records were in partitions the same run has just dropped (held_until is computed so). Each release
 * is logged in privacy_deletions. Runs inside the retention job, under its advisory lock; a failed
 * release is rolled back (the job or releaseDueHolds reports it, the next run tries again).
 */
export async function releaseHolds(c: PoolClient, log: Logger, nowMs: number): Promise<number> {
  const { rows } = await c.query<{ tenant_id: string; id: string }>(
    'SELECT tenant_id, id FROM legal_holds WHERE released_at IS NULL AND held_until <= $1 ORDER BY held_until LIMIT 1000', [new Date(nowMs)]);
  for (const h of rows) {
    await c.query('BEGIN');
    let released = 0;
    try {
      const r = await c.query(
        `UPDATE sessions SET mac = $3, ip = NULL, username = NULL, legal_hold = NULL WHERE tenant_id = $1 AND legal_hold = $2`,
        [h.tenant_id, h.id, releasedMac(h.id)]);
      await c.query('UPDATE legal_holds SET released_at = $3 WHERE tenant_id = $1 AND id = $2', [h.tenant_id, h.id, new Date(nowMs)]);
      await c.query(`INSERT INTO privacy_deletions (tenant_id, at, kind, category, rows, ref) VALUES ($1, $2, 'hold_released', 'sessions', $3, $4)`,
        [h.tenant_id, new Date(nowMs), r.rowCount ?? 0, h.id]);
      await c.query('COMMIT');
      released = r.rowCount ?? 0;
    } catch (err) {
      // The connection goes back to the pool (or on to the retention job's next step): never inside an aborted transaction.
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    log.info({ tenant: h.tenant_id, hold: h.id, sessions: released }, 'retention: legal hold released');
  }
  return rows.length;
}

/**
 * Session rows past retention (started before the cutoff) keep their counts and times but lose who:
 * the MAC becomes `expired`, the address and the user name go, and the row leaves its legal hold if
 * it had one: a hold only stops an erasure from removing records the law keeps, it never keeps a
 * record past its own end of retention. Rows a released hold already pseudonymised (`erased-...`)
 * keep that pseudonym. In batches, each logged per tenant in privacy_deletions.
 */
export async function expireSessions(c: PoolClient, log: Logger, nowMs: number): Promise<number> {
  const cutoff = retentionCutoff(nowMs);
  let total = 0;
  for (;;) {
    const { rows } = await c.query<{ tenant_id: string; n: number }>(
      `WITH batch AS (
         SELECT tenant_id, id FROM sessions WHERE started_at < $1::date AND mac <> 'expired' AND mac NOT LIKE 'erased-%' LIMIT 5000
       ), gone AS (
         UPDATE sessions s SET mac = 'expired', ip = NULL, username = NULL, legal_hold = NULL FROM batch b WHERE s.tenant_id = b.tenant_id AND s.id = b.id RETURNING s.tenant_id
       ) SELECT tenant_id, count(*)::int AS n FROM gone GROUP BY tenant_id`, [cutoff]);
    if (rows.length === 0) break;
    for (const r of rows) {
      await c.query(`INSERT INTO privacy_deletions (tenant_id, at, kind, category, rows, ref) VALUES ($1, $2, 'retention', 'sessions', $3, $4)`,
        [r.tenant_id, new Date(nowMs), r.n, `before ${cutoff}`]);
      total += r.n;
    }
  }
  if (total > 0) log.info({ rows: total, cutoff }, 'retention: session rows past retention pseudonymised');
  return total;
}

/**
 * The report's visitor keys (pseudonymous, migration 025) past retention:
 * a visit older than the cutoff is deleted, and a visitor whose every visit
 * is gone with it, so a guest back after two years counts as new and no key
 * outlives the access log it was drawn from. Logged per tenant.
 */
export async function expireVisitors(c: PoolClient, log: Logger, nowMs: number): Promise<number> {
  const cutoff = retentionCutoff(nowMs);
  const counts = new Map<string, number>();
  for (;;) {
    const { rows } = await c.query<{ tenant_id: string; n: number }>(
      `WITH batch AS (
         SELECT tenant_id, hotspot_id, day, visitor FROM report_visits WHERE day < $1::date LIMIT 5000
       ), gone AS (
         DELETE FROM report_visits v USING batch b
         WHERE v.tenant_id = b.tenant_id AND v.hotspot_id = b.hotspot_id AND v.day = b.day AND v.visitor = b.visitor RETURNING v.tenant_id
       ) SELECT tenant_id, count(*)::int AS n FROM gone GROUP BY tenant_id`, [cutoff]);
    if (rows.length === 0) break;
    for (const r of rows) counts.set(r.tenant_id, (counts.get(r.tenant_id) ?? 0) + r.n);
  }
  const { rows: visitors } = await c.query<{ tenant_id: string; n: number }>(
    `WITH gone AS (
       DELETE FROM report_visitors r WHERE r.first_day < $1::date AND NOT EXISTS (
         SELECT 1 FROM report_visits v WHERE v.tenant_id = r.tenant_id AND v.hotspot_id = r.hotspot_id AND v.visitor = r.visitor)
       RETURNING r.tenant_id
     ) SELECT tenant_id, count(*)::int AS n FROM gone GROUP BY tenant_id`, [cutoff]);
  for (const r of visitors) counts.set(r.tenant_id, (counts.get(r.tenant_id) ?? 0) + r.n);
  let total = 0;
  for (const [tenantId, n] of counts) {
    await c.query(`INSERT INTO privacy_deletions (tenant_id, at, kind, category, rows, ref) VALUES ($1, $2, 'retention', 'report_visitors', $3, $4)`,
      [tenantId, new Date(nowMs), n, `before ${cutoff}`]);
    total += n;
  }
  if (total > 0) log.info({ rows: total, cutoff }, 'retention: report visitor keys past retention deleted');
  return total;
}

/** The retention job's personal-data step (engine/audit/retention.ts runs it after the partitions, under its lock). */
export async function personalDataRetention(c: PoolClient, log: Logger, nowMs: number): Promise<void> {
  await expireSessions(c, log, nowMs);
  await expireVisitors(c, log, nowMs);
  await releaseHolds(c, log, nowMs);
}
