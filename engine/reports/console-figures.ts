import type { Pool } from '../store/postgres.js';
import { addDays } from '../util/local-day.js';
import { DEVICE_TYPES, type DeviceType } from './device-type.js';
import { estimateSketch, HLL_REGISTERS, mergeSketch } from './hll.js';
import { hourFigures, minutes, REPORT_METHODS } from './hour-figures.js';
import type { ReportPreset } from './report-presets.js';
import type { ReportRange } from './report-range.js';

export interface ConsoleMethod { method: string; sessions: number; attempts: number; succeeded: number; failed: number; success_rate: number | null }
export interface ConsoleWeek { week_start: string; visitors: number; returning_rate: number; avg_dwell_minutes: number }

/** The console's report (contract: /work/brief21/contract.md; docs/reports.md "Console reports"). */
export interface ConsoleReport {
  period: { from: string; to: string; preset: ReportPreset; time_zone: string; days: number };
  hotspots: { id: string; name: string }[];
  summary: {
    total_sessions: number; unique_devices: number; signins_succeeded: number; signins_failed: number;
    bytes_in: number; bytes_out: number; avg_duration_minutes: number; peak_hour: string | null;
  };
  daily: { date: string; sessions: number; unique_devices: number; signins_failed: number; bytes_in: number; bytes_out: number }[];
  hours: { hour: number; sessions: number }[];
  ssids: { ssid: string; sessions: number }[];
  top_devices: { mac: string; sessions: number; last_seen: string }[];
  methods: ConsoleMethod[];
  guests: {
    visitors: number; returning_visitors: number; returning_rate: number; avg_dwell_minutes: number;
    device_types: { ios: number; android: number; windows: number; macos: number; other: number };
    weeks: ConsoleWeek[];
  };
}

/** A venue of a report: its id, name and zone (report_zone: an unknown one reads as UTC). */
export interface Venue { id: string; name: string; zone: string }

type Figures = Omit<ConsoleReport, 'period' | 'hotspots'>;

/** A fraction 0..1 to four places, null with nothing to divide by. */
const rate = (n: number, of: number): number | null => (of > 0 ? Math.round((n / of) * 10_000) / 10_000 : null);

/** The Monday (YYYY-MM-DD) of the week a date falls in. */
function mondayOf(day: string): string {
  const dow = new Date(`${day}T00:00:00Z`).getUTCDay(); // 0 Sunday
  return addDays(day, -((dow + 6) % 7));
}

/**
 * The figures of a console report over venues `ids` (the tenant's, checked)
 * and local days `range` (each venue its own zone's days, as the public
 * analytics count them). Everything but top_devices reads rollups:
 * report_hours and report_devices (migration 023), report_ssids,
 * report_signins, report_visits and report_visitors (025); top_devices reads
 * the sessions of the period (docs/reports.md says what each costs).
 */
export async function consoleFigures(pool: Pool, tenantId: string, ids: string[], range: ReportRange): Promise<Figures> {
  const p = [tenantId, ids, range.from, range.to];
  const scope = 'tenant_id = $1 AND hotspot_id = ANY($2) AND day BETWEEN $3::date AND $4::date';
  const [hours, sketches, ssids, signins, top, guests] = await Promise.all([
    hourFigures(pool, tenantId, ids, range.from, range.to),
    pool.query<{ day: string; sketch: Buffer }>(`SELECT day::text AS day, sketch FROM report_devices WHERE ${scope}`, p),
    pool.query<{ ssid: string; sessions: string }>(
      `SELECT ssid, sum(sessions)::text AS sessions FROM report_ssids WHERE ${scope} GROUP BY ssid ORDER BY sum(sessions) DESC, ssid`, p),
    pool.query<{ day: string | null; method: string | null; outcome: string; n: string }>(
      `SELECT CASE WHEN GROUPING(day) = 0 THEN day::text END AS day, CASE WHEN GROUPING(method) = 0 THEN method END AS method, outcome, sum(attempts)::text AS n
       FROM report_signins WHERE ${scope} GROUP BY GROUPING SETS ((day, outcome), (method, outcome))`, p),
    // The one read of raw sessions: the period's starts at these venues (sessions_tenant_started bounds the
    // scan to the period's instants), counted per MAC. Rows under a legal hold or past retention are no one's.
    pool.query<{ mac: string; n: number; last: Date }>(
      `WITH b AS MATERIALIZED (
         SELECT id, $3::date::timestamp AT TIME ZONE report_zone(timezone) AS lo, ($4::date + 1)::timestamp AT TIME ZONE report_zone(timezone) AS hi
         FROM hotspots WHERE tenant_id = $1 AND id = ANY($2))
       SELECT s.mac, count(*)::int AS n, max(s.started_at) AS last
       FROM sessions s JOIN b ON b.id = s.hotspot_id AND s.started_at >= b.lo AND s.started_at < b.hi
       WHERE s.tenant_id = $1 AND s.started_at >= (SELECT min(lo) FROM b) AND s.started_at < (SELECT max(hi) FROM b)
         AND s.legal_hold IS NULL AND s.mac <> 'expired' AND s.mac NOT LIKE 'erased-%'
       GROUP BY s.mac ORDER BY n DESC, last DESC, s.mac LIMIT 10`, p),
    // Visitors of the period, and of each (cut) week, with the first day each was seen at these venues.
    pool.query<{ wk: string | null; visitors: number; returning: number }>(
      `WITH v AS MATERIALIZED (SELECT DISTINCT visitor, greatest(date_trunc('week', day)::date, $3::date) AS wk FROM report_visits WHERE ${scope}),
       f AS MATERIALIZED (SELECT visitor, min(first_day) AS first_day FROM report_visitors
                          WHERE tenant_id = $1 AND hotspot_id = ANY($2) AND visitor IN (SELECT visitor FROM v) GROUP BY visitor)
       SELECT NULL::text AS wk, count(*)::int AS visitors, count(*) FILTER (WHERE f.first_day < $3::date)::int AS returning
       FROM (SELECT DISTINCT visitor FROM v) x JOIN f USING (visitor)
       UNION ALL
       SELECT v.wk::text, count(*)::int, count(*) FILTER (WHERE f.first_day < v.wk)::int FROM v JOIN f USING (visitor) GROUP BY v.wk`, p),
  ]);

  const days: string[] = [];
  for (let d = range.from; d <= range.to; d = addDays(d, 1)) days.push(d);
  const daily = new Map(days.map((date) => [date, { date, sessions: 0, unique_devices: 0, signins_failed: 0, bytes_in: 0, bytes_out: 0, ended: 0, duration_s: 0 }]));
  const out: Figures = {
    summary: { total_sessions: 0, unique_devices: 0, signins_succeeded: 0, signins_failed: 0, bytes_in: 0, bytes_out: 0, avg_duration_minutes: 0, peak_hour: null },
    daily: [], hours: Array.from({ length: 24 }, (_, hour) => ({ hour, sessions: 0 })), ssids: [], top_devices: [], methods: [],
    guests: { visitors: 0, returning_visitors: 0, returning_rate: 0, avg_dwell_minutes: 0, device_types: { ios: 0, android: 0, windows: 0, macos: 0, other: 0 }, weeks: [] },
  };
  const t = hours.total;
  Object.assign(out.summary, { total_sessions: t.sessions, bytes_in: t.bytesIn, bytes_out: t.bytesOut, avg_duration_minutes: minutes(t.durationS, t.ended) });
  out.guests.avg_dwell_minutes = out.summary.avg_duration_minutes;
  for (const [day, x] of hours.days) {
    const d = daily.get(day);
    if (d) Object.assign(d, { sessions: x.sessions, bytes_in: x.bytesIn, bytes_out: x.bytesOut, ended: x.ended, duration_s: x.durationS });
  }
  hours.hours.forEach((n, h) => { out.hours[h]!.sessions = n; });
  // A type stored before the list grew (or mistyped) counts as other.
  for (const [type, n] of hours.deviceTypes) {
    out.guests.device_types[(DEVICE_TYPES as readonly string[]).includes(type) ? type as DeviceType : 'other'] += n;
  }
  // The local hour with the most starts; the earliest of a tie (as the public analytics).
  if (hours.peakHour !== null) out.summary.peak_hour = `${String(hours.peakHour).padStart(2, '0')}:00`;

  // Unique devices: each day's sketches merged for the day, all of them for the period (a device seen on
  // two days or at two venues counts once). Every device started a session: an estimate a hair above the
  // sessions (the sketch's error) would say more devices than sessions, so it is capped (as in the PDF).
  const all = new Uint8Array(HLL_REGISTERS);
  const perDay = new Map<string, Uint8Array>();
  for (const r of sketches.rows) {
    mergeSketch(all, r.sketch);
    let u = perDay.get(r.day);
    if (!u) perDay.set(r.day, u = new Uint8Array(HLL_REGISTERS));
    mergeSketch(u, r.sketch);
  }
  if (sketches.rows.length > 0) out.summary.unique_devices = Math.min(out.summary.total_sessions, estimateSketch(all));
  for (const [day, u] of perDay) { const d = daily.get(day); if (d) d.unique_devices = Math.min(d.sessions, estimateSketch(u)); }

  out.ssids = ssids.rows.map((r) => ({ ssid: r.ssid, sessions: Number(r.sessions) }));

  const tries = new Map<string, { accept: number; reject: number }>();
  for (const r of signins.rows) {
    const n = Number(r.n);
    if (r.day !== null) {
      if (r.outcome === 'reject') {
        out.summary.signins_failed += n;
        const d = daily.get(r.day);
        if (d) d.signins_failed += n;
      } else out.summary.signins_succeeded += n;
    } else if (r.method !== null) {
      const t = tries.get(r.method) ?? { accept: 0, reject: 0 };
      if (r.outcome === 'reject') t.reject += n; else t.accept += n;
      tries.set(r.method, t);
    }
  }
  out.methods = REPORT_METHODS.map((method): ConsoleMethod => {
    const t = tries.get(method) ?? { accept: 0, reject: 0 };
    const attempts = t.accept + t.reject;
    return { method, sessions: hours.methods.get(method) ?? 0, attempts, succeeded: t.accept, failed: t.reject, success_rate: rate(t.accept, attempts) };
  });

  out.top_devices = top.rows.map((r) => ({ mac: `${r.mac.slice(0, 11)}:**:**`, sessions: r.n, last_seen: r.last.toISOString().replace(/\.\d{3}Z$/, 'Z') }));

  const weekly = new Map(guests.rows.filter((r) => r.wk !== null).map((r) => [r.wk!, r]));
  const total = guests.rows.find((r) => r.wk === null);
  out.guests.visitors = total?.visitors ?? 0;
  out.guests.returning_visitors = total?.returning ?? 0;
  out.guests.returning_rate = rate(out.guests.returning_visitors, out.guests.visitors) ?? 0;
  // Monday-started weeks overlapping the period, the edge weeks cut to it (week_start the period's first day).
  for (let wk = range.from; wk <= range.to; wk = addDays(mondayOf(wk), 7)) {
    const end = addDays(mondayOf(wk), 6) < range.to ? addDays(mondayOf(wk), 6) : range.to;
    let ended = 0;
    let dur = 0;
    for (let d = wk; d <= end; d = addDays(d, 1)) { const x = daily.get(d)!; ended += x.ended; dur += x.duration_s; }
    const g = weekly.get(wk);
    out.guests.weeks.push({ week_start: wk, visitors: g?.visitors ?? 0, returning_rate: rate(g?.returning ?? 0, g?.visitors ?? 0) ?? 0, avg_dwell_minutes: minutes(dur, ended) } satisfies ConsoleWeek);
  }
  out.daily = [...daily.values()].map(({ ended: _e, duration_s: _d, ...d }) => d);
  return out;
}
