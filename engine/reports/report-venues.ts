import { Errors } from '../errors.js';

/** Hotspots one report covers at most ("Venues per aggregated report: 10"). */
export const REPORT_MAX_VENUES = 10;
/** The module a report over more than one hotspot needs (the Pro and Enterprise packages include it). */
export const MULTI_VENUE_MODULE = 'multi_venue';

/** The ids a query names: repeated parameters and comma-separated lists, trimmed, each once, in the order given. */
export function venueIds(given: readonly string[]): string[] {
  const out: string[] = [];
  for (const g of given) for (const id of g.split(',')) {
    const v = id.trim();
    if (v !== '' && !out.includes(v)) out.push(v);
  }
  return out;
}

/** At most REPORT_MAX_VENUES (else 400 report_too_many_venues), and more than one only with MULTI_VENUE_MODULE (else 403). */
export function checkVenues(ids: readonly string[], modules: readonly string[]): void {
  if (ids.length > REPORT_MAX_VENUES) throw Errors.REPORT_TOO_MANY_VENUES(ids.length, REPORT_MAX_VENUES);
  if (ids.length > 1 && !modules.includes(MULTI_VENUE_MODULE)) throw Errors.MODULE_NOT_LICENSED(MULTI_VENUE_MODULE);
}

/**
 * The tenant's own zone (settings.timezone) through report_zone(), or NULL when it sets none;
 * in a query over `tenants t`.
 */
export const TENANT_ZONE_SQL = "CASE WHEN coalesce(t.settings->>'timezone', '') = '' THEN NULL ELSE report_zone(t.settings->>'timezone') END";

/**
 * The zone a report's presets and cover are in: one venue's own; for several, the tenant's when it
 * sets one, else the first venue in the order given (zones read through report_zone(), so a name
 * Postgres does not know reads as UTC). The console and the PDF alike.
 */
export function reportZone(venueZones: readonly string[], tenantZone: string | null): string {
  return (venueZones.length === 1 ? venueZones[0] : tenantZone ?? venueZones[0]) ?? 'UTC';
}
