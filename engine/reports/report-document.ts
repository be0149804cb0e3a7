import type { Pool } from '../store/postgres.js';
import { addDays } from '../util/local-day.js';
import { DEVICE_TYPES, type DeviceType } from './device-type.js';
import { estimateSketch, HLL_REGISTERS, mergeSketch } from './hll.js';
import { hourFigures, minutes, REPORT_METHODS, type ReportMethod } from './hour-figures.js';
import type { ReportRange } from './report-range.js';
import { monthSplit } from './report-service.js';

/** One local day of the period (zeros included). */
export interface ReportDay {
  date: string;
  sessions: number;
  /** Over the sessions of that day that have ended; 0 with none. */
  avgDurationMinutes: number;
  bytesIn: number;
  bytesOut: number;
}

/** The figures a PDF report is drawn from: plain numbers, so they cross to the drawing thread as they are. */
export interface ReportFigures {
  sessions: number;
  /** Distinct devices over the venues and days (a HyperLogLog union, as the analytics count them). */
  uniqueDevices: number;
  avgDurationMinutes: number;
  /** The local hour with the most starts (the earliest of a tie), 0..23; null with no session. */
  peakHour: number | null;
  bytesIn: number;
  bytesOut: number;
  daily: ReportDay[];
  /** Starts per local hour, 24 entries. */
  hours: number[];
  /** Always all six methods (REPORT_METHODS), and all five device types (DEVICE_TYPES). */
  methods: { method: ReportMethod; sessions: number }[];
  devices: { type: DeviceType; sessions: number }[];
  /** The period of equal length just before, for the notes' comparison. */
  previous: { from: string; to: string; sessions: number };
}

/**
 * The figures of a PDF report for venues `hotspotIds` (already checked to be
 * the tenant's; every query carries the tenant id as well) over `range`,
 * from the rollups only (report_hours, report_devices and their month
 * sketches), never the raw sessions. Each venue counts its own local days,
 * as the analytics do (docs/reports.md). One grouped read of the day rows
 * gives the days, hours, methods, device types and totals; a year at one
 * venue is at most 366 x 24 x methods x types rows, summed by Postgres.
 */
export async function reportFigures(pool: Pool, tenantId: string, hotspotIds: string[], range: ReportRange): Promise<ReportFigures> {
  const who = 'tenant_id = $1 AND hotspot_id = ANY($2::text[])';
  const prevTo = addDays(range.from, -1);
  const prevFrom = addDays(range.from, -range.days);
  // Unique devices: whole months from the month sketches, the edge days from the day sketches (as the analytics).
  const split = monthSplit(range.from, range.to);
  const [grouped, sketches, previous] = await Promise.all([
    hourFigures(pool, tenantId, hotspotIds, range.from, range.to),
    pool.query<{ sketch: Buffer }>(
      `SELECT sketch FROM report_device_months WHERE ${who} AND month = ANY($3::date[])
       UNION ALL SELECT sketch FROM report_devices WHERE ${who} AND (day BETWEEN $4::date AND $5::date OR day BETWEEN $6::date AND $7::date)`,
      [tenantId, hotspotIds, split.months, split.edges[0][0], split.edges[0][1], split.edges[1][0], split.edges[1][1]]),
    pool.query<{ sessions: string | null }>(
      `SELECT sum(sessions)::text AS sessions FROM report_hours WHERE ${who} AND day BETWEEN $3::date AND $4::date`,
      [tenantId, hotspotIds, prevFrom, prevTo]),
  ]);
  const days = new Map<string, ReportDay>();
  for (let d = range.from; d <= range.to; d = addDays(d, 1)) days.set(d, { date: d, sessions: 0, avgDurationMinutes: 0, bytesIn: 0, bytesOut: 0 });
  const t = grouped.total;
  const out: ReportFigures = {
    sessions: t.sessions, uniqueDevices: 0, avgDurationMinutes: minutes(t.durationS, t.ended), peakHour: grouped.peakHour,
    bytesIn: t.bytesIn, bytesOut: t.bytesOut, daily: [], hours: grouped.hours,
    methods: REPORT_METHODS.map((method) => ({ method, sessions: grouped.methods.get(method) ?? 0 })),
    devices: DEVICE_TYPES.map((type) => ({ type, sessions: grouped.deviceTypes.get(type) ?? 0 })),
    previous: { from: prevFrom, to: prevTo, sessions: Number(previous.rows[0]?.sessions ?? 0) },
  };
  for (const [date, x] of grouped.days) {
    const day = days.get(date);
    if (day) Object.assign(day, { sessions: x.sessions, avgDurationMinutes: minutes(x.durationS, x.ended), bytesIn: x.bytesIn, bytesOut: x.bytesOut });
  }
  out.daily = [...days.values()];
  if (sketches.rows.length > 0) {
    const union = new Uint8Array(HLL_REGISTERS);
    for (const r of sketches.rows) mergeSketch(union, r.sketch);
    // Every device started a session: an estimate a hair above the sessions (the sketch's error) says more than there were.
    out.uniqueDevices = Math.min(out.sessions, estimateSketch(union));
  }
  return out;
}
