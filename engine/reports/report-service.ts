import { to as copyTo } from 'pg-copy-streams';
import { retentionCutoff } from '../audit/retention-cutoff.js';
import { Errors } from '../errors.js';
import type { Pool, PoolClient } from '../store/postgres.js';
import { addDays } from '../util/local-day.js';
import { rebuildRollups } from '../store/report-rollups.js';
import { rebuildGuestRollups } from '../store/report-guests.js';
import { estimateSketch, HLL_REGISTERS, mergeSketch } from './hll.js';
import { reportRange, type ReportRange } from './report-range.js';
import { reportSelect, sessionRows, type SessionReportRow } from './session-rows.js';

/** The auth methods of the spec's analytics `auth_methods`, exactly these five keys (pms sign-ins count in total_sessions only). */
export const REPORT_AUTH_METHODS = ['sms_otp', 'msgapp_otp', 'sponsor', 'voucher', 'email'] as const;
/** The device types of the spec's analytics `device_types` (`other` counts in total_sessions only). */
export const REPORT_DEVICE_TYPES = ['ios', 'android', 'windows', 'macos'] as const;

/** GET /v1/reports/analytics, exactly the shape the spec gives it. */
export interface Analytics {
  period: { from: string; to: string };
  total_sessions: number;
  unique_devices: number;
  avg_duration_minutes: number;
  auth_methods: Record<(typeof REPORT_AUTH_METHODS)[number], number>;
  device_types: Record<(typeof REPORT_DEVICE_TYPES)[number], number>;
  /** The local hour with the most session starts, HH:00 (the earliest of a tie); null with no session. */
  peak_hour: string | null;
}

/** What a report asks: the tenant, the range as given, and one hotspot or all of the tenant's. */
export interface ReportQuery {
  from?: string;
  to?: string;
  hotspotId?: string;
}

/**
 * A range cut into the whole calendar months inside it (their first days)
 * and the days left at its two edges, each as an inclusive [from, to] (an
 * empty edge is a reversed pair).
 */
export function monthSplit(from: string, to: string): { months: string[]; edges: [[string, string], [string, string]] } {
  const firstOf = (d: string): string => `${d.slice(0, 7)}-01`;
  const nextMonth = (m: string): string => {
    const y = Number(m.slice(0, 4));
    const mo = Number(m.slice(5, 7));
    return mo === 12 ? `${y + 1}-01-01` : `${y}-${String(mo + 1).padStart(2, '0')}-01`;
  };
  const months: string[] = [];
  // The first month that starts on or after `from`; whole while its last day is on or before `to`.
  let m = firstOf(from) === from ? from : nextMonth(firstOf(from));
  while (addDays(nextMonth(m), -1) <= to) {
    months.push(m);
    m = nextMonth(m);
  }
  const none: [string, string] = ['2000-01-02', '2000-01-01'];
  if (months.length === 0) return { months, edges: [[from, to], none] };
  const head: [string, string] = from < months[0]! ? [from, addDays(months[0]!, -1)] : none;
  const tail: [string, string] = m <= to ? [m, to] : none;
  return { months, edges: [head, tail] };
}

/** Days a rebuild recomputes per transaction. */
const REBUILD_CHUNK_DAYS = 31;

/**
 * Session report downloads at once in this process. Each holds a Postgres
 * connection of the main pool for as long as its client reads (a cursor's
 * transaction, or a COPY), so slow readers must not take the pool from
 * every tenant's sign-ins: beyond this, 503 service_unavailable.
 */
export const MAX_CONCURRENT_REPORTS = 4;

interface Grouped {
  auth_method: string | null;
  device_type: string | null;
  hour: number | null;
  g: number;
  sessions: string;
  sessions_h: string;
  ended: string;
  duration_s: string;
}

/**
 * The session report and analytics (docs/reports.md). Analytics read the
 * rollups only (report_hours, report_devices): two indexed reads whose size
 * grows with the days asked, never with the sessions in them. The session
 * report streams raw rows (sessions), CSV by COPY straight from Postgres.
 *
 * A day is the hotspot's own calendar day, in its zone; without hotspot_id
 * every hotspot of the tenant counts its own days (the same dates at every
 * venue). A session counts on the day and hour it started.
 */
export class ReportService {
  /** Session report downloads running now (MAX_CONCURRENT_REPORTS). */
  private running = 0;

  /** `reads`: where the reports read (DATABASE_REPLICA_URL's replica, else the primary); rebuilds write to `pool`. */
  constructor(private readonly pool: Pool, private readonly now: () => number = Date.now, private readonly reads: Pool = pool) {}

  /**
   * A download's chunks, holding one of MAX_CONCURRENT_REPORTS places from its
   * first `next()` (which throws service_unavailable when none is free, before
   * any byte, so the answer is a 503) to its end or its client's leaving.
   */
  private async *limited(download: () => AsyncGenerator<Buffer>): AsyncGenerator<Buffer> {
    if (this.running >= MAX_CONCURRENT_REPORTS) throw Errors.SERVICE_UNAVAILABLE(`The session report (at most ${MAX_CONCURRENT_REPORTS} downloads at once)`);
    this.running++;
    try {
      yield* download();
    } finally {
      this.running--;
    }
  }

  /** The spec's analytics, over the rollups. */
  async analytics(tenantId: string, q: ReportQuery): Promise<Analytics> {
    const range = reportRange(q.from, q.to);
    const hs = await this.hotspotOf(tenantId, q.hotspotId);
    // Whole months from the month rollups, the days at the edges from the day rollups: a year reads
    // twelve months and a day, not 366 days.
    const split = monthSplit(range.from, range.to);
    const params = [tenantId, hs, split.months, split.edges[0][0], split.edges[0][1], split.edges[1][0], split.edges[1][1]];
    const who = 'tenant_id = $1 AND ($2::text IS NULL OR hotspot_id = $2)';
    const days = `(day BETWEEN $4::date AND $5::date OR day BETWEEN $6::date AND $7::date)`;
    const [grouped, sketches] = await Promise.all([
      // Month rows carry either the mix (methods x device types) or the hours; `sessions_h` counts
      // starts for the hour grouping only, so neither is counted twice.
      this.reads.query<Grouped>(
        `SELECT auth_method, device_type, hour, GROUPING(auth_method, device_type, hour) AS g,
                sum(sessions)::text AS sessions, sum(sessions_h)::text AS sessions_h, sum(ended)::text AS ended, sum(duration_s)::text AS duration_s
         FROM (SELECT auth_method, device_type, NULL::smallint AS hour, sessions, 0 AS sessions_h, ended, duration_s
                 FROM report_month_mix WHERE ${who} AND month = ANY($3::date[])
               UNION ALL
               SELECT NULL, NULL, hour, 0, sessions, 0, 0 FROM report_month_hours WHERE ${who} AND month = ANY($3::date[])
               UNION ALL
               SELECT auth_method, device_type, hour, sessions, sessions, ended, duration_s FROM report_hours WHERE ${who} AND ${days}) x
         GROUP BY GROUPING SETS ((auth_method), (device_type), (hour), ())`, params),
      this.reads.query<{ sketch: Buffer }>(
        `SELECT sketch FROM report_device_months WHERE ${who} AND month = ANY($3::date[])
         UNION ALL SELECT sketch FROM report_devices WHERE ${who} AND ${days}`, params),
    ]);
    const out: Analytics = {
      period: { from: range.from, to: range.to },
      total_sessions: 0, unique_devices: 0, avg_duration_minutes: 0,
      auth_methods: { sms_otp: 0, msgapp_otp: 0, sponsor: 0, voucher: 0, email: 0 },
      device_types: { ios: 0, android: 0, windows: 0, macos: 0 },
      peak_hour: null,
    };
    let peak = -1;
    let peakCount = 0;
    for (const r of grouped.rows) {
      const n = Number(r.sessions);
      if (r.g === 7) {
        out.total_sessions = n;
        const ended = Number(r.ended);
        // Over the sessions that have ended: a live one has no duration yet.
        out.avg_duration_minutes = ended > 0 ? Math.round(Number(r.duration_s) / ended / 60) : 0;
      } else if (r.auth_method !== null && r.auth_method in out.auth_methods) {
        out.auth_methods[r.auth_method as keyof Analytics['auth_methods']] = n;
      } else if (r.device_type !== null && r.device_type in out.device_types) {
        out.device_types[r.device_type as keyof Analytics['device_types']] = n;
      } else if (r.g === 6 && r.hour !== null) {
        const h = Number(r.sessions_h);
        if (h > 0 && (h > peakCount || (h === peakCount && r.hour < peak))) {
          peak = r.hour;
          peakCount = h;
        }
      }
    }
    if (peak >= 0) out.peak_hour = `${String(peak).padStart(2, '0')}:00`;
    if (sketches.rows.length > 0) {
      const union = new Uint8Array(HLL_REGISTERS);
      for (const r of sketches.rows) mergeSketch(union, r.sketch);
      out.unique_devices = estimateSketch(union);
    }
    return out;
  }

  /**
   * The session report as one JSON document, streamed: `{period, data:
   * [...], totals}`, the totals counted while the rows go out, so memory stays
   * one page whatever the range holds. Checks run before the first byte.
   */
  async sessionsJson(tenantId: string, q: ReportQuery): Promise<AsyncIterable<Buffer>> {
    const range = reportRange(q.from, q.to);
    const hs = await this.hotspotOf(tenantId, q.hotspotId);
    return this.limited(() => jsonReport(this.reads, tenantId, range, hs));
  }

  /**
   * The session report as CSV with a header row, streamed by Postgres itself
   * (COPY ... TO STDOUT: no row is parsed or formatted here). Checks run
   * before the first byte. Leaving the loop early (the client went away)
   * ends the COPY and drops its connection rather than returning it mid-copy.
   */
  async sessionsCsv(tenantId: string, q: ReportQuery): Promise<{ range: ReportRange; stream: AsyncIterable<Buffer> }> {
    const range = reportRange(q.from, q.to);
    const hs = await this.hotspotOf(tenantId, q.hotspotId);
    return { range, stream: this.limited(() => csvReport(this.reads, tenantId, range, hs)) };
  }

  /**
   * Recomputes a tenant's rollups from the raw rows (`cli reports rebuild`)
   * for local days from..to (default: every day the tenant has sessions
   * after the retention cutoff: see below);
   * returns the sessions counted. A month at a time, each in a transaction
   * of its own: the report tables are locked while one runs (the sink's
   * rollup writes wait), so the wait stays a month's worth, not a year's.
   */
  async rebuild(tenantId: string, from?: string, to?: string, hotspotId?: string): Promise<number> {
    let f = from;
    let t = to;
    if (f === undefined || t === undefined) {
      // By default never a day that holds rows past retention: their MACs are `expired`, so a rebuilt device
      // sketch would count one device for the whole day, overwriting the count kept while the MACs were there.
      // The first local day with no such row, in any zone (-12..+14 h), is the day after the UTC cutoff.
      const safe = addDays(retentionCutoff(this.now()), 1);
      const { rows } = await this.pool.query<{ first: string | null; last: string | null }>(
        `SELECT greatest((min(started_at) AT TIME ZONE 'UTC')::date - 1, $2::date)::text AS first, ((max(started_at) AT TIME ZONE 'UTC')::date + 1)::text AS last
         FROM sessions WHERE tenant_id = $1 AND started_at >= $2::date - 1`, [tenantId, safe]);
      if (!rows[0]?.first) return 0;
      f ??= String(rows[0].first);
      t ??= String(rows[0].last);
    }
    // An operator's tool: no 366-day limit, only real dates in order.
    const first = reportRange(f, f).from;
    const last = reportRange(t, t).to;
    if (last < first) throw Errors.REPORT_RANGE_REVERSED(first, last);
    let n = 0;
    for (let day = first; day <= last;) {
      const end = addDays(day, REBUILD_CHUNK_DAYS - 1) < last ? addDays(day, REBUILD_CHUNK_DAYS - 1) : last;
      n += await this.rebuildChunk(tenantId, day, end, hotspotId);
      day = addDays(end, 1);
    }
    return n;
  }

  private async rebuildChunk(tenantId: string, from: string, to: string, hotspotId?: string): Promise<number> {
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      const n = await rebuildRollups(c, tenantId, from, to, hotspotId);
      await rebuildGuestRollups(c, tenantId, from, to, hotspotId);
      await c.query('COMMIT');
      return n;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      c.release();
    }
  }

  /** The hotspot named, checked to be the tenant's (another tenant's is answered as unknown); null for all. */
  private async hotspotOf(tenantId: string, hotspotId: string | undefined): Promise<string | null> {
    if (hotspotId === undefined || hotspotId === '') return null;
    const { rowCount } = await this.reads.query('SELECT 1 FROM hotspots WHERE id = $1 AND tenant_id = $2', [hotspotId, tenantId]);
    if (!rowCount) throw Errors.HOTSPOT_NOT_FOUND();
    return hotspotId;
  }
}

async function* jsonReport(pool: Pool, tenantId: string, range: ReportRange, hs: string | null): AsyncGenerator<Buffer> {
  const totals = { sessions: 0, ended: 0, duration_minutes: 0, bytes_in: 0, bytes_out: 0 };
  const pages = sessionRows(pool, tenantId, range, hs);
  // The first page before the first byte: a database that cannot answer is a 503, not a cut-off 200.
  let next = await pages.next();
  try {
    yield Buffer.from(`{"period":${JSON.stringify({ from: range.from, to: range.to })},"data":[`);
    let first = true;
    for (; !next.done; next = await pages.next()) {
      let text = '';
      for (const r of next.value) {
        totals.sessions += 1;
        if (r.ended_at !== null) {
          totals.ended += 1;
          totals.duration_minutes += r.duration_minutes ?? 0;
        }
        totals.bytes_in += r.bytes_in;
        totals.bytes_out += r.bytes_out;
        text += (first ? '' : ',') + JSON.stringify(r satisfies SessionReportRow);
        first = false;
      }
      yield Buffer.from(text);
    }
    yield Buffer.from(`],"totals":${JSON.stringify(totals)}}`);
  } finally {
    // A client that left mid-report: the cursor's transaction ends and its connection goes back.
    await pages.return(undefined);
  }
}

async function* csvReport(pool: Pool, tenantId: string, range: ReportRange, hs: string | null): AsyncGenerator<Buffer> {
  const c: PoolClient = await pool.connect();
  let done = false;
  const lit = (v: string): string => c.escapeLiteral(v);
  const select = hs === null ? reportSelect(lit(tenantId), lit(range.from), lit(range.to), 'NULL', false, true)
    : reportSelect(lit(tenantId), lit(range.from), lit(range.to), lit(hs), true, true);
  const stream = c.query(copyTo(`COPY (${select}) TO STDOUT WITH (FORMAT csv, HEADER)`));
  try {
    for await (const chunk of stream) yield chunk as Buffer;
    done = true;
  } finally {
    if (done) c.release();
    else {
      stream.destroy();
      // Mid-COPY: the connection is in no state to serve anyone else.
      c.release(new Error('session report left before the end of its COPY'));
    }
  }
}
