import type { Logger } from '../logger.js';
import type { NasRecord } from '../sessions/ports.js';
import type { Pool } from '../store/postgres.js';

/** A NAS with the time zone of its hotspot (daily quotas follow the hotspot's local day). */
export interface NasEntry extends NasRecord {
  timezone: string;
}

const REFRESH_MS = 5_000;

/** The clients at one source address: the one without a NAS-Identifier, and those named by one. */
interface AtAddress { plain: NasEntry | null; named: Map<string, NasEntry> | null }

/**
 * Every registered NAS, in memory, so the RADIUS server can find a packet's
 * client by source address (and NAS-Identifier, for access points behind one
 * NAT) without a query per packet. Refreshed every few seconds (so a NAS
 * added in another process is known within REFRESH_MS) and at once after a
 * change in this process.
 */
export class NasRegistry {
  private byIp = new Map<string, AtAddress>();
  private byId = new Map<string, NasEntry>();
  private byHotspot = new Map<string, NasEntry[]>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly pool: Pool, private readonly log: Logger) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch((err: Error) => this.log.warn({ err: err.message }, 'NAS registry refresh failed')), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async refresh(): Promise<void> {
    const { rows } = await this.pool.query<{
      id: string; tenant_id: string; hotspot_id: string; ip: string; secret: string; coa_port: number;
      require_message_authenticator: boolean; timezone: string; nas_identifier: string | null;
    }>(`SELECT n.id, n.tenant_id, n.hotspot_id, host(n.ip) AS ip, n.secret, n.coa_port, n.require_message_authenticator, h.timezone,
               n.nas_identifier
        FROM nas_clients n JOIN hotspots h ON h.id = n.hotspot_id ORDER BY n.created_at`);
    const byIp = new Map<string, AtAddress>();
    const byId = new Map<string, NasEntry>();
    const byHotspot = new Map<string, NasEntry[]>();
    for (const r of rows) {
      const e: NasEntry = {
        id: r.id, tenantId: r.tenant_id, hotspotId: r.hotspot_id, ip: r.ip, secret: r.secret, coaPort: r.coa_port,
        requireMessageAuthenticator: r.require_message_authenticator, timezone: r.timezone,
      };
      let at = byIp.get(e.ip);
      if (!at) byIp.set(e.ip, (at = { plain: null, named: null }));
      if (r.nas_identifier === null) at.plain = e;
      else (at.named ??= new Map()).set(r.nas_identifier, e);
      byId.set(e.id, e);
      byHotspot.set(e.hotspotId, [...(byHotspot.get(e.hotspotId) ?? []), e]);
    }
    this.byIp = byIp;
    this.byId = byId;
    this.byHotspot = byHotspot;
  }

  /**
   * The NAS sending from this address (IPv4-mapped IPv6 addresses are matched
   * as IPv4): the client registered with the packet's NAS-Identifier, else
   * the address's client registered without one. `identifier` reads the
   * packet's NAS-Identifier and is called only when some client at the
   * address is named by one. The identifier is a claim of an unauthenticated
   * packet: it only chooses whose secret must then verify the packet.
   */
  byAddress(ip: string, identifier?: () => string | undefined): NasEntry | null {
    const at = this.byIp.get(ip.startsWith('::ffff:') ? ip.slice(7) : ip);
    if (!at) return null;
    if (at.named && identifier) {
      const id = identifier();
      const named = id === undefined ? undefined : at.named.get(id);
      if (named) return named;
    }
    return at.plain;
  }

  get(id: string): NasEntry | null {
    return this.byId.get(id) ?? null;
  }

  /** The NAS to send a command to for a session whose NAS we have not heard from: the hotspot's first. */
  forHotspot(hotspotId: string): NasEntry | null {
    return this.byHotspot.get(hotspotId)?.[0] ?? null;
  }
}
