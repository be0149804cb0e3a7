import { Errors } from '../errors.js';
import type { Pool } from '../store/postgres.js';
import { consoleFigures, type Venue } from './console-figures.js';
import { presetRange, type ReportPreset } from './report-presets.js';

/** Hotspots one console report covers at most (10 venues, as the contract says). */
export const REPORT_MAX_VENUES = 10;
/** The module a report over more than one hotspot needs (the Pro and Enterprise packages include it). */
export const MULTI_VENUE_MODULE = 'multi_venue';
/** The sign-in methods the console's method table always lists, in this order. */
export const CONSOLE_METHODS = ['sms_otp', 'msgapp_otp', 'email', 'voucher', 'sponsor', 'pms'] as const;

/** What the console asks (GET /api/v1/reports/console). */
export interface ConsoleReportQuery {
  preset?: string;
  from?: string;
  to?: string;
  /** As given: repeated or comma-separated ids. */
  hotspotIds: string[];
}

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

/** The ids a query names: repeated parameters and comma-separated lists, trimmed, each once, in the order given. */
export function venueIds(given: string[]): string[] {
  const out: string[] = [];
  for (const g of given) for (const id of g.split(',')) {
    const v = id.trim();
    if (v !== '' && !out.includes(v)) out.push(v);
  }
  return out;
}

/**
 * The console's report: the venues checked (at most REPORT_MAX_VENUES, more
 * than one only with MULTI_VENUE_MODULE, each the tenant's), the preset
 * resolved in the venue's zone (the tenant's for several, else the first
 * venue's), then the figures from the rollups (console-figures.ts).
 */
export class ConsoleReportService {
  constructor(private readonly pool: Pool, private readonly now: () => number = Date.now) {}

  async report(tenantId: string, modules: readonly string[], q: ConsoleReportQuery): Promise<ConsoleReport> {
    const ids = venueIds(q.hotspotIds);
    if (ids.length === 0) {
      throw Errors.VALIDATION_FAILED('hotspot_id names at least one hotspot', [{ field: 'hotspot_id', message: 'is required' }]);
    }
    if (ids.length > REPORT_MAX_VENUES) throw Errors.REPORT_TOO_MANY_VENUES(ids.length, REPORT_MAX_VENUES);
    if (ids.length > 1 && !modules.includes(MULTI_VENUE_MODULE)) throw Errors.MODULE_NOT_LICENSED(MULTI_VENUE_MODULE);
    const { rows } = await this.pool.query<Venue & { tenant_zone: string | null }>(
      `SELECT h.id, h.name, report_zone(h.timezone) AS zone, CASE WHEN coalesce(t.settings->>'timezone', '') = '' THEN NULL ELSE report_zone(t.settings->>'timezone') END AS tenant_zone
       FROM hotspots h JOIN tenants t ON t.id = h.tenant_id WHERE h.tenant_id = $1 AND h.id = ANY($2)`, [tenantId, ids]);
    // Another tenant's hotspot reads as no hotspot at all.
    if (rows.length !== ids.length) throw Errors.HOTSPOT_NOT_FOUND();
    const venues = ids.map((id) => rows.find((r) => r.id === id)!);
    const zone = venues.length === 1 ? venues[0]!.zone : rows[0]!.tenant_zone ?? venues[0]!.zone;
    const range = presetRange(q.preset, zone, this.now(), q.from, q.to);
    const figures = await consoleFigures(this.pool, tenantId, venues.map((v) => v.id), range);
    return {
      period: { from: range.from, to: range.to, preset: range.preset, time_zone: zone, days: range.days },
      hotspots: venues.map((v) => ({ id: v.id, name: v.name })),
      ...figures,
    };
  }
}
