import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { ACTIVITY } from '../redis/records.js';
import { activityWindow, bucketStart, MINUTE_MS, readWindow } from './activity-reader.js';
import { LIVE_PAGE_DEFAULT, readLiveSessionPage, type LiveSessionPage } from './live-session-list.js';
import { ReadBatch } from '../redis/read-batch.js';
import { readLiveCounts, type SiteSource } from './site-directory.js';

/** `GET sessions/active`: the console's live panel (docs/dashboard-api.md). */
export interface LivePanel {
  summary: { active_sessions: number; logins_24h: number; bytes_total_24h: number; avg_duration_sec_24h: number };
  by_ssid: { hotspot_id: string; ssid: string; active: number }[];
  by_ap: { hotspot_id: string; ap: string; active: number }[];
  /** The last hour, oldest first: 60 minutes, the current one (still filling) last. */
  per_minute: { minute: string; connects: number; disconnects: number }[];
  bandwidth_mbps: number;
  /** A page of the live sessions themselves, in the spec's "Console shape (live panel)"; `total` is active_sessions. */
  sessions: LiveSessionPage;
  generated_at: string;
}

/** One field of a live-count hash (keys.liveBySsid, keys.liveByAp): "<hotspot>|<name>" -> live sessions. */
export interface LiveCount {
  hotspotId: string;
  name: string;
  active: number;
}

/**
 * The positive entries of a live-count hash, most sessions first (then by
 * hotspot and name, so equal counts keep a stable order). A count at 0 or
 * below is a field the writers have not yet removed, not a place to show.
 */
export function liveCounts(hash: ReadonlyMap<string, number>): LiveCount[] {
  const out: LiveCount[] = [];
  for (const [field, active] of hash) {
    const bar = field.indexOf('|');
    if (bar < 0 || active <= 0) continue;
    out.push({ hotspotId: field.slice(0, bar), name: field.slice(bar + 1), active });
  }
  return out.sort((a, b) => b.active - a.active || a.hotspotId.localeCompare(b.hotspotId) || a.name.localeCompare(b.name));
}

const FIELDS_24H = [ACTIVITY.accepts, ACTIVITY.bytesIn, ACTIVITY.bytesOut, ACTIVITY.durationSec, ACTIVITY.ends];
const FIELDS_1H = [ACTIVITY.starts, ACTIVITY.ends];
const FIELDS_RATE = [ACTIVITY.bytesIn, ACTIVITY.bytesOut];

/** Megabits per second of `bytes` moved in one minute, three decimals. */
export function mbpsOfMinute(bytes: number): number {
  return Math.round((bytes * 8) / (MINUTE_MS / 1000) / 1000) / 1000;
}

/**
 * The console's live session panel: summary cards, live counts per SSID and
 * access point, connects and disconnects per minute for the last hour, and
 * the bandwidth of the last complete minute (the current one is still
 * filling, and would read low). One read script call of a fixed size (ReadBatch).
 */
export class LivePanelModel {
  constructor(private readonly redis: Redis, private readonly sites: SiteSource, private readonly now: () => number) {}

  /** The panel, with the page of live sessions from `offset` (at most `limit`: live-session-list.ts bounds both). */
  async read(tenantId: string, page: { limit: number; offset: number } = { limit: LIVE_PAGE_DEFAULT, offset: 0 }): Promise<LivePanel> {
    const now = this.now();
    const sites = await this.sites.get(tenantId);
    const hotspotIds = sites.hotspots.map((h) => h.id);
    const batch = new ReadBatch(this.redis);
    const live = readLiveCounts(batch, tenantId, hotspotIds, now);
    const day = readWindow(batch, tenantId, activityWindow(now, 'hour', 24), FIELDS_24H);
    const hourW = activityWindow(now, 'minute', 60);
    const hour = readWindow(batch, tenantId, hourW, FIELDS_1H);
    const rate = readWindow(batch, tenantId, activityWindow(now, 'minute', 1, 1), FIELDS_RATE);
    const bySsid = batch.hash(keys.liveBySsid(tenantId));
    const byAp = batch.hash(keys.liveByAp(tenantId));
    await batch.run();

    const d = day();
    const h = hour();
    const r = rate();
    const counts = live();
    const sessions = await readLiveSessionPage(this.redis, tenantId, hotspotIds, counts, now, page.limit, page.offset);
    const ends = d.total(ACTIVITY.ends);
    const connects = h.series(ACTIVITY.starts);
    const disconnects = h.series(ACTIVITY.ends);
    return {
      summary: {
        active_sessions: sessions.total,
        logins_24h: d.total(ACTIVITY.accepts),
        bytes_total_24h: d.total(ACTIVITY.bytesIn) + d.total(ACTIVITY.bytesOut),
        avg_duration_sec_24h: ends > 0 ? Math.round(d.total(ACTIVITY.durationSec) / ends) : 0,
      },
      by_ssid: liveCounts(bySsid()).map((c) => ({ hotspot_id: c.hotspotId, ssid: c.name, active: c.active })),
      by_ap: liveCounts(byAp()).map((c) => ({ hotspot_id: c.hotspotId, ap: c.name, active: c.active })),
      per_minute: hourW.buckets.map((b, i) => ({
        minute: new Date(bucketStart(hourW, b)).toISOString(), connects: connects[i] ?? 0, disconnects: disconnects[i] ?? 0,
      })),
      bandwidth_mbps: mbpsOfMinute(r.total(ACTIVITY.bytesIn) + r.total(ACTIVITY.bytesOut)),
      sessions,
      generated_at: new Date(now).toISOString(),
    };
  }
}
