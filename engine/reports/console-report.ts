import { Errors } from '../errors.js';
import type { Pool } from '../store/postgres.js';
import { consoleFigures, type ConsoleReport, type Venue } from './console-figures.js';

export { type ConsoleMethod, type ConsoleReport, type ConsoleWeek } from './console-figures.js';
import { presetRange } from './report-presets.js';
import { checkVenues, reportZone, TENANT_ZONE_SQL, venueIds } from './report-venues.js';

/** What the console asks (GET /api/v1/reports/console). */
export interface ConsoleReportQuery {
  preset?: string;
  from?: string;
  to?: string;
  /** As given: repeated or comma-separated ids. */
  hotspotIds: string[];
}

/**
 * The console's report: the venues checked (report-venues.ts; each the
 * tenant's), the preset
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
    checkVenues(ids, modules);
    const { rows } = await this.pool.query<Venue & { tenant_zone: string | null }>(
      `SELECT h.id, h.name, report_zone(h.timezone) AS zone, ${TENANT_ZONE_SQL} AS tenant_zone
       FROM hotspots h JOIN tenants t ON t.id = h.tenant_id WHERE h.tenant_id = $1 AND h.id = ANY($2)`, [tenantId, ids]);
    // Another tenant's hotspot reads as no hotspot at all.
    if (rows.length !== ids.length) throw Errors.HOTSPOT_NOT_FOUND();
    const venues = ids.map((id) => rows.find((r) => r.id === id)!);
    const zone = reportZone(venues.map((v) => v.zone), rows[0]!.tenant_zone);
    const range = presetRange(q.preset, zone, this.now(), q.from, q.to);
    const figures = await consoleFigures(this.pool, tenantId, venues.map((v) => v.id), range);
    return {
      period: { from: range.from, to: range.to, preset: range.preset, time_zone: zone, days: range.days },
      hotspots: venues.map((v) => ({ id: v.id, name: v.name })),
      ...figures,
    };
  }
}
