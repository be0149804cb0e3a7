import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import { normalizeMac } from '../ids.js';
import { decodeCursor, encodeCursor } from '../util/list-cursor.js';
import type { HotspotService } from '../hotspots/hotspot-service.js';
import { keys } from '../redis/keys.js';
import { GRANT, type GrantHash } from '../redis/records.js';
import type { Pool } from '../store/postgres.js';
import type { SessionActors } from './actor-ports.js';
import type { BlockDuration, BlockService } from './block-service.js';
import type { LiveView } from './messages.js';

/**
 * Session ids: the portal answers `sess_<suffix>`, the public API shows the
 * same session as `ses_<suffix>`. Both forms are accepted wherever a session
 * id is expected; the suffix is the identity.
 */
export function internalSessionId(id: string): string | null {
  const m = /^(?:sess?_)([a-z0-9]{16})$/.exec(id);
  return m ? `sess_${m[1]}` : null;
}

export function publicSessionId(sid: string): string {
  return `ses_${sid.slice(5)}`;
}

/**
 * The one masking policy for a guest's identity wherever it leaves the API
 * (sessions, devices, the audit day, the dashboard's audit pages): a phone
 * number keeps its country code's first digits and its last two
 * (+905321234567 -> +905*******67); an e-mail address keeps the first
 * character of its local part and its domain (ayse@example.com ->
 * a***@example.com); other identities (a voucher username, a room) pass
 * unchanged. Only the 5651 access log and the evidence pack name guests in
 * clear, and only to the admin or compliance role.
 */
export function maskUsername(u: string | null): string | null {
  if (!u) return u;
  if (/^\+?\d{8,15}$/.test(u)) {
    const keepStart = u.startsWith('+') ? 4 : 3;
    return u.slice(0, keepStart) + '*'.repeat(u.length - keepStart - 2) + u.slice(-2);
  }
  const at = u.lastIndexOf('@');
  if (at > 0 && at < u.length - 1) return u[0] + '*'.repeat(Math.max(3, at - 1)) + u.slice(at);
  return u;
}

interface SessionRow {
  id: string; tenant_id: string; hotspot_id: string; mac: string; ip: string | null; username: string | null;
  auth_method: string; ssid: string | null; started_at: Date; ends_at: Date; ended_at: Date | null;
  end_reason: string | null; status: string; bytes_in: number; bytes_out: number;
}

/** The public API's session record (see /v1/openapi.json), with the console fields beside it. */
export interface PublicSession {
  id: string;
  mac: string;
  ip: string | null;
  username: string | null;
  auth_method: string;
  started_at: string;
  duration_seconds: number;
  bytes_in: number;
  bytes_out: number;
  hotspot_id: string;
  status: string;
  expires_at: string;
  ended_at: string | null;
  end_reason: string | null;
  ssid: string | null;
  ap_name: string | null;
  signal_strength: number | null;
}

/**
 * Sessions as the API sees them: history from Postgres (written by the
 * outbox sink), live figures from the hotspot's actor, and operator actions
 * sent to the actor, which owns the session.
 */
export class SessionService {
  constructor(
    private readonly pool: Pool,
    private readonly redis: Redis,
    private readonly actors: SessionActors,
    private readonly hotspots: HotspotService,
    private readonly blocks: BlockService,
    private readonly now: () => number,
  ) {}

  async list(tenantId: string, status: string | undefined, limit: number, offset: number, cursor?: string): Promise<{
    data: PublicSession[]; total: number; limit: number; offset: number; next_cursor: string | null;
  }> {
    // After the cursor's row in the list's order (started_at DESC, id): keyset, outside the window so `total` counts the whole list.
    const after = cursor === undefined ? 'TRUE'
      : `(x.started_at < (SELECT started_at FROM sessions WHERE tenant_id = $1 AND id = $5)
          OR (x.started_at = (SELECT started_at FROM sessions WHERE tenant_id = $1 AND id = $5) AND x.id > $5))`;
    const args = [tenantId, limit, offset, status ?? null, ...(cursor === undefined ? [] : [decodeCursor(cursor)])];
    const { rows } = await this.pool.query<SessionRow & { total: number }>(
      `SELECT * FROM (SELECT *, count(*) OVER () AS total FROM sessions WHERE tenant_id = $1 AND ($4::text IS NULL OR status = $4)) x
       WHERE ${after} ORDER BY x.started_at DESC, x.id LIMIT $2 OFFSET $3`, args);
    let total = rows[0]?.total ?? 0;
    if (rows.length === 0 && (offset > 0 || cursor !== undefined)) {
      const c = await this.pool.query<{ n: number }>(
        'SELECT count(*) AS n FROM sessions WHERE tenant_id = $1 AND ($2::text IS NULL OR status = $2)', [tenantId, status ?? null]);
      total = c.rows[0]?.n ?? 0;
    }
    const data = await Promise.all(rows.map((r) => this.present(r)));
    const last = rows[rows.length - 1];
    return { data, total, limit, offset, next_cursor: rows.length === limit && last ? encodeCursor(last.id) : null };
  }

  async get(tenantId: string, id: string): Promise<PublicSession> {
    return this.present(await this.row(tenantId, id));
  }

  async disconnect(tenantId: string, id: string, by: string): Promise<{ id: string; status: 'disconnected'; disconnected_at: string; reason: 'admin_disconnect' }> {
    const r = await this.row(tenantId, id);
    const tz = await this.tz(r.hotspot_id);
    const out = await this.actors.request<{ ended: boolean; atMs: number }>({
      t: 'disconnect', tenant: tenantId, hs: r.hotspot_id, tz, sid: r.id, reason: 'admin_disconnect', by,
    });
    if (!out.ended) throw Errors.SESSION_NOT_ACTIVE();
    return { id: publicSessionId(r.id), status: 'disconnected', disconnected_at: new Date(out.atMs).toISOString(), reason: 'admin_disconnect' };
  }

  /**
   * Ends a live session for a reason of another area (a hotel guest checked
   * out: engine/pms/): the operator disconnect's path, through the hotspot's
   * actor, which sends the NAS its Disconnect-Request. No Postgres read: the
   * caller knows the hotspot, and a session just started may have no row yet.
   */
  async endLive(tenantId: string, hotspotId: string, sid: string, reason: 'pms_checkout', by: string): Promise<boolean> {
    const out = await this.actors.request<{ ended: boolean; atMs: number }>({
      t: 'disconnect', tenant: tenantId, hs: hotspotId, tz: await this.tz(hotspotId), sid, reason, by,
    });
    return out.ended;
  }

  async extend(tenantId: string, id: string, minutes: number, by: string): Promise<{ id: string; status: 'active'; expires_at: string; extended_minutes: number }> {
    const r = await this.row(tenantId, id);
    const out = await this.actors.request<{ untilMs: number } | null>({
      t: 'extend', tenant: tenantId, hs: r.hotspot_id, tz: await this.tz(r.hotspot_id), sid: r.id, minutes, by,
    });
    if (!out) throw Errors.SESSION_NOT_ACTIVE();
    return { id: publicSessionId(r.id), status: 'active', expires_at: new Date(out.untilMs).toISOString(), extended_minutes: minutes };
  }

  /**
   * Blocks the session's device for the chosen time and ends its live
   * sessions, this one and any at the tenant's other hotspots (the console's
   * "cancel and block": 24 hours, 7 days or permanent): the device is refused at sign-in by the block and,
   * having no session left, by every NAS.
   */
  async block(tenantId: string, id: string, duration: BlockDuration, by: string): Promise<{ mac: string; duration: BlockDuration; until: string | null; session_id: string }> {
    const r = await this.row(tenantId, id);
    const entry = await this.blocks.block(tenantId, r.mac, duration, by, `session ${publicSessionId(r.id)}`);
    await this.endLiveSessionsOf(tenantId, entry.mac, by);
    return { ...entry, session_id: publicSessionId(r.id) };
  }

  /** Ends every live session of a device at the tenant's hotspots, with reason `blocked`. */
  private async endLiveSessionsOf(tenantId: string, mac: string, by: string): Promise<void> {
    const hotspots = await this.hotspots.list(tenantId);
    const p = this.redis.pipeline();
    for (const h of hotspots) p.hget(keys.grant(tenantId, h.id, mac), GRANT.sid);
    const sids = ((await p.exec()) ?? []).map(([, sid]) => (typeof sid === 'string' ? sid : null));
    await Promise.all(hotspots.map((h, i) => {
      const sid = sids[i];
      return sid ? this.actors.request({ t: 'disconnect', tenant: tenantId, hs: h.id, tz: h.timezone, sid, reason: 'blocked', by }) : null;
    }));
  }

  /** Guests (devices) seen by the tenant, newest first; `mac` narrows to one. */
  async guests(tenantId: string, macInput: string | undefined): Promise<unknown[]> {
    let mac: string | null = null;
    if (macInput) {
      mac = normalizeMac(macInput);
      if (!mac) throw Errors.INVALID_MAC(macInput);
    }
    const { rows } = await this.pool.query<{ mac: string; first_seen: Date; last_seen: Date; sessions: number; active_sessions: number; bytes_in: number; bytes_out: number; last_username: string | null; last_auth_method: string }>(
      `SELECT s.mac, min(s.started_at) AS first_seen, max(s.started_at) AS last_seen, count(*)::int AS sessions,
              count(*) FILTER (WHERE s.status = 'active')::int AS active_sessions,
              sum(s.bytes_in)::bigint AS bytes_in, sum(s.bytes_out)::bigint AS bytes_out,
              (array_agg(s.username ORDER BY s.started_at DESC))[1] AS last_username,
              (array_agg(s.auth_method ORDER BY s.started_at DESC))[1] AS last_auth_method
       FROM sessions s WHERE s.tenant_id = $1 AND ($2::text IS NULL OR s.mac = $2)
       GROUP BY s.tenant_id, s.mac ORDER BY last_seen DESC LIMIT 200`, [tenantId, mac]);
    const blocked = await this.blocks.blockedAmong(tenantId, rows.map((r) => r.mac));
    return rows.map((r) => ({
      mac: r.mac, first_seen: r.first_seen.toISOString(), last_seen: r.last_seen.toISOString(), sessions: r.sessions,
      active_sessions: r.active_sessions, bytes_in: r.bytes_in, bytes_out: r.bytes_out, blocked: blocked.has(r.mac),
      last_username: maskUsername(r.last_username), last_auth_method: r.last_auth_method,
    }));
  }

  async history(tenantId: string, macInput: string, days: number): Promise<{ mac: string; days: number; data: PublicSession[] }> {
    const mac = normalizeMac(macInput);
    if (!mac) throw Errors.INVALID_MAC(macInput);
    const { rows } = await this.pool.query<SessionRow>(
      `SELECT * FROM sessions WHERE tenant_id = $1 AND mac = $2 AND started_at >= now() - make_interval(days => $3)
       ORDER BY started_at DESC LIMIT 1000`, [tenantId, mac, days]);
    return { mac, days, data: await Promise.all(rows.map((r) => this.present(r))) };
  }

  private async row(tenantId: string, id: string): Promise<SessionRow> {
    const sid = internalSessionId(id);
    if (!sid) throw Errors.SESSION_NOT_FOUND();
    const { rows } = await this.pool.query<SessionRow>('SELECT * FROM sessions WHERE id = $1 AND tenant_id = $2', [sid, tenantId]);
    if (rows[0]) return rows[0];
    // Started a moment ago: the sink has not copied it to Postgres yet; Redis has it.
    const ref = await this.redis.get(keys.sessionRef(tenantId, sid));
    if (!ref) throw Errors.SESSION_NOT_FOUND();
    const [hs, mac] = ref.split(' ') as [string, string];
    const h: GrantHash = await this.redis.hgetall(keys.grant(tenantId, hs, mac));
    // Ended a moment ago, its end not yet in Postgres either.
    if (h[GRANT.sid] !== sid) throw Errors.SESSION_NOT_ACTIVE();
    return {
      id: sid, tenant_id: tenantId, hotspot_id: hs, mac, ip: h[GRANT.ip] || null, username: h[GRANT.user] || null,
      auth_method: h[GRANT.method] ?? 'voucher', ssid: h[GRANT.ssid] || null, started_at: new Date(Number(h[GRANT.created])),
      ends_at: new Date(Number(h[GRANT.until])), ended_at: null, end_reason: null, status: 'active',
      bytes_in: Number(h[GRANT.bytesIn] ?? 0), bytes_out: Number(h[GRANT.bytesOut] ?? 0),
    };
  }

  private async present(r: SessionRow): Promise<PublicSession> {
    let live: LiveView | null = null;
    if (r.status === 'active') {
      live = await this.actors.request<LiveView | null>({ t: 'live', tenant: r.tenant_id, hs: r.hotspot_id, tz: await this.tz(r.hotspot_id), sid: r.id })
        .catch(() => null);
    }
    const end = r.ended_at?.getTime() ?? this.now();
    return {
      id: publicSessionId(r.id), mac: r.mac, ip: live?.ip || r.ip, username: maskUsername(r.username), auth_method: r.auth_method,
      started_at: r.started_at.toISOString(), duration_seconds: Math.max(0, Math.floor((end - r.started_at.getTime()) / 1000)),
      bytes_in: live?.bytesIn ?? r.bytes_in, bytes_out: live?.bytesOut ?? r.bytes_out, hotspot_id: r.hotspot_id,
      status: r.status, expires_at: new Date(live?.untilMs ?? r.ends_at.getTime()).toISOString(),
      ended_at: r.ended_at ? r.ended_at.toISOString() : null, end_reason: r.end_reason,
      ssid: live?.ssid || r.ssid, ap_name: live?.apName || null, signal_strength: live?.signal ?? null,
    };
  }

  private async tz(hotspotId: string): Promise<string> {
    return (await this.hotspots.ref(hotspotId))?.timezone ?? 'UTC';
  }
}
