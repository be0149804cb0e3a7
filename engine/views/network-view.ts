import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import { keys } from '../redis/keys.js';
import { parsePorts, type NasPortRecord } from '../nas/nas-presence.js';
import { nasLabel, type Sites, type SiteSource } from './site-directory.js';

/** A NAS client as the dashboard's `switches` shows it. */
export interface Switch {
  id: string;
  /** The NAS's name, else its address (nasLabel): never null, as it is shown to a person as it is. */
  name: string;
  hotspot_id: string;
  ip: string;
  online: boolean;
  last_seen_at: string | null;
}

export interface SwitchPort {
  port: string;
  nas_port: number | null;
  nas_port_id: string | null;
  called_station_id: string | null;
  last_seen_at: string;
  active_sessions: number;
}

export interface Topology {
  tenant: { id: string; name: string };
  sites: {
    id: string;
    name: string;
    nas: (Omit<Switch, 'hotspot_id'> & { access_points: { id: string; active_sessions: number }[] })[];
  }[];
}

type NasRow = Sites['nas'][number];

/** "AA-BB-CC-DD-EE-FF:SSID" (or colons, or bare hex): the access point's MAC as the NAS wrote it; other forms whole. */
function apOfCalled(called: string): string {
  const m = /^(?:[0-9A-Fa-f]{2}[-:]){5}[0-9A-Fa-f]{2}|^[0-9A-Fa-f]{12}(?=:)/.exec(called);
  return m ? m[0] : called;
}

/** The access point a port belongs to: the one accounting names on it, else the MAC part of its Called-Station-Id. */
function apOf(p: NasPortRecord): string | null {
  return p.ap || (p.called_station_id ? apOfCalled(p.called_station_id) : null);
}

/**
 * The tenant's NAS clients, their ports and the topology, from what NAS
 * presence recorded (keys.nasSeen, keys.nasPorts) and the live count per
 * access point the session scripts keep (keys.liveByAp). The tenant's sites
 * and NAS clients come from the site directory the read models share (a few
 * seconds' cache); a fixed handful of keys per NAS; no session is read.
 */
export class NetworkView {
  constructor(
    private readonly sites: SiteSource,
    private readonly redis: Redis,
    /** A NAS heard from within this long is online. */
    private readonly onlineMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async switches(tenantId: string): Promise<Switch[]> {
    const [{ nas }, seen] = await Promise.all([this.sites.get(tenantId), this.redis.hgetall(keys.nasSeen(tenantId))]);
    return nas.map((r) => this.toSwitch(r, seen));
  }

  /** 404 not_found for an unknown NAS id or another tenant's. */
  async ports(tenantId: string, nasId: string): Promise<{ switch_id: string; data: SwitchPort[] }> {
    const nas = (await this.sites.get(tenantId)).nas.find((n) => n.id === nasId);
    if (!nas) throw Errors.RECORD_NOT_FOUND('NAS client');
    const [raw, live] = await Promise.all([this.redis.hgetall(keys.nasPorts(tenantId, nasId)), this.redis.hgetall(keys.liveByAp(tenantId))]);
    const data = parsePorts(raw).map((p) => {
      const ap = apOf(p);
      return {
        port: p.port, nas_port: p.nas_port, nas_port_id: p.nas_port_id, called_station_id: p.called_station_id, last_seen_at: p.last_seen_at,
        active_sessions: ap ? Number(live[`${nas.hotspotId}|${ap}`] ?? 0) : 0,
      };
    });
    data.sort((a, b) => a.port.localeCompare(b.port, 'en', { numeric: true }));
    return { switch_id: nasId, data };
  }

  /**
   * Tenant, sites (hotspots), their NAS clients and the access points behind
   * each. A hotspot with one NAS has every access point live there behind
   * it; with several, an access point is placed by the ports it was seen on.
   */
  async topology(tenant: { id: string; name: string }): Promise<Topology> {
    const { hotspots, nas } = await this.sites.get(tenant.id);
    const p = this.redis.pipeline();
    p.hgetall(keys.nasSeen(tenant.id));
    p.hgetall(keys.liveByAp(tenant.id));
    for (const n of nas) p.hgetall(keys.nasPorts(tenant.id, n.id));
    const results = (await p.exec()) ?? [];
    const hash = (i: number): Record<string, string> => {
      const [err, v] = results[i] ?? [null, {}];
      if (err) throw err;
      return (v ?? {}) as Record<string, string>;
    };
    const seen = hash(0);
    const live = hash(1);
    const nasPerSite = new Map<string, number>();
    for (const n of nas) nasPerSite.set(n.hotspotId, (nasPerSite.get(n.hotspotId) ?? 0) + 1);
    const bySite = new Map<string, Topology['sites'][number]['nas']>();
    nas.forEach((n, i) => {
      const aps = new Set<string>();
      for (const port of parsePorts(hash(2 + i))) {
        const ap = apOf(port);
        if (ap) aps.add(ap);
      }
      if (nasPerSite.get(n.hotspotId) === 1) {
        const prefix = `${n.hotspotId}|`;
        for (const [field, count] of Object.entries(live)) if (field.startsWith(prefix) && Number(count) > 0) aps.add(field.slice(prefix.length));
      }
      const { hotspot_id: _site, ...sw } = this.toSwitch(n, seen);
      const list = bySite.get(n.hotspotId) ?? [];
      list.push({
        ...sw,
        access_points: [...aps].sort().map((id) => ({ id, active_sessions: Number(live[`${n.hotspotId}|${id}`] ?? 0) })),
      });
      bySite.set(n.hotspotId, list);
    });
    return {
      tenant: { id: tenant.id, name: tenant.name },
      sites: hotspots.map((h) => ({ id: h.id, name: h.name, nas: bySite.get(h.id) ?? [] })),
    };
  }

  private toSwitch(r: NasRow, seen: Record<string, string>): Switch {
    const at = Number(seen[r.id] ?? NaN);
    const known = Number.isFinite(at);
    return {
      id: r.id, name: nasLabel(r), hotspot_id: r.hotspotId, ip: r.ip,
      online: known && this.now() - at <= this.onlineMs, last_seen_at: known ? new Date(at).toISOString() : null,
    };
  }
}
