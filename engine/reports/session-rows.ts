import type { Pool } from '../store/postgres.js';
import { ZONES } from '../store/report-rollups.js';
import type { ReportRange } from './report-range.js';

/** One row of the session report (JSON and CSV alike, in this order). No identity (name, phone, e-mail) and no address: those are the 5651 export's. */
export interface SessionReportRow {
  session_id: string;
  hotspot_id: string;
  ssid: string | null;
  mac: string;
  auth_method: string;
  device_type: string;
  started_at: string;
  ended_at: string | null;
  duration_minutes: number | null;
  bytes_in: number;
  bytes_out: number;
  end_reason: string | null;
}

/** Rows a cursor fetch brings: memory per report stays about this many rows. */
const PAGE_ROWS = 2_000;

/** Text a spreadsheet would run as a formula gets a leading ' (as csvCell does; engine/util/csv-cell.ts); a signed number stays. CSV only: JSON is no spreadsheet. */
// The first character by a plain comparison, the regular expression only for the rare cell that opens with one of them.
const SAFE = (col: string): string =>
  `CASE WHEN left(${col}, 1) IN ('=', '+', '-', '@', E'\\t', E'\\r') AND ${col} !~ '^[+-][0-9]+([.][0-9]+)?$' THEN '''' || ${col} ELSE ${col} END`;
const UTC_ISO = (col: string): string => `to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The session report's SELECT, its columns those of SessionReportRow (`csv`:
 * cells a spreadsheet would run as formulas are prefixed): the
 * sessions whose START falls on a local day from..to of their hotspot. The
 * four arguments are SQL expressions: parameters ($1..) for a cursor,
 * literals for COPY (which takes no parameters).
 *
 * One hotspot: its local midnights as two instants, computed once, bound an
 * index scan of sessions_tenant_started exactly (no per-row conversion; a
 * third of the export's time went to it). All hotspots: a UTC window a day
 * and a half wider on each side (zones span -12..+14 h) bounds the scan, and
 * each row's local day is checked in its hotspot's zone.
 */
export function reportSelect(tenant: string, from: string, to: string, hs: string, oneHotspot: boolean, csv: boolean): string {
  // A row under a legal hold is a subject's who asked for erasure: kept for the law, not shown (the MAC reads `erased`).
  const columns = `'ses_' || substr(s.id, 6) AS session_id, s.hotspot_id, ${csv ? SAFE('s.ssid') : 's.ssid'} AS ssid,
      CASE WHEN s.legal_hold IS NULL THEN s.mac ELSE 'erased' END AS mac, s.auth_method,
      coalesce(s.device_type, 'other') AS device_type, ${UTC_ISO('s.started_at')} AS started_at, ${UTC_ISO('s.ended_at')} AS ended_at,
      CASE WHEN s.ended_at IS NULL THEN NULL ELSE round(greatest(0, extract(epoch FROM s.ended_at - s.started_at)) / 60)::int END AS duration_minutes,
      s.bytes_in, s.bytes_out, s.end_reason`;
  if (oneHotspot) {
    return `WITH b AS MATERIALIZED (
        SELECT ${from}::date::timestamp AT TIME ZONE zone AS lo, (${to}::date + 1)::timestamp AT TIME ZONE zone AS hi
        FROM (SELECT report_zone(timezone) AS zone FROM hotspots WHERE id = ${hs} AND tenant_id = ${tenant}) h)
      SELECT ${columns}
      FROM sessions s
      WHERE s.tenant_id = ${tenant} AND s.hotspot_id = ${hs}
        AND s.started_at >= (SELECT lo FROM b) AND s.started_at < (SELECT hi FROM b)
      ORDER BY s.started_at, s.id`;
  }
  return `WITH ${ZONES(`SELECT id FROM hotspots WHERE tenant_id = ${tenant}`)}
    SELECT ${columns}
    FROM sessions s LEFT JOIN zones z ON z.id = s.hotspot_id
    WHERE s.tenant_id = ${tenant}
      AND s.started_at >= (${from}::date - 1)::timestamp AT TIME ZONE 'UTC' AND s.started_at < (${to}::date + 2)::timestamp AT TIME ZONE 'UTC'
      AND (s.started_at AT TIME ZONE coalesce(z.zone, 'UTC'))::date BETWEEN ${from}::date AND ${to}::date
    ORDER BY s.started_at, s.id`;
}

/**
 * The report's rows in pages, from a server-side cursor in a read-only
 * transaction; leaving the loop early (the client went away) closes it
 * through `finally`.
 */
export async function* sessionRows(pool: Pool, tenantId: string, range: ReportRange, hs: string | null): AsyncGenerator<SessionReportRow[]> {
  const c = await pool.connect();
  let open = false;
  try {
    await c.query('BEGIN READ ONLY');
    open = true;
    const sql = hs === null ? reportSelect('$1', '$2', '$3', 'NULL', false, false) : reportSelect('$1', '$2', '$3', '$4', true, false);
    await c.query(`DECLARE session_report NO SCROLL CURSOR FOR ${sql}`, hs === null ? [tenantId, range.from, range.to] : [tenantId, range.from, range.to, hs]);
    for (;;) {
      const { rows } = await c.query<Omit<SessionReportRow, 'bytes_in' | 'bytes_out'> & { bytes_in: string; bytes_out: string }>(
        `FETCH ${PAGE_ROWS} FROM session_report`);
      if (rows.length > 0) yield rows.map((r) => ({ ...r, bytes_in: Number(r.bytes_in), bytes_out: Number(r.bytes_out) }));
      if (rows.length < PAGE_ROWS) break;
    }
    await c.query('COMMIT');
    open = false;
  } finally {
    if (open) await c.query('ROLLBACK').catch(() => undefined);
    c.release();
  }
}
