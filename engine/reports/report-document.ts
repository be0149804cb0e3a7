import type { Pool } from '../store/postgres.js';
import { addDays } from '../util/local-day.js';
import { estimateSketch, HLL_REGISTERS, mergeSketch } from './hll.js';
import type { ReportRange } from './report-range.js';
import { monthSplit } from './report-service.js';

/** The sign-in methods a PDF report lists, always all six (the console's order). */
export const DOCUMENT_METHODS = ['sms_otp', 'msgapp_otp', 'email', 'voucher', 'sponsor', 'pms'] as const;
export type DocumentMethod = (typeof DOCUMENT_METHODS)[number];
/** The device types a PDF report lists, always all five. */
export const DOCUMENT_DEVICE_TYPES = ['ios', 'android', 'windows', 'macos', 'other'] as const;
export type DocumentDeviceType = (typeof DOCUMENT_DEVICE_TYPES)[number];

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
  methods: { method: DocumentMethod; sessions: number }[];
  devices: { type: DocumentDeviceType; sessions: number }[];
  /** The period of equal length just before, for the notes' comparison. */
  previous: { from: string; to: string; sessions: number };
}

interface Grouped {
  day: string | null;
  hour: number | null;
  auth_method: string | null;
  device_type: string | null;
  g: number;
  sessions: string;
  ended: string;
  duration_s: string;
  bytes_in: string;
  bytes_out: string;
}

const minutes = (durationS: number, ended: number): number => (ended > 0 ? Math.round(durationS / ended / 60) : 0);

// GROUPING(day, hour, auth_method, device_type): the bit of every column left out is set.
const BY_DAY = 0b0111;
const BY_HOUR = 0b1011;
const BY_METHOD = 0b1101;
const BY_TYPE = 0b1110;
const TOTAL = 0b1111;

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
    pool.query<Grouped>(
      `SELECT day::text AS day, hour, auth_method, device_type, GROUPING(day, hour, auth_method, device_type) AS g,
              sum(sessions)::text AS sessions, sum(ended)::text AS ended, sum(duration_s)::text AS duration_s,
              sum(bytes_in)::text AS bytes_in, sum(bytes_out)::text AS bytes_out
       FROM report_hours WHERE ${who} AND day BETWEEN $3::date AND $4::date
       GROUP BY GROUPING SETS ((day), (hour), (auth_method), (device_type), ())`, [tenantId, hotspotIds, range.from, range.to]),
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
  const out: ReportFigures = {
    sessions: 0, uniqueDevices: 0, avgDurationMinutes: 0, peakHour: null, bytesIn: 0, bytesOut: 0,
    daily: [], hours: new Array<number>(24).fill(0),
    methods: DOCUMENT_METHODS.map((method) => ({ method, sessions: 0 })),
    devices: DOCUMENT_DEVICE_TYPES.map((type) => ({ type, sessions: 0 })),
    previous: { from: prevFrom, to: prevTo, sessions: Number(previous.rows[0]?.sessions ?? 0) },
  };
  for (const r of grouped.rows) {
    const n = Number(r.sessions);
    if (r.g === TOTAL) {
      out.sessions = n;
      out.avgDurationMinutes = minutes(Number(r.duration_s), Number(r.ended));
      out.bytesIn = Number(r.bytes_in);
      out.bytesOut = Number(r.bytes_out);
    } else if (r.g === BY_DAY && r.day !== null) {
      const day = days.get(r.day);
      if (day) Object.assign(day, { sessions: n, avgDurationMinutes: minutes(Number(r.duration_s), Number(r.ended)), bytesIn: Number(r.bytes_in), bytesOut: Number(r.bytes_out) });
    } else if (r.g === BY_HOUR && r.hour !== null && r.hour >= 0 && r.hour < 24) {
      out.hours[r.hour] = n;
    } else if (r.g === BY_METHOD) {
      const m = out.methods.find((x) => x.method === r.auth_method);
      if (m) m.sessions = n;
    } else if (r.g === BY_TYPE) {
      const t = out.devices.find((x) => x.type === r.device_type);
      if (t) t.sessions = n;
    }
  }
  out.daily = [...days.values()];
  let peak = 0;
  out.hours.forEach((n, h) => {
    if (n > peak) {
      peak = n;
      out.peakHour = h;
    }
  });
  if (sketches.rows.length > 0) {
    const union = new Uint8Array(HLL_REGISTERS);
    for (const r of sketches.rows) mergeSketch(union, r.sketch);
    // Every device started a session: an estimate a hair above the sessions (the sketch's error) says more than there were.
    out.uniqueDevices = Math.min(out.sessions, estimateSketch(union));
  }
  return out;
}
