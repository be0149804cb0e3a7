import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { ACTIVITY } from '../redis/records.js';
import { activityWindow, percent, readDecisions1m, readWindow } from './activity-reader.js';
import { lagMinutesOf, type AuditLag } from '../audit/audit-lag.js';
import { ReadBatch } from '../redis/read-batch.js';
import { readLiveCounts, readNasOnline, type SiteSource } from './site-directory.js';

/** `GET dashboard/overview` (docs/dashboard-api.md). */
export interface Overview {
  active_sessions: number;
  decisions_1m: number;
  switches_online: number;
  incidents_open: number;
  posture_fail_24h: number;
  active_guest_count: number;
  login_count_24h: number;
  login_fail_count_24h: number;
  auth_success_pct_24h: number | null;
  error_rate_pct: number;
  audit_anchor_lag_min: number;
  generated_at: string;
}

/** `GET dashboard/kpis-extra` (docs/dashboard-api.md). */
export interface KpisExtra {
  edge_health_pct: number | null;
  posture_compliance_pct: number | null;
  nas_total: number;
  nas_online: number;
  posture_devices: number;
  posture_pass: number;
  generated_at: string;
}

/** What the incidents service tells the read models (engine/incidents/). */
export interface IncidentCounts {
  /** Incidents of the tenant in an open state (pending, triaging, acknowledged). */
  openIncidents(tenantId: string): Promise<number>;
  /** The hotspots with an open incident, for a site's health. */
  openIncidentSites(tenantId: string): Promise<ReadonlySet<string>>;
}

const ERROR_WINDOW_MINUTES = 15;
const FIELDS_24H = [ACTIVITY.accepts, ACTIVITY.rejects, ACTIVITY.postureFail];
const FIELDS_15M = [ACTIVITY.accepts, ACTIVITY.rejects, ACTIVITY.errors];

/**
 * The top strip and the main grid. Every tile is a sum over a fixed number
 * of buckets or a counter kept by the writers (docs/dashboard-api.md, "How
 * the numbers are kept"): the Redis reads are one read script call whose
 * length depends on the tenant's hotspots and NAS clients, not on its
 * sessions.
 */
export class OverviewModel {
  constructor(
    private readonly redis: Redis,
    private readonly sites: SiteSource,
    private readonly auditLag: AuditLag,
    private readonly incidents: IncidentCounts,
    private readonly now: () => number,
    /** A NAS heard from within this long is online (the same for every reader: ReadModelDeps.nasOnlineMs). */
    private readonly nasOnlineMs: number,
  ) {}

  async overview(tenantId: string): Promise<Overview> {
    const now = this.now();
    // Both are cached for a few seconds (SiteDirectory, OpenIncidents): usually no query at all.
    const [sites, open] = await Promise.all([this.sites.get(tenantId), this.incidents.openIncidents(tenantId)]);
    const batch = new ReadBatch(this.redis);
    const lag = this.auditLag.queue(batch, tenantId);
    const live = readLiveCounts(batch, tenantId, sites.hotspots.map((h) => h.id), now);
    const online = readNasOnline(batch, tenantId, sites.nas.map((n) => n.id), now, this.nasOnlineMs);
    const guests = batch.hlen(keys.liveDevices(tenantId));
    const decisions = readDecisions1m(batch, tenantId, now);
    const day = readWindow(batch, tenantId, activityWindow(now, 'hour', 24), FIELDS_24H);
    const recent = readWindow(batch, tenantId, activityWindow(now, 'minute', ERROR_WINDOW_MINUTES), FIELDS_15M);
    await batch.run();

    const d = day();
    const r = recent();
    const acc = d.total(ACTIVITY.accepts);
    const rej = d.total(ACTIVITY.rejects);
    return {
      active_sessions: live().reduce((a, b) => a + b, 0),
      decisions_1m: decisions(),
      switches_online: online().filter(Boolean).length,
      incidents_open: open,
      posture_fail_24h: d.total(ACTIVITY.postureFail),
      active_guest_count: guests(),
      login_count_24h: acc,
      login_fail_count_24h: rej,
      auth_success_pct_24h: percent(acc, acc + rej),
      error_rate_pct: percent(r.total(ACTIVITY.errors), r.total(ACTIVITY.accepts) + r.total(ACTIVITY.rejects)) ?? 0,
      audit_anchor_lag_min: lagMinutesOf(lag(), now),
      generated_at: new Date(now).toISOString(),
    };
  }

  async kpisExtra(tenantId: string): Promise<KpisExtra> {
    const now = this.now();
    const sites = await this.sites.get(tenantId);
    const batch = new ReadBatch(this.redis);
    const online = readNasOnline(batch, tenantId, sites.nas.map((n) => n.id), now, this.nasOnlineMs);
    const verdicts = batch.hash(keys.postureCounts(tenantId));
    await batch.run();

    const nasOnline = online().filter(Boolean).length;
    const counts = verdicts();
    let devices = 0;
    for (const n of counts.values()) devices += Math.max(0, n);
    const pass = Math.max(0, counts.get('pass') ?? 0);
    return {
      edge_health_pct: percent(nasOnline, sites.nas.length),
      posture_compliance_pct: percent(pass, devices),
      nas_total: sites.nas.length,
      nas_online: nasOnline,
      posture_devices: devices,
      posture_pass: pass,
      generated_at: new Date(now).toISOString(),
    };
  }
}
