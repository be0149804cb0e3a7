import type { PoolClient } from './postgres.js';
import { ZONES, type RolledStart } from './report-rollups.js';

/**
 * The console's rollups of migration 025 that the outbox sink keeps with the
 * session rows (docs/reports.md, "Console reports"): starts per SSID
 * (report_ssids) and visitors (report_visits, report_visitors). Like
 * report-rollups.ts, only starts whose rows this transaction inserted are
 * passed, so a record delivered twice counts once; every figure goes to the
 * local day of the start in the hotspot's zone.
 *
 * A visitor is the verified identity of the sign-in (the session's user name
 * for sms_otp, msgapp_otp, email, sponsor, pms: a phone, e-mail or room),
 * else the MAC, stored only as report_visitor_key: SHA-256 of the tenant's
 * random salt and the value. No phone, e-mail or MAC is kept in these tables;
 * the erasure deletes a subject's keys (eraseVisitorKeys).
 */

/**
 * SQL: the visitor key of a row with method `m`, user name `u` and MAC `mac`, its tenant's salt in
 * `salt` (report_visitor_salt, once per tenant in a CTE, not per row).
 */
const VISITOR = (salt: string, m: string, u: string, mac: string): string =>
  `report_visitor_hash(${salt}, report_visitor_kind(${m}, ${u}), CASE WHEN report_visitor_kind(${m}, ${u}) = 'id' THEN ${u} ELSE ${mac} END)`;

/**
 * The visits and first days of rows `r` (t, hs, day, visitor), as CTE text to follow others. A returning
 * visitor's first day is written only when it moves earlier (a rebuild): an unchanged row is not rewritten.
 */
const VISITS = `v AS (
    INSERT INTO report_visits (tenant_id, hotspot_id, day, visitor) SELECT DISTINCT t, hs, day, visitor FROM r WHERE visitor IS NOT NULL
    ON CONFLICT DO NOTHING RETURNING 1)
  INSERT INTO report_visitors (tenant_id, hotspot_id, visitor, first_day) SELECT t, hs, visitor, min(day) FROM r WHERE visitor IS NOT NULL GROUP BY 1, 2, 3
  ON CONFLICT (tenant_id, visitor, hotspot_id) DO UPDATE SET first_day = EXCLUDED.first_day WHERE EXCLUDED.first_day < report_visitors.first_day`;

/** Counts inserted starts into report_ssids and the visitor tables. */
export async function rollGuests(c: Pick<PoolClient, 'query'>, starts: RolledStart[]): Promise<void> {
  if (starts.length === 0) return;
  await c.query(
    `WITH j AS MATERIALIZED (
       SELECT * FROM json_to_recordset($1::json) AS r(t text, hs text, mac text, at bigint, m text, ssid text, u text)
     ), ${ZONES('SELECT hs FROM j')}, salts AS MATERIALIZED (
       SELECT t, report_visitor_salt(t) AS salt FROM (SELECT DISTINCT t FROM j) x
     ), r AS MATERIALIZED (
       SELECT j.t, j.hs, coalesce(j.ssid, '') AS ssid, (to_timestamp(j.at / 1000.0) AT TIME ZONE coalesce(z.zone, 'UTC'))::date AS day,
              ${VISITOR('k.salt', "coalesce(nullif(j.m, ''), 'voucher')", 'j.u', 'j.mac')} AS visitor
       FROM j LEFT JOIN zones z ON z.id = j.hs JOIN salts k ON k.t = j.t
     ), s AS (
       INSERT INTO report_ssids (tenant_id, hotspot_id, day, ssid, sessions) SELECT t, hs, day, ssid, count(*) FROM r GROUP BY 1, 2, 3, 4
       ON CONFLICT (tenant_id, hotspot_id, day, ssid) DO UPDATE SET sessions = report_ssids.sessions + EXCLUDED.sessions
       RETURNING 1
     ), ${VISITS}`,
    [JSON.stringify(starts)]);
}

/**
 * Recomputes report_ssids and the visits of local days from..to (one hotspot
 * or all) from the sessions rows, in the rebuild's transaction (after
 * rebuildRollups). First days only move earlier. Rows under a legal hold or
 * past retention (their MAC `expired` or `erased-...`) make no visitor: an
 * erased subject's key must not come back.
 */
export async function rebuildGuestRollups(c: Pick<PoolClient, 'query'>, tenantId: string, from: string, to: string, hotspotId?: string): Promise<void> {
  await c.query('LOCK TABLE report_ssids, report_visits, report_visitors IN EXCLUSIVE MODE');
  const params = [tenantId, from, to, hotspotId ?? null];
  const scope = 'tenant_id = $1 AND day BETWEEN $2::date AND $3::date AND ($4::text IS NULL OR hotspot_id = $4)';
  await c.query(`DELETE FROM report_ssids WHERE ${scope}`, params);
  await c.query(`DELETE FROM report_visits WHERE ${scope}`, params);
  await c.query(
    `WITH ${ZONES('SELECT id FROM hotspots WHERE tenant_id = $1')}, k AS MATERIALIZED (SELECT report_visitor_salt($1) AS salt), x AS (
       SELECT s.*, (s.started_at AT TIME ZONE coalesce(z.zone, 'UTC'))::date AS local FROM sessions s LEFT JOIN zones z ON z.id = s.hotspot_id
       WHERE s.tenant_id = $1 AND ($4::text IS NULL OR s.hotspot_id = $4)
         AND s.started_at >= ($2::date - 1)::timestamp AT TIME ZONE 'UTC' AND s.started_at < ($3::date + 2)::timestamp AT TIME ZONE 'UTC'
     ), r AS MATERIALIZED (
       SELECT tenant_id AS t, hotspot_id AS hs, local AS day, coalesce(ssid, '') AS ssid,
              CASE WHEN legal_hold IS NULL AND mac <> 'expired' AND mac NOT LIKE 'erased-%' THEN ${VISITOR('(SELECT salt FROM k)', 'auth_method', 'username', 'mac')} END AS visitor
       FROM x WHERE local BETWEEN $2::date AND $3::date
     ), s AS (
       INSERT INTO report_ssids (tenant_id, hotspot_id, day, ssid, sessions) SELECT t, hs, day, ssid, count(*) FROM r GROUP BY 1, 2, 3, 4 RETURNING 1
     ), ${VISITS}`, params);
}

/**
 * Deletes the visitor keys of a data subject (the erasure, engine/privacy/erasure.ts): the keys of
 * its identities (`users`: phones, e-mail addresses) and of its devices (`macs`). Returns the rows deleted.
 */
export async function eraseVisitorKeys(c: Pick<PoolClient, 'query'>, tenantId: string, macs: string[], users: string[]): Promise<number> {
  const keys = `SELECT report_visitor_key($1, 'mac', unnest($2::text[])) UNION ALL SELECT report_visitor_key($1, 'id', unnest($3::text[]))`;
  const r = await c.query<{ n: number }>(
    `WITH k AS MATERIALIZED (SELECT k FROM (${keys}) x(k) WHERE k IS NOT NULL),
     a AS (DELETE FROM report_visits WHERE tenant_id = $1 AND visitor IN (SELECT k FROM k) RETURNING 1),
     b AS (DELETE FROM report_visitors WHERE tenant_id = $1 AND visitor IN (SELECT k FROM k) RETURNING 1)
     SELECT ((SELECT count(*) FROM a) + (SELECT count(*) FROM b))::int AS n`, [tenantId, macs, users]);
  return r.rows[0]?.n ?? 0;
}
