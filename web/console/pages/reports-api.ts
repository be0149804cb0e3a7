import { download, request } from '../../shared/index.js';

/**
 * The console reports API (GET /api/v1/reports/console, docs/reports.md) and
 * the two exports the reports page offers. Kept beside the page rather than in
 * web/shared/public-api.ts: only this page reads it.
 */

export const PRESETS = ['today', 'yesterday', 'last_7_days', 'last_30_days', 'last_90_days', 'this_month', 'last_month', 'this_year', 'custom'] as const;
export type Preset = (typeof PRESETS)[number];
export const METHODS = ['sms_otp', 'msgapp_otp', 'email', 'voucher', 'sponsor', 'pms'] as const;
export const DEVICE_TYPES = ['ios', 'android', 'windows', 'macos', 'other'] as const;
/** The API's limit of venues in one report. */
export const MAX_VENUES = 10;

export interface ConsoleReport {
  period: { from: string; to: string; preset: Preset; time_zone: string; days: number };
  hotspots: { id: string; name: string }[];
  summary: {
    total_sessions: number; unique_devices: number; signins_succeeded: number; signins_failed: number;
    bytes_in: number; bytes_out: number; avg_duration_minutes: number; peak_hour: string | null;
  };
  daily: { date: string; sessions: number; unique_devices: number; signins_failed: number; bytes_in: number; bytes_out: number }[];
  hours: { hour: number; sessions: number }[];
  ssids: { ssid: string; sessions: number }[];
  top_devices: { mac: string; sessions: number; last_seen: string }[];
  methods: { method: string; sessions: number; attempts: number; succeeded: number; failed: number; success_rate: number | null }[];
  guests: {
    visitors: number; returning_visitors: number; returning_rate: number; avg_dwell_minutes: number;
    device_types: Record<(typeof DEVICE_TYPES)[number], number>;
    weeks: { week_start: string; visitors: number; returning_rate: number; avg_dwell_minutes: number }[];
  };
}

/** What a report is asked for: a preset (custom with its two days) over one or more venues. */
export interface ReportQuery {
  preset: Preset;
  from: string;
  to: string;
  hotspots: string[];
}

/** The query string of a report (the exports take from/to, which the answer's period resolves). */
const venues = (ids: string[]): string => ids.join(',');

export const reportsApi = {
  console: (q: ReportQuery, signal?: AbortSignal) =>
    request<ConsoleReport>('/api/v1/reports/console', {
      query: { preset: q.preset, from: q.preset === 'custom' ? q.from : undefined, to: q.preset === 'custom' ? q.to : undefined, hotspot_id: venues(q.hotspots) },
      signal,
    }),
  /** The session CSV of the period (streamed by the service). */
  csv: (from: string, to: string, hotspots: string[]) => download('/api/v1/reports/sessions', { format: 'csv', from, to, hotspot_id: venues(hotspots) }),
  /** The PDF report of the period in the operator's language. */
  pdf: (from: string, to: string, hotspots: string[], lang: string) => download('/api/v1/reports/pdf', { from, to, hotspot_id: venues(hotspots), lang }),
};
