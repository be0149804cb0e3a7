import type { IncidentCounts } from './overview.js';
import { TenantCache } from '../util/tenant-cache.js';

/** What OpenIncidents reads: the site (or null) of every open incident of a tenant (IncidentService.openSiteIds). */
export interface OpenIncidentSource {
  openSiteIds(tenantId: string): Promise<(string | null)[]>;
}

/** How stale the open-incident figures may be (docs/dashboard-api.md, "Freshness"). */
export const OPEN_INCIDENTS_CACHE_MS = 2_000;

interface Open {
  count: number;
  sites: ReadonlySet<string>;
}

/**
 * The overview's `incidents_open` and the sites' health, from one Postgres
 * query per tenant and process every OPEN_INCIDENTS_CACHE_MS at most. Asked
 * on every dashboard request, the count was a query (and a pool checkout)
 * per request, the second largest cost after the Redis reads in a profile
 * of the overview; incidents change a few times an hour. An incident raised
 * or moved by any process shows everywhere within OPEN_INCIDENTS_CACHE_MS.
 */
export class OpenIncidents implements IncidentCounts {
  private readonly cache: TenantCache<Open>;

  constructor(source: OpenIncidentSource, now: () => number = Date.now) {
    this.cache = new TenantCache(OPEN_INCIDENTS_CACHE_MS, async (tenantId) => {
      const ids = await source.openSiteIds(tenantId);
      return { count: ids.length, sites: new Set(ids.filter((s): s is string => s !== null)) };
    }, now);
  }

  async openIncidents(tenantId: string): Promise<number> {
    return (await this.cache.get(tenantId)).count;
  }

  async openIncidentSites(tenantId: string): Promise<ReadonlySet<string>> {
    return (await this.cache.get(tenantId)).sites;
  }
}
