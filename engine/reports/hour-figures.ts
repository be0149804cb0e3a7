import type { Pool } from '../store/postgres.js';

/** The sign-in methods a report's method table always lists, in this order (the console and the PDF alike). */
export const REPORT_METHODS = ['sms_otp', 'msgapp_otp', 'email', 'voucher', 'sponsor', 'pms'] as const;
export type ReportMethod = (typeof REPORT_METHODS)[number];

/** Sums of report_hours rows. */
export interface HourSums { sessions: number; ended: number; durationS: number; bytesIn: number; bytesOut: number }

/** The figures of one grouped read of report_hours: the period's total, each day, hour, method and device type. */
export interface HourFigures {
  total: HourSums;
  /** By local day (YYYY-MM-DD); days without a row are absent. */
  days: Map<string, HourSums>;
  /** Starts per local hour, 24 entries. */
  hours: number[];
  /** The local hour with the most starts (the earliest of a tie), 0..23; null with no session. */
  peakHour: number | null;
  /** Sessions per auth_method and per device_type as stored (rows without one left out). */
  methods: Map<string, number>;
  deviceTypes: Map<string, number>;
}

interface Grouped {
  day: string | null; hour: number | null; auth_method: string | null; device_type: string | null; g: number;
  sessions: string; ended: string; duration_s: string; bytes_in: string; bytes_out: string;
}

// GROUPING(day, hour, auth_method, device_type): the bit of every column left out is set.
const BY_DAY = 0b0111;
const BY_HOUR = 0b1011;
const BY_METHOD = 0b1101;
const BY_TYPE = 0b1110;
const TOTAL = 0b1111;

/** Average minutes of `ended` sessions lasting `durationS` seconds in all; 0 with none. */
export const minutes = (durationS: number, ended: number): number => (ended > 0 ? Math.round(durationS / ended / 60) : 0);

/**
 * One grouped read of report_hours (migration 023) for venues `ids` (the
 * tenant's, checked; the tenant id is in the query as well) over local days
 * `from`..`to`: each venue counts its own zone's days, as the analytics do. A
 * year at one venue is at most 366 x 24 x methods x types rows, summed by
 * Postgres. The console's figures and the PDF's read it alike.
 */
export async function hourFigures(pool: Pool, tenantId: string, ids: string[], from: string, to: string): Promise<HourFigures> {
  const { rows } = await pool.query<Grouped>(
    `SELECT day::text AS day, hour, auth_method, device_type, GROUPING(day, hour, auth_method, device_type) AS g,
            sum(sessions)::text AS sessions, sum(ended)::text AS ended, sum(duration_s)::text AS duration_s,
            sum(bytes_in)::text AS bytes_in, sum(bytes_out)::text AS bytes_out
     FROM report_hours WHERE tenant_id = $1 AND hotspot_id = ANY($2::text[]) AND day BETWEEN $3::date AND $4::date
     GROUP BY GROUPING SETS ((day), (hour), (auth_method), (device_type), ())`, [tenantId, ids, from, to]);
  const out: HourFigures = {
    total: { sessions: 0, ended: 0, durationS: 0, bytesIn: 0, bytesOut: 0 },
    days: new Map(), hours: new Array<number>(24).fill(0), peakHour: null, methods: new Map(), deviceTypes: new Map(),
  };
  for (const r of rows) {
    const sums: HourSums = {
      sessions: Number(r.sessions), ended: Number(r.ended), durationS: Number(r.duration_s), bytesIn: Number(r.bytes_in), bytesOut: Number(r.bytes_out),
    };
    if (r.g === TOTAL) out.total = sums;
    else if (r.g === BY_DAY && r.day !== null) out.days.set(r.day, sums);
    else if (r.g === BY_HOUR && r.hour !== null && r.hour >= 0 && r.hour < 24) out.hours[r.hour] = sums.sessions;
    else if (r.g === BY_METHOD && r.auth_method !== null) out.methods.set(r.auth_method, sums.sessions);
    else if (r.g === BY_TYPE && r.device_type !== null) out.deviceTypes.set(r.device_type, sums.sessions);
  }
  let peak = 0;
  out.hours.forEach((n, h) => {
    if (n > peak) {
      peak = n;
      out.peakHour = h;
    }
  });
  return out;
}
