import type { Pool } from 'pg';

/**
 * The stadium storm's proof: every session start and end the storm caused is
 * in Postgres exactly once, and the tenant's chain verifies. What the bench
 * knows (the MACs answered `authorized`, the MACs whose Stop was answered) is
 * the floor; a sign-in or a Stop whose answer was lost (the service killed
 * while it was in flight) may have landed too: those are counted, not errors,
 * but each still exactly once.
 */

export interface StormLedger {
  /** MACs (as the bench sent them) answered `authorized`. */
  authorized: Set<string>;
  /** MACs whose Accounting-Stop was answered. */
  stopped: Set<string>;
  /**
   * MACs whose code verify lost its answer (the service killed under it): that verify may have used the
   * code and started a session, and the guest's new code then started another, which replaced it.
   */
  verifyLost?: Set<string>;
}

export interface StormCheck {
  ok: boolean;
  problems: string[];
  sessions: number; starts: number; ends: number;
  /** Sessions in Postgres whose sign-in answer the bench never saw (in flight at the kill). */
  unanswered: number;
  /** Ends in Postgres whose Stop answer the bench never saw. */
  unansweredEnds: number;
  /** Sessions a lost verify started that the guest's next sign-in replaced (ledger.verifyLost). */
  replacedAfterLostVerify: number;
  chainValid: boolean;
}

const canon = (mac: string): string => mac.toUpperCase().replace(/-/g, ':');

async function one(pool: Pool, sql: string, tenant: string): Promise<number> {
  return (await pool.query<{ n: number }>(sql, [tenant])).rows[0]!.n;
}

/** How many session starts of the tenant are in Postgres (the sink's progress). */
export function startsStored(pool: Pool, tenant: string): Promise<number> {
  return one(pool, "SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start'", tenant);
}

/** How many session ends of the tenant are in Postgres. */
export function endsStored(pool: Pool, tenant: string): Promise<number> {
  return one(pool, "SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_end'", tenant);
}

/**
 * Ends and extensions of the tenant that wait for their start's row (session_ends_early,
 * session_extends_early: the start was with another consumer, a killed one's among them, when
 * they were stored); the sink applies them every few seconds (applyWaiting). Until then the
 * sessions row and its session_end record disagree, as they may for that long.
 */
export function endsWaiting(pool: Pool, tenant: string): Promise<number> {
  return one(pool, `SELECT ((SELECT count(*) FROM session_ends_early WHERE tenant_id = $1)
    + (SELECT count(*) FROM session_extends_early WHERE tenant_id = $1))::int AS n`, tenant);
}

/** Exactly once, both ways, for one tenant; `verify` checks its chain. */
export async function checkStorm(pool: Pool, tenant: string, ledger: StormLedger,
  verify: () => Promise<{ valid: boolean; first_break?: unknown }>): Promise<StormCheck> {
  const problems: string[] = [];
  const dup = (event: string): Promise<number> => one(pool,
    `SELECT count(*)::int AS n FROM (SELECT session_id FROM audit_records WHERE tenant_id = $1 AND event_type = '${event}'
       GROUP BY session_id HAVING count(*) > 1) AS d`, tenant);
  const starts = await startsStored(pool, tenant);
  const ends = await endsStored(pool, tenant);
  const dupStarts = await dup('session_start');
  const dupEnds = await dup('session_end');
  if (dupStarts) problems.push(`${dupStarts} sessions have more than one session_start record`);
  if (dupEnds) problems.push(`${dupEnds} sessions have more than one session_end record`);

  const rows = (await pool.query<{ id: string; mac: string; ended: boolean; start: boolean; end: boolean; reason: string | null; at: Date }>(
    `SELECT s.id, s.mac, s.ended_at IS NOT NULL AS ended, s.end_reason AS reason, s.started_at AS at,
       EXISTS (SELECT 1 FROM audit_records a WHERE a.tenant_id = s.tenant_id AND a.session_id = s.id AND a.event_type = 'session_start') AS start,
       EXISTS (SELECT 1 FROM audit_records a WHERE a.tenant_id = s.tenant_id AND a.session_id = s.id AND a.event_type = 'session_end') AS end
     FROM sessions s WHERE s.tenant_id = $1`, [tenant])).rows;
  const byMac = new Map<string, typeof rows>();
  for (const r of rows) byMac.set(canon(r.mac), [...(byMac.get(canon(r.mac)) ?? []), r]);
  // A guest signs in once; a voucher's repeat after a lost answer is "the same device again", its live session.
  // A code's is not (a used code is otp_expired): the new code's session replaces the one the lost verify started.
  const lost = new Set([...(ledger.verifyLost ?? [])].map(canon));
  const explained = (mac: string, sessions: typeof rows): boolean => lost.has(mac)
    && [...sessions].sort((x, y) => x.at.getTime() - y.at.getTime()).slice(0, -1).every((r) => r.reason === 'replaced');
  const twice = [...byMac].filter(([mac, sessions]) => sessions.length > 1 && !explained(mac, sessions)).length;
  const replacedAfterLostVerify = [...byMac].filter(([mac, sessions]) => sessions.length > 1 && explained(mac, sessions))
    .reduce((n, [, sessions]) => n + sessions.length - 1, 0);
  if (twice) problems.push(`${twice} devices have more than one session`);
  if (rows.length !== starts) problems.push(`${rows.length} session rows against ${starts} session_start records`);
  const noStart = rows.filter((r) => !r.start).length;
  if (noStart) problems.push(`${noStart} sessions without their session_start record`);
  const endedRows = rows.filter((r) => r.ended);
  if (endedRows.length !== ends) problems.push(`${endedRows.length} ended sessions against ${ends} session_end records`);
  const endMismatch = rows.filter((r) => r.ended !== r.end).length;
  if (endMismatch) problems.push(`${endMismatch} sessions whose end and session_end record disagree`);

  let missing = 0;
  for (const mac of ledger.authorized) if (!byMac.has(canon(mac))) missing++;
  if (missing) problems.push(`${missing} sign-ins answered authorized have no session in Postgres`);
  const endedMacs = new Set(endedRows.map((r) => canon(r.mac)));
  let missingEnds = 0;
  for (const mac of ledger.stopped) if (!endedMacs.has(canon(mac))) missingEnds++;
  if (missingEnds) problems.push(`${missingEnds} answered Accounting-Stops have no ended session in Postgres`);
  const known = new Set([...ledger.authorized].map(canon));
  const unanswered = [...byMac.keys()].filter((m) => !known.has(m)).length;
  const stoppedKnown = new Set([...ledger.stopped].map(canon));
  const unansweredEnds = [...endedMacs].filter((m) => !stoppedKnown.has(m)).length;

  const v = await verify();
  if (!v.valid) problems.push(`the chain does not verify: ${JSON.stringify(v.first_break)}`);
  return { ok: problems.length === 0, problems, sessions: rows.length, starts, ends, unanswered, unansweredEnds, replacedAfterLostVerify, chainValid: v.valid };
}
