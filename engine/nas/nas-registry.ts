import { BlockList, isIP, isIPv4 } from 'node:net';
import type { Logger } from '../logger.js';
import type { NasRecord } from '../sessions/ports.js';
import type { Pool } from '../store/postgres.js';

/** One registered client as the registry reads it from Postgres (and hands it to the RADIUS threads' copies). */
export interface NasRow {
  id: string; tenant_id: string; hotspot_id: string; ip: string; bits: number; host_bits: number; secret: string; coa_port: number;
  require_message_authenticator: boolean; timezone: string; nas_identifier: string | null;
  nas_type: string; reply_role: string | null; reply_filter_id: string | null; reply_vlan: number | null;
  radsec_cert_name: string | null;
}

/** A NAS with the time zone of its hotspot (daily quotas follow the hotspot's local day). */
export interface NasEntry extends NasRecord {
  timezone: string;
}

const REFRESH_MS = 5_000;
/** Addresses whose subnet lookup is remembered; past it the memo starts again (a flood of spoofed sources stays bounded). */
const MEMO_MAX = 65_536;

/** The clients at one source address or subnet: the one without a NAS-Identifier, and those named by one. */
interface AtAddress { plain: NasEntry | null; named: Map<string, NasEntry> | null }

/** A subnet's clients, with the test for an address in it. */
interface Subnet { readonly cidr: string; readonly bits: number; readonly test: BlockList; readonly at: AtAddress }

/**
 * Every registered NAS, in memory, so the RADIUS server can find a packet's
 * client by source address (and NAS-Identifier, for access points behind one
 * NAT) without a query per packet. Refreshed every few seconds (so a NAS
 * added in another process is known within REFRESH_MS) and at once after a
 * change in this process.
 *
 * A client registered for a subnet (`10.20.0.0/24`) serves every address in
 * it that no client names exactly; the most specific subnet wins. Each
 * address of a subnet is a NAS of its own to the engine: its id is the
 * client's id and the address (`nas_x@10.20.0.7`), so sessions, an
 * Accounting-On and Disconnect/CoA go to the access point that sent the
 * packet, while presence and the console see the one registered client
 * (`client()`).
 */
export class NasRegistry {
  private byIp = new Map<string, AtAddress>();
  private byId = new Map<string, NasEntry>();
  private byHotspot = new Map<string, NasEntry[]>();
  /** Most specific first. */
  private subnets: Subnet[] = [];
  /** A subnet client's id → its subnet. */
  private subnetOfClient = new Map<string, Subnet>();
  /** Address → the subnets holding it, most specific first (empty: none). */
  private subnetMemo = new Map<string, readonly Subnet[]>();
  /** `id@address` → the NAS entry of that address of a subnet client. */
  private derived = new Map<string, NasEntry>();
  private timer: NodeJS.Timeout | undefined;
  private rows: readonly NasRow[] = [];
  /** The rows as last loaded, as text: a refresh that finds nothing new changes nothing and tells no one. */
  private rowsText = '[]';
  private readonly listeners: ((rows: readonly NasRow[]) => void)[] = [];

  /** `pool` null: a copy fed by load() (a RADIUS thread's), never queried. */
  constructor(private readonly pool: Pool | null, private readonly log: Logger) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch((err: Error) => this.log.warn({ err: err.message }, 'NAS registry refresh failed')), REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  async refresh(): Promise<void> {
    if (!this.pool) return;
    const { rows } = await this.pool.query<NasRow>(`SELECT n.id, n.tenant_id, n.hotspot_id, host(n.ip) AS ip, masklen(n.ip) AS bits, CASE family(n.ip) WHEN 4 THEN 32 ELSE 128 END AS host_bits,
               n.secret, n.coa_port, n.require_message_authenticator, h.timezone, n.nas_identifier,
               n.nas_type, n.reply_role, n.reply_filter_id, n.reply_vlan, n.radsec_cert_name
        FROM nas_clients n JOIN hotspots h ON h.id = n.hotspot_id ORDER BY n.created_at`);
    this.load(rows);
  }

  /** Calls `listener` with the rows after every load that changed them (and at once with the current rows). */
  onChange(listener: (rows: readonly NasRow[]) => void): void {
    this.listeners.push(listener);
    listener(this.rows);
  }

  /**
   * Replaces every entry with `rows` (as refresh() reads them). A registry
   * without a pool (a RADIUS thread's copy) is kept up to date this way by the
   * main thread's, which hands on its rows after each change.
   */
  load(rows: readonly NasRow[]): void {
    const text = JSON.stringify(rows);
    if (text === this.rowsText) return;
    this.rowsText = text;
    this.rows = rows;
    const byIp = new Map<string, AtAddress>();
    const bySubnet = new Map<string, Subnet>();
    const byId = new Map<string, NasEntry>();
    const byHotspot = new Map<string, NasEntry[]>();
    const subnetOfClient = new Map<string, Subnet>();
    for (const r of rows) {
      const e: NasEntry = {
        id: r.id, tenantId: r.tenant_id, hotspotId: r.hotspot_id, ip: r.ip, secret: r.secret, coaPort: r.coa_port,
        requireMessageAuthenticator: r.require_message_authenticator, timezone: r.timezone, nasType: r.nas_type,
        reply: { role: r.reply_role, filterId: r.reply_filter_id, vlan: r.reply_vlan },
      };
      // DNS names and the CNs radsecproxy matches compare without case; the listener lower-cases what it reads.
      if (r.radsec_cert_name !== null) e.radsecCertName = r.radsec_cert_name.toLowerCase();
      let at: AtAddress;
      if (r.bits < r.host_bits) {
        const cidr = `${r.ip}/${r.bits}`;
        let s = bySubnet.get(cidr);
        if (!s) {
          const test = new BlockList();
          test.addSubnet(r.ip, r.bits, isIPv4(r.ip) ? 'ipv4' : 'ipv6');
          bySubnet.set(cidr, (s = { cidr, bits: r.bits, test, at: { plain: null, named: null } }));
        }
        at = s.at;
        subnetOfClient.set(e.id, s);
      } else {
        const a = byIp.get(e.ip);
        if (!a) byIp.set(e.ip, (at = { plain: null, named: null }));
        else at = a;
        // A command for a session whose NAS we have not heard from goes to the hotspot's first address, never to a subnet's.
        byHotspot.set(e.hotspotId, [...(byHotspot.get(e.hotspotId) ?? []), e]);
      }
      if (r.nas_identifier === null) at.plain = e;
      else (at.named ??= new Map()).set(r.nas_identifier, e);
      byId.set(e.id, e);
    }
    this.byIp = byIp;
    this.subnets = [...bySubnet.values()].sort((a, b) => b.bits - a.bits);
    this.subnetOfClient = subnetOfClient;
    this.subnetMemo = new Map();
    this.derived = new Map();
    this.byId = byId;
    this.byHotspot = byHotspot;
    for (const l of this.listeners) l(rows);
  }

  /**
   * The NAS sending from this address (IPv4-mapped IPv6 addresses are matched
   * as IPv4): the client registered for the address with the packet's
   * NAS-Identifier, else the address's client registered without one; failing
   * both, the same in the most specific subnet holding the address, then the
   * next. `identifier` reads the packet's NAS-Identifier and is called only
   * when some candidate client is named by one. The identifier is a claim of
   * an unauthenticated packet: it only chooses whose secret must then verify
   * the packet.
   */
  byAddress(ip: string, identifier?: () => string | undefined): NasEntry | null {
    const addr = ip.startsWith('::ffff:') ? ip.slice(7) : ip;
    const at = this.byIp.get(addr);
    let id: string | undefined;
    let asked = false;
    if (at) {
      if (at.named && identifier) {
        id = identifier();
        asked = true;
        const named = id === undefined ? undefined : at.named.get(id);
        if (named) return named;
      }
      if (at.plain) return at.plain;
    }
    if (this.subnets.length === 0) return null;
    for (const s of this.subnetsOf(addr)) {
      let e: NasEntry | null | undefined;
      if (s.at.named && identifier) {
        if (!asked) { id = identifier(); asked = true; }
        e = id === undefined ? undefined : s.at.named.get(id);
      }
      e ??= s.at.plain;
      if (e) return this.atAddress(e, addr);
    }
    return null;
  }

  /** A NAS by id: a registered client's, or one address of a subnet client's (`id@address`, as byAddress hands out). */
  get(id: string): NasEntry | null {
    const e = this.byId.get(id);
    if (e) return e;
    const at = id.indexOf('@');
    if (at < 0) return null;
    const base = this.byId.get(id.slice(0, at));
    const subnet = this.subnetOfClient.get(id.slice(0, at));
    const addr = id.slice(at + 1);
    const family = isIP(addr);
    // Only an address inside the client's subnet: an id is data from Redis, not a licence to send anywhere.
    if (!base || !subnet || family === 0 || !subnet.test.check(addr, family === 4 ? 'ipv4' : 'ipv6')) return null;
    return this.atAddress(base, addr);
  }

  /** The registered client a NAS entry belongs to: itself, or the subnet client of an address's entry. */
  client(nas: { id: string }): NasEntry | null {
    const at = nas.id.indexOf('@');
    return this.byId.get(at < 0 ? nas.id : nas.id.slice(0, at)) ?? null;
  }

  /** The NAS to send a command to for a session whose NAS we have not heard from: the hotspot's first. */
  forHotspot(hotspotId: string): NasEntry | null {
    return this.byHotspot.get(hotspotId)?.[0] ?? null;
  }

  private subnetsOf(addr: string): readonly Subnet[] {
    let found = this.subnetMemo.get(addr);
    if (found) return found;
    const family = isIPv4(addr) ? 'ipv4' : 'ipv6';
    found = this.subnets.filter((s) => s.test.check(addr, family));
    if (this.subnetMemo.size >= MEMO_MAX) this.subnetMemo.clear();
    this.subnetMemo.set(addr, found);
    return found;
  }

  /** The entry of one address of a subnet client: the client's secret and settings, that address, an id of its own. */
  private atAddress(base: NasEntry, addr: string): NasEntry {
    const id = `${base.id}@${addr}`;
    let e = this.derived.get(id);
    if (!e) {
      e = { ...base, id, ip: addr };
      if (this.derived.size >= MEMO_MAX) this.derived.clear();
      this.derived.set(id, e);
    }
    return e;
  }
}
