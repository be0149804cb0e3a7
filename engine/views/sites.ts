import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { ACTIVITY, perSite } from '../redis/records.js';
import { activityWindow, bucketStart, readWindow } from './activity-reader.js';
import { liveCounts } from './live-panel.js';
import type { IncidentCounts } from './overview.js';
import { ReadBatch } from '../redis/read-batch.js';
import { readLiveCounts, readNasOnline, type SiteSource } from './site-directory.js';

export type SiteHealth = 'ok' | 'degraded' | 'down';

/** One entry of `GET sites` (docs/dashboard-api.md). */
export interface SiteSummary {
  id: string;
  name: string;
  location: string;
  timezone: string;
  active_sessions: number;
  nas_total: number;
  nas_online: number;
  health: SiteHealth;
}

/** One entry of `GET sites/metrics` (docs/dashboard-api.md). */
export interface SiteMetrics {
  site_id: string;
  name: string;
  active_sessions: number;
  /** Accepted and rejected sign-ins in the last complete minute. */
  signins_1m: number;
  failures_1m: number;
  /** The last hour, oldest first, the current minute last. */
  per_minute: { minute: string; signins: number; failures: number }[];
  bytes_in_1h: number;
  bytes_out_1h: number;
  busiest_aps: { ap: string; active: number }[];
}

export const BUSIEST_APS = 5;

/**
 * `down` when the site has NAS clients and none is online, `degraded` when
 * one of them is silent or the site has an open incident, else `ok`. A site
 * without NAS clients (a portal-only gateway) is judged by its incidents.
 */
export function siteHealth(nasTotal: number, nasOnline: number, openIncident: boolean): SiteHealth {
  if (nasTotal > 0 && nasOnline === 0) return 'down';
  return nasOnline < nasTotal || openIncident ? 'degraded' : 'ok';
}

/**
 * The tenant's sites: their health (`sites`) and their activity
 * (`sites/metrics`), read per hotspot from the perSite fields of the same
 * buckets the tenant-wide tiles read, in one read script call (ReadBatch).
 */
export class SitesModel {
  constructor(
    private readonly redis: Redis,
    private readonly sites: SiteSource,
    private readonly incidents: IncidentCounts,
    private readonly now: () => number,
    private readonly nasOnlineMs: number,
  ) {}

  async list(tenantId: string): Promise<{ data: SiteSummary[] }> {
    const now = this.now();
    const [sites, withIncident] = await Promise.all([this.sites.get(tenantId), this.incidents.openIncidentSites(tenantId)]);
    const batch = new ReadBatch(this.redis);
    const live = readLiveCounts(batch, tenantId, sites.hotspots.map((h) => h.id), now);
    const online = readNasOnline(batch, tenantId, sites.nas.map((n) => n.id), now, this.nasOnlineMs);
    await batch.run();

    const nas = new Map<string, { total: number; online: number }>();
    online().forEach((up, i) => {
      const hs = sites.nas[i]!.hotspotId;
      const n = nas.get(hs) ?? { total: 0, online: 0 };
      n.total++;
      if (up) n.online++;
      nas.set(hs, n);
    });
    const counts = live();
    return {
      data: sites.hotspots.map((h, i) => {
        const n = nas.get(h.id) ?? { total: 0, online: 0 };
        return {
          id: h.id, name: h.name, location: h.location, timezone: h.timezone, active_sessions: counts[i] ?? 0,
          nas_total: n.total, nas_online: n.online, health: siteHealth(n.total, n.online, withIncident.has(h.id)),
        };
      }),
    };
  }

  async metrics(tenantId: string): Promise<{ data: SiteMetrics[]; generated_at: string }> {
    const now = this.now();
    const sites = await this.sites.get(tenantId);
    const ids = sites.hotspots.map((h) => h.id);
    const fields = ids.flatMap((h) => [ACTIVITY.accepts, ACTIVITY.rejects, ACTIVITY.bytesIn, ACTIVITY.bytesOut].map((f) => perSite(f, h)));
    const batch = new ReadBatch(this.redis);
    const live = readLiveCounts(batch, tenantId, ids, now);
    const hourW = activityWindow(now, 'minute', 60);
    const hour = readWindow(batch, tenantId, hourW, fields);
    const byAp = batch.hash(keys.liveByAp(tenantId));
    await batch.run();

    const h = hour();
    const counts = live();
    const aps = liveCounts(byAp());
    const minutes = hourW.buckets.map((b) => new Date(bucketStart(hourW, b)).toISOString());
    // The last complete minute: the newest bucket is still filling.
    const lastComplete = minutes.length - 2;
    return {
      data: sites.hotspots.map((site, i) => {
        const signins = h.series(perSite(ACTIVITY.accepts, site.id));
        const failures = h.series(perSite(ACTIVITY.rejects, site.id));
        return {
          site_id: site.id, name: site.name, active_sessions: counts[i] ?? 0,
          signins_1m: signins[lastComplete] ?? 0, failures_1m: failures[lastComplete] ?? 0,
          per_minute: minutes.map((minute, k) => ({ minute, signins: signins[k] ?? 0, failures: failures[k] ?? 0 })),
          bytes_in_1h: h.total(perSite(ACTIVITY.bytesIn, site.id)),
          bytes_out_1h: h.total(perSite(ACTIVITY.bytesOut, site.id)),
          busiest_aps: aps.filter((a) => a.hotspotId === site.id).slice(0, BUSIEST_APS).map((a) => ({ ap: a.name, active: a.active })),
        };
      }),
      generated_at: new Date(now).toISOString(),
    };
  }
}
