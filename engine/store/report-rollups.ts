import type { PoolClient } from './postgres.js';

/**
 * The reports' rollups (migration 023, docs/reports.md), kept by the outbox
 * sink in the transaction that stores the session rows: a start counts when
 * its row is inserted, an end when its row is ended, so a record delivered
 * twice (a crash between commit and acknowledgement) counts once, like the
 * rows themselves. `rebuildRollups` computes the same figures from the raw
 * rows (`cli reports rebuild`).
 *
 * Every figure goes to the hotspot's local day and hour of the session's
 * START, in the hotspot's zone at that instant (report_zone: a zone Postgres
 * does not know counts as UTC rather than failing the batch).
 */

/** SQL: a stored device type as the reports count it. */
const DEVICE = (v: string): string => `CASE WHEN ${v} IN ('ios', 'android', 'windows', 'macos') THEN ${v} ELSE 'other' END`;

/**
 * SQL: a CTE `zones` (id, zone) of the hotspots `ids` (a SELECT) names, each
 * zone checked once (report_zone), not once per row: its exception block is
 * a subtransaction, which per row cost the rebuild and the export most of
 * their time. MATERIALIZED keeps Postgres from folding the call back into
 * the rows.
 */
export const ZONES = (ids: string): string =>
  `zones AS MATERIALIZED (SELECT id, report_zone(timezone) AS zone FROM hotspots WHERE id IN (${ids}))`;

const HOUR_KEY = 'tenant_id, hotspot_id, day, hour, auth_method, device_type';

/** A start whose session row this transaction inserted. */
export interface RolledStart {
  t: string;
  hs: string;
  mac: string;
  /** Start, ms (text, as records carry it). */
  at: string;
  m: string;
  dt: string;
  /** The SSID ('' none) and the user name (a verified identity for some methods): for report-guests.ts. */
  ssid?: string;
  u?: string;
}

/**
 * Tells report_devices' trigger (migration 030) that this transaction keeps
 * the month sketches itself, so it does not merge each written day sketch
 * into its month's (4,096 registers in PL/pgSQL per row: 2 ms warm, 13 ms on
 * a new connection). Until the transaction ends.
 */
async function keepDeviceMonthsHere(c: Pick<PoolClient, 'query'>): Promise<void> {
  await c.query("SELECT set_config('guestwifi.device_months_kept', 'on', true)");
}

/**
 * Counts started sessions into report_hours and their devices into the day's
 * and the month's sketches (report_devices, report_device_months), in one
 * statement: only the batch's own registers are raised. Only rows this
 * transaction inserted may be passed: the caller's INSERT says which.
 */
export async function rollStarts(c: Pick<PoolClient, 'query'>, starts: RolledStart[]): Promise<void> {
  if (starts.length === 0) return;
  await keepDeviceMonthsHere(c);
  await c.query(
    `WITH j AS MATERIALIZED (
       SELECT * FROM json_to_recordset($1::json) AS r(t text, hs text, mac text, at bigint, m text, dt text)
     ), ${ZONES('SELECT hs FROM j')}, r AS (
       SELECT r.t, r.hs, r.mac, coalesce(nullif(r.m, ''), 'voucher') AS m, ${DEVICE('r.dt')} AS dt,
              to_timestamp(r.at / 1000.0) AT TIME ZONE coalesce(z.zone, 'UTC') AS local
       FROM j r LEFT JOIN zones z ON z.id = r.hs
     ), hours AS (
       INSERT INTO report_hours (${HOUR_KEY}, sessions)
       SELECT t, hs, local::date, extract(hour FROM local)::smallint, m, dt, count(*) FROM r GROUP BY 1, 2, 3, 4, 5, 6
       ON CONFLICT (${HOUR_KEY}) DO UPDATE SET sessions = report_hours.sessions + EXCLUDED.sessions
       RETURNING 1
     ), d AS (
       SELECT t, hs, local::date AS day, array_agg(report_hll_reg(mac)) AS regs, array_agg(report_hll_rank(mac)) AS ranks
       FROM r GROUP BY 1, 2, 3
     ), dm AS (
       SELECT t, hs, date_trunc('month', day)::date AS month, array_agg(reg) AS regs, array_agg(rank) AS ranks
       FROM d, unnest(d.regs, d.ranks) AS u(reg, rank) GROUP BY 1, 2, 3
     ), months AS (
       INSERT INTO report_device_months AS m (tenant_id, hotspot_id, month, sketch)
       SELECT t, hs, month, report_hll_add(NULL, regs, ranks) FROM dm
       ON CONFLICT (tenant_id, hotspot_id, month) DO UPDATE SET sketch = report_hll_add(m.sketch,
         (SELECT regs FROM dm WHERE dm.t = EXCLUDED.tenant_id AND dm.hs = EXCLUDED.hotspot_id AND dm.month = EXCLUDED.month),
         (SELECT ranks FROM dm WHERE dm.t = EXCLUDED.tenant_id AND dm.hs = EXCLUDED.hotspot_id AND dm.month = EXCLUDED.month))
       RETURNING 1
     )
     INSERT INTO report_devices (tenant_id, hotspot_id, day, sketch)
     SELECT t, hs, day, report_hll_add(NULL, regs, ranks) FROM d
     ON CONFLICT (tenant_id, hotspot_id, day) DO UPDATE SET sketch = report_hll_add(report_devices.sketch,
       (SELECT regs FROM d WHERE d.t = EXCLUDED.tenant_id AND d.hs = EXCLUDED.hotspot_id AND d.day = EXCLUDED.day),
       (SELECT ranks FROM d WHERE d.t = EXCLUDED.tenant_id AND d.hs = EXCLUDED.hotspot_id AND d.day = EXCLUDED.day))`,
    [JSON.stringify(starts)]);
}

/**
 * The columns an UPDATE of sessions that ends rows must RETURN for
 * rollEndsOf; the rows it returns are the ones it ended (guarded by
 * `ended_at IS NULL`), so each end counts once.
 */
export const ENDED_RETURNING = 's.tenant_id, s.hotspot_id, s.started_at, s.ended_at, s.auth_method, s.device_type, s.bytes_in, s.bytes_out';

/**
 * SQL: a CTE (to follow `WITH ended AS (UPDATE ... RETURNING ENDED_RETURNING)`)
 * that adds the ended rows' counts, durations and bytes to their start hour.
 */
export function rollEndsOf(ended: string): string {
  return `${ZONES(`SELECT hotspot_id FROM ${ended}`)}, rolled AS (
    INSERT INTO report_hours (${HOUR_KEY}, ended, duration_s, bytes_in, bytes_out)
    SELECT x.tenant_id, x.hotspot_id, x.local::date, extract(hour FROM x.local)::smallint, x.auth_method, x.dt,
           count(*), sum(x.dur), sum(x.bytes_in), sum(x.bytes_out)
    FROM (SELECT e.tenant_id, e.hotspot_id, e.auth_method, ${DEVICE('e.device_type')} AS dt, e.bytes_in, e.bytes_out,
                 e.started_at AT TIME ZONE coalesce(z.zone, 'UTC') AS local,
                 greatest(0, round(extract(epoch FROM e.ended_at - e.started_at)))::bigint AS dur
          FROM ${ended} e LEFT JOIN zones z ON z.id = e.hotspot_id) x
    GROUP BY 1, 2, 3, 4, 5, 6
    ON CONFLICT (${HOUR_KEY}) DO UPDATE SET ended = report_hours.ended + EXCLUDED.ended,
      duration_s = report_hours.duration_s + EXCLUDED.duration_s,
      bytes_in = report_hours.bytes_in + EXCLUDED.bytes_in, bytes_out = report_hours.bytes_out + EXCLUDED.bytes_out
    RETURNING 1)`;
}

/**
 * Recomputes a tenant's rollups for local days `from`..`to` (YYYY-MM-DD,
 * both included; one hotspot or all) from the sessions rows, in the caller's
 * transaction. The report tables are locked first (EXCLUSIVE: reads go on,
 * the sink's rollup writes wait): a sink transaction that wrote rollups
 * before the lock has committed by the time the rows are read, one that
 * writes after adds to the rebuilt rows. Returns the sessions counted.
 */
export async function rebuildRollups(c: Pick<PoolClient, 'query'>, tenantId: string, from: string, to: string, hotspotId?: string): Promise<number> {
  await c.query('LOCK TABLE report_hours, report_devices, report_month_mix, report_month_hours, report_device_months IN EXCLUSIVE MODE');
  await keepDeviceMonthsHere(c); // the touched months are made again below
  const hs = hotspotId ?? null;
  const params = [tenantId, from, to, hs];
  const scope = `tenant_id = $1 AND day BETWEEN $2::date AND $3::date AND ($4::text IS NULL OR hotspot_id = $4)`;
  await c.query(`DELETE FROM report_hours WHERE ${scope}`, params);
  await c.query(`DELETE FROM report_devices WHERE ${scope}`, params);
  // A local day lies within a day and a half of the UTC day of the same date (zones span -12..+14 h).
  const rows = `SELECT s.*, s.started_at AT TIME ZONE coalesce(z.zone, 'UTC') AS local FROM sessions s LEFT JOIN zones z ON z.id = s.hotspot_id
    WHERE s.tenant_id = $1 AND ($4::text IS NULL OR s.hotspot_id = $4)
      AND s.started_at >= ($2::date - 1)::timestamp AT TIME ZONE 'UTC' AND s.started_at < ($3::date + 2)::timestamp AT TIME ZONE 'UTC'`;
  const r = await c.query<{ n: string }>(
    `WITH ${ZONES('SELECT id FROM hotspots WHERE tenant_id = $1')}, x AS (SELECT * FROM (${rows}) y WHERE local::date BETWEEN $2::date AND $3::date),
     hours AS (
       INSERT INTO report_hours (${HOUR_KEY}, sessions, ended, duration_s, bytes_in, bytes_out)
       SELECT tenant_id, hotspot_id, local::date, extract(hour FROM local)::smallint, auth_method, ${DEVICE('device_type')},
              count(*), count(*) FILTER (WHERE ended_at IS NOT NULL),
              coalesce(sum(greatest(0, round(extract(epoch FROM ended_at - started_at)))::bigint) FILTER (WHERE ended_at IS NOT NULL), 0)::bigint,
              coalesce(sum(bytes_in) FILTER (WHERE ended_at IS NOT NULL), 0), coalesce(sum(bytes_out) FILTER (WHERE ended_at IS NOT NULL), 0)
       FROM x GROUP BY 1, 2, 3, 4, 5, 6
       RETURNING sessions
     ), devices AS (
       INSERT INTO report_devices (tenant_id, hotspot_id, day, sketch)
       SELECT tenant_id, hotspot_id, local::date, report_hll_add(NULL, array_agg(report_hll_reg(mac)), array_agg(report_hll_rank(mac)))
       FROM x GROUP BY 1, 2, 3
       RETURNING 1
     )
     SELECT coalesce(sum(sessions), 0)::text AS n FROM hours`, params);
  // The day rows' triggers kept report_month_mix and report_month_hours; a month sketch only grows, so the touched months' are made again.
  const months = `tenant_id = $1 AND ($4::text IS NULL OR hotspot_id = $4)
    AND month BETWEEN date_trunc('month', $2::date)::date AND date_trunc('month', $3::date)::date`;
  await c.query(`DELETE FROM report_device_months WHERE ${months}`, params);
  await c.query(
    `INSERT INTO report_device_months (tenant_id, hotspot_id, month, sketch)
     SELECT tenant_id, hotspot_id, month, report_hll_union(sketch) FROM (
       SELECT tenant_id, hotspot_id, date_trunc('month', day)::date AS month, sketch FROM report_devices
       WHERE tenant_id = $1 AND ($4::text IS NULL OR hotspot_id = $4)
         AND day >= date_trunc('month', $2::date)::date AND day < (date_trunc('month', $3::date) + interval '1 month')::date) d
     GROUP BY 1, 2, 3`, params);
  return Number(r.rows[0]?.n ?? 0);
}
