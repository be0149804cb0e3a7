import type { HotspotService } from '../hotspots/hotspot-service.js';
import { keys } from '../redis/keys.js';
import type { Pool } from '../store/postgres.js';
import type { ReadBatch, Slot } from '../redis/read-batch.js';
import { TenantCache } from '../util/tenant-cache.js';

/** A tenant's sites (hotspots) and NAS clients, as the read models need them. */
export interface Sites {
  hotspots: readonly { id: string; name: string; location: string; timezone: string }[];
  /** Every NAS client of the tenant, with its hotspot, in the order they were added. */
  nas: readonly { id: string; hotspotId: string; name: string | null; ip: string }[];
}

/** Where the read models learn a tenant's sites (SiteDirectory; tests give fixed ones). */
export interface SiteSource {
  get(tenantId: string): Promise<Sites>;
}

/**
 * A NAS is online when a packet of it came within this long (docs/dashboard-api.md, `switches`): the default of
 * INCIDENT_NAS_SILENT_SEC. The engine passes that setting to every reader (tiles, sites, switches, topology), so
 * "online" is one definition: a NAS counted online on the top strip is never "down" in site health.
 */
export const NAS_ONLINE_MS = 5 * 60_000;
const CACHE_MS = 5_000;

/**
 * The tenant's hotspots and NAS clients, cached for a few seconds: the
 * dashboard polls every 10 s per open tab. A site added or changed in this
 * process shows at once (HotspotService tells), one added in another process
 * within CACHE_MS. The promise is cached, so a burst of requests for one
 * tenant makes one query.
 */
export class SiteDirectory implements SiteSource {
  private readonly cache: TenantCache<Sites>;

  constructor(private readonly pool: Pool, private readonly hotspots: HotspotService, now: () => number = Date.now) {
    this.cache = new TenantCache(CACHE_MS, (tenantId) => this.load(tenantId), now);
    hotspots.onSitesChanged((tenantId) => this.cache.forget(tenantId));
  }

  get(tenantId: string): Promise<Sites> {
    return this.cache.get(tenantId);
  }

  private async load(tenantId: string): Promise<Sites> {
    const [hotspots, { rows }] = await Promise.all([
      this.hotspots.list(tenantId),
      this.pool.query<{ id: string; hotspot_id: string; name: string | null; ip: string }>(
        // A subnet client (migration 028) shows as its CIDR, an address client as the bare address.
        `SELECT id, hotspot_id, name, CASE WHEN masklen(ip) < CASE family(ip) WHEN 4 THEN 32 ELSE 128 END THEN text(ip) ELSE host(ip) END AS ip
         FROM nas_clients WHERE tenant_id = $1 ORDER BY created_at, id`, [tenantId]),
    ]);
    return {
      hotspots: hotspots.map((h) => ({ id: h.id, name: h.name, location: h.location, timezone: h.timezone })),
      nas: rows.map((r) => ({ id: r.id, hotspotId: r.hotspot_id, name: r.name, ip: r.ip })),
    };
  }
}

/** Queues the live session count of each hotspot: grants whose end (the live set's score, ms) is after `now`. */
export function readLiveCounts(batch: ReadBatch, tenantId: string, hotspotIds: readonly string[], now: number): Slot<number[]> {
  return batch.countsAbove(hotspotIds.map((h) => keys.live(tenantId, h)), now);
}

/** Queues whether each NAS is online: its keys.nasSeen entry within `onlineMs` of `now`. */
export function readNasOnline(batch: ReadBatch, tenantId: string, nasIds: readonly string[], now: number, onlineMs: number): Slot<boolean[]> {
  const seen = batch.numbers(keys.nasSeen(tenantId), nasIds);
  return () => seen().map((at) => at > 0 && now - at <= onlineMs);
}

/** What a person is shown for a NAS: its name, else its address (a NAS may be registered without a name). */
export function nasLabel(nas: { name: string | null; ip: string; id: string }): string {
  return nas.name?.trim() || nas.ip || nas.id;
}
