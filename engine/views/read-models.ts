import type { RedisClient as Redis } from '../redis/redis-client.js';
import { AuditLag } from '../audit/audit-lag.js';
import { LivePanelModel, type LivePanel } from './live-panel.js';
import { ensureReadScript } from '../redis/read-batch.js';
import { OverviewModel, type IncidentCounts, type KpisExtra, type Overview } from './overview.js';
import { NAS_ONLINE_MS, type SiteSource } from './site-directory.js';
import { SitesModel, type SiteMetrics, type SiteSummary } from './sites.js';

export interface ReadModelDeps {
  redis: Redis;
  /** The tenant's hotspots and NAS clients (SiteDirectory). */
  sites: SiteSource;
  incidents: IncidentCounts;
  now?: () => number;
  /**
   * A NAS heard from within this long is online: INCIDENT_NAS_SILENT_SEC, the window NetworkView (switches,
   * topology) and the nas_silent incident use too (default NAS_ONLINE_MS).
   */
  nasOnlineMs?: number;
}

/**
 * The dashboard's read models: what the GET paths of docs/dashboard-api.md
 * answer with for overview, kpis-extra, sessions/active, sites and
 * sites/metrics. Each answer is computed from counters the writers keep as
 * things happen; none scans sessions.
 */
export class DashboardReadModels {
  private readonly overviewModel: OverviewModel;
  private readonly livePanel: LivePanelModel;
  private readonly sitesModel: SitesModel;

  constructor(deps: ReadModelDeps) {
    const now = deps.now ?? Date.now;
    const sites = deps.sites;
    const onlineMs = deps.nasOnlineMs ?? NAS_ONLINE_MS;
    ensureReadScript(deps.redis);
    this.overviewModel = new OverviewModel(deps.redis, sites, new AuditLag(deps.redis), deps.incidents, now, onlineMs);
    this.livePanel = new LivePanelModel(deps.redis, sites, now);
    this.sitesModel = new SitesModel(deps.redis, sites, deps.incidents, now, onlineMs);
  }

  overview(tenantId: string): Promise<Overview> {
    return this.overviewModel.overview(tenantId);
  }

  kpisExtra(tenantId: string): Promise<KpisExtra> {
    return this.overviewModel.kpisExtra(tenantId);
  }

  /** The live panel and a page of the live sessions (limit 1-LIVE_PAGE_MAX, offset 0-LIVE_OFFSET_MAX: the route's schema bounds them). */
  activeSessions(tenantId: string, page?: { limit: number; offset: number }): Promise<LivePanel> {
    return this.livePanel.read(tenantId, page);
  }

  sites(tenantId: string): Promise<{ data: SiteSummary[] }> {
    return this.sitesModel.list(tenantId);
  }

  siteMetrics(tenantId: string): Promise<{ data: SiteMetrics[]; generated_at: string }> {
    return this.sitesModel.metrics(tenantId);
  }
}
