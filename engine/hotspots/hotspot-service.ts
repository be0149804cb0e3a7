import { Errors } from '../errors.js';
import { newId } from '../ids.js';
import { nasClientAddress } from './nas-client-address.js';
import { NAS_TYPES, type NasType } from './nas-profiles.js';
import type { Pool } from '../store/postgres.js';
import { portalSettingsOf, storedPortalPart, type PortalSettings, type PortalSettingsInput } from './portal-settings.js';

/** A hotspot (site) as the API returns it. */
export interface Hotspot {
  id: string;
  name: string;
  location: string;
  timezone: string;
  /** Where the portal sends a guest after sign-in; null: the portal's own success page. */
  redirect_url: string | null;
  /** Session length for vouchers that set none; null: the service default. */
  session_minutes: number | null;
  /** The portal page's settings (migration 014); the UAM secret only as uam_secret_set. */
  portal: PortalSettings;
  created_at: string;
  updated_at: string;
}

export interface HotspotInput {
  name?: string;
  location?: string;
  timezone?: string;
  redirect_url?: string | null;
  session_minutes?: number | null;
  portal?: PortalSettingsInput;
}

/** What the portal's hot path needs to know about a hotspot. */
export interface HotspotRef {
  id: string;
  tenantId: string;
  /** The operator's name for it (the console's, `POST /v1/hotspots {name}`). */
  name: string;
  timezone: string;
  redirectUrl: string | null;
  sessionMinutes: number | null;
  portal: PortalSettings;
  /** The UAM secret (chilli uamsecret, openNDS faskey); never returned by the API or logged. */
  uamSecret: string | null;
}

export interface NasClient {
  id: string;
  hotspot_id: string;
  /** One address, or a subnet in CIDR notation (10.20.0.0/24) whose every address is this NAS's. */
  ip: string;
  name: string | null;
  coa_port: number;
  require_message_authenticator: boolean;
  /** Set: this client is the one at `ip` whose packets carry this NAS-Identifier (access points behind one NAT). */
  nas_identifier: string | null;
  /** The reply profile of its Access-Accepts (engine/hotspots/nas-profiles.ts). */
  nas_type: NasType;
  /** Its own values for the reply: a role (Aruba-User-Role, Mikrotik-Group, Ruckus-User-Groups), Filter-Id, VLAN. */
  reply_role: string | null;
  reply_filter_id: string | null;
  reply_vlan: number | null;
  /** RadSec: the name (subjectAltName DNS, else subject CN) its client certificate must carry; null: any of RADSEC_CA_FILE's CA. */
  radsec_cert_name: string | null;
  created_at: string;
}

export interface NasClientInput {
  ip: string;
  secret: string;
  name?: string;
  coa_port?: number;
  require_message_authenticator?: boolean;
  nas_identifier?: string;
  nas_type?: NasType;
  reply_role?: string;
  reply_filter_id?: string;
  reply_vlan?: number;
  radsec_cert_name?: string;
}

const REF_CACHE_MS = 5_000;

/** True when `tz` is an IANA zone name this Node knows (aliases such as UTC included). */
export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

interface HotspotRow {
  id: string; tenant_id: string; name: string; location: string; timezone: string;
  settings: { redirect_url?: string | null; session_minutes?: number | null };
  portal: Record<string, unknown> | null; uam_secret: string | null;
  created_at: Date; updated_at: Date;
}

function toHotspot(r: HotspotRow): Hotspot {
  return {
    id: r.id, name: r.name, location: r.location, timezone: r.timezone,
    redirect_url: r.settings.redirect_url ?? null,
    session_minutes: r.settings.session_minutes ?? null,
    portal: portalSettingsOf(r.portal, r.uam_secret),
    created_at: r.created_at.toISOString(), updated_at: r.updated_at.toISOString(),
  };
}

/** Hotspots and their NAS clients. Every method takes the tenant and never crosses it. */
export class HotspotService {
  private readonly refs = new Map<string, { ref: HotspotRef | null; at: number }>();
  private readonly siteListeners = new Set<(tenantId: string) => void>();

  /** @param onNasChange runs after a NAS client is added, so the RADIUS side knows it at once. */
  constructor(private readonly pool: Pool, private readonly onNasChange: () => Promise<void> = async () => undefined) {}

  /** Calls `fn` after a hotspot or NAS client of a tenant is added or changed in this process (caches of them forget it). */
  onSitesChanged(fn: (tenantId: string) => void): void {
    this.siteListeners.add(fn);
  }

  private sitesChanged(tenantId: string): void {
    for (const fn of this.siteListeners) fn(tenantId);
  }

  async create(tenantId: string, input: HotspotInput & { name: string; timezone: string }): Promise<Hotspot> {
    checkTimezone(input.timezone);
    const { rows } = await this.pool.query<HotspotRow>(
      `INSERT INTO hotspots (id, tenant_id, name, location, timezone, settings, portal, uam_secret) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       RETURNING *`,
      [newId('hs_'), tenantId, input.name, input.location ?? '', input.timezone, settingsOf(input),
        storedPortalPart(input.portal), input.portal?.uam_secret ?? null]);
    this.sitesChanged(tenantId);
    return toHotspot(rows[0]!);
  }

  async list(tenantId: string): Promise<Hotspot[]> {
    const { rows } = await this.pool.query<HotspotRow>(
      'SELECT * FROM hotspots WHERE tenant_id = $1 ORDER BY created_at, id', [tenantId]);
    return rows.map(toHotspot);
  }

  async get(tenantId: string, id: string): Promise<Hotspot> {
    const { rows } = await this.pool.query<HotspotRow>('SELECT * FROM hotspots WHERE id = $1 AND tenant_id = $2', [id, tenantId]);
    if (!rows[0]) throw Errors.HOTSPOT_NOT_FOUND();
    return toHotspot(rows[0]);
  }

  async update(tenantId: string, id: string, input: HotspotInput): Promise<Hotspot> {
    if (input.timezone !== undefined) checkTimezone(input.timezone);
    const { rows } = await this.pool.query<HotspotRow>(
      `UPDATE hotspots SET
         name = COALESCE($3, name), location = COALESCE($4, location), timezone = COALESCE($5, timezone),
         settings = settings || $6::jsonb, portal = portal || $7::jsonb,
         uam_secret = CASE WHEN $8 THEN $9 ELSE uam_secret END, updated_at = now()
       WHERE id = $1 AND tenant_id = $2 RETURNING *`,
      [id, tenantId, input.name ?? null, input.location ?? null, input.timezone ?? null, settingsOf(input),
        storedPortalPart(input.portal), input.portal?.uam_secret !== undefined, input.portal?.uam_secret ?? null]);
    if (!rows[0]) throw Errors.HOTSPOT_NOT_FOUND();
    this.refs.delete(id);
    this.sitesChanged(tenantId);
    return toHotspot(rows[0]);
  }

  /**
   * The portal's view of a hotspot, by id alone (the portal has no credentials;
   * the hotspot names the tenant). Cached for a few seconds: an edit made in
   * another process reaches this one within REF_CACHE_MS; while Postgres is
   * unreachable the last known answer is used.
   */
  async ref(id: string): Promise<HotspotRef | null> {
    const hit = this.refs.get(id);
    if (hit && Date.now() - hit.at < REF_CACHE_MS) return hit.ref;
    let rows: HotspotRow[];
    try {
      ({ rows } = await this.pool.query<HotspotRow>('SELECT * FROM hotspots WHERE id = $1', [id]));
    } catch (err) {
      // Postgres away: guests keep signing in on what we knew (sign-in itself needs only Redis).
      if (hit) return hit.ref;
      throw err;
    }
    const r = rows[0];
    const ref = r ? {
      id: r.id, tenantId: r.tenant_id, name: r.name, timezone: r.timezone,
      redirectUrl: r.settings.redirect_url ?? null, sessionMinutes: r.settings.session_minutes ?? null,
      portal: portalSettingsOf(r.portal, r.uam_secret), uamSecret: r.uam_secret || null,
    } : null;
    if (this.refs.size > 100_000) this.refs.clear();
    this.refs.set(id, { ref, at: Date.now() });
    return ref;
  }

  /**
   * Registers a NAS client, for one address or a subnet. Several clients may
   * share an address only by NAS-Identifier and only within one tenant, and a
   * subnet may not overlap another tenant's address or subnet: an address is
   * one venue's network, and another tenant registering it (with the
   * identifier the access points send, as the address's plain client, or
   * within a subnet) would be served their packets. Within a tenant, subnets
   * may nest (the most specific wins, engine/nas/nas-registry.ts). The check
   * and the insert run under a lock per /16 (or /48) block, which every
   * overlapping record shares, so two tenants racing cannot both win.
   */
  async addNasClient(tenantId: string, hotspotId: string, input: NasClientInput): Promise<NasClient> {
    await this.get(tenantId, hotspotId);
    if (input.nas_type !== undefined && !NAS_TYPES.includes(input.nas_type)) {
      throw Errors.VALIDATION_FAILED(`nas_type must be one of ${NAS_TYPES.join(', ')}`, [{ field: 'nas_type', message: `one of ${NAS_TYPES.join(', ')}` }]);
    }
    const c = await this.pool.connect();
    try {
      await c.query('BEGIN');
      const addr = await nasClientAddress(c, input.ip);
      await c.query('SELECT pg_advisory_xact_lock(7265031, hashtext($1))', [addr.block]);
      // The lock of the release before subnets (one per address), so its processes and this one exclude each other too.
      if (!addr.subnet) await c.query('SELECT pg_advisory_xact_lock(7265031, hashtext($1))', [addr.ip]);
      const { rows: [other] } = await c.query<{ subnet: boolean }>(
        `SELECT masklen(ip) < CASE family(ip) WHEN 4 THEN 32 ELSE 128 END AS subnet
         FROM nas_clients WHERE ip && $1::inet AND tenant_id <> $2 LIMIT 1`, [addr.ip, tenantId]);
      if (other) throw other.subnet || addr.subnet ? Errors.NAS_SUBNET_OVERLAP() : Errors.NAS_IP_IN_USE();
      const { rows } = await c.query<NasRow>(
        `INSERT INTO nas_clients (id, tenant_id, hotspot_id, ip, secret, coa_port, require_message_authenticator, name, nas_identifier,
                                  nas_type, reply_role, reply_filter_id, reply_vlan, radsec_cert_name)
         VALUES ($1, $2, $3, $4::inet, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING *`,
        [newId('nas_'), tenantId, hotspotId, addr.ip, input.secret, input.coa_port ?? 3799,
          input.require_message_authenticator ?? true, input.name ?? null, input.nas_identifier ?? null,
          input.nas_type ?? 'generic', input.reply_role ?? null, input.reply_filter_id ?? null, input.reply_vlan ?? null,
          input.radsec_cert_name ?? null]);
      await c.query('COMMIT');
      await this.onNasChange();
      this.sitesChanged(tenantId);
      return toNas(rows[0]!);
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      if ((err as { code?: string }).code === '23505') throw Errors.NAS_IP_IN_USE();
      throw err;
    } finally {
      c.release();
    }
  }

  async listNasClients(tenantId: string, hotspotId: string): Promise<NasClient[]> {
    await this.get(tenantId, hotspotId);
    const { rows } = await this.pool.query<NasRow>(
      'SELECT * FROM nas_clients WHERE tenant_id = $1 AND hotspot_id = $2 ORDER BY created_at, id', [tenantId, hotspotId]);
    return rows.map(toNas);
  }
}

interface NasRow {
  id: string; hotspot_id: string; ip: string; name: string | null; coa_port: number;
  require_message_authenticator: boolean; nas_identifier: string | null; created_at: Date;
  nas_type: NasType; reply_role: string | null; reply_filter_id: string | null; reply_vlan: number | null;
  radsec_cert_name: string | null;
}

/** The secret is write-only: it is never part of a response. */
function toNas(r: NasRow): NasClient {
  return {
    id: r.id, hotspot_id: r.hotspot_id, ip: r.ip, name: r.name, coa_port: r.coa_port,
    require_message_authenticator: r.require_message_authenticator, nas_identifier: r.nas_identifier,
    nas_type: r.nas_type, reply_role: r.reply_role, reply_filter_id: r.reply_filter_id, reply_vlan: r.reply_vlan,
    radsec_cert_name: r.radsec_cert_name, created_at: r.created_at.toISOString(),
  };
}

function checkTimezone(tz: string): void {
  if (!isValidTimezone(tz)) {
    throw Errors.VALIDATION_FAILED(`timezone ${JSON.stringify(tz)} is not an IANA time zone name`, [
      { field: 'timezone', message: 'must be an IANA time zone name such as Europe/Istanbul' },
    ]);
  }
}

function settingsOf(input: HotspotInput): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  if (input.redirect_url !== undefined) s.redirect_url = input.redirect_url;
  if (input.session_minutes !== undefined) s.session_minutes = input.session_minutes;
  return s;
}
