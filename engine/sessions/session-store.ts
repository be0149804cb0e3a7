import { randomBytes } from 'node:crypto';
import type { RedisClient as Redis } from '../redis/redis-client.js';
import { activityKeys } from '../events/activity-keys.js';
import { AccountBatcher } from './account-batcher.js';
import { ActivityTally } from '../events/activity-tally.js';
import { keys } from '../redis/keys.js';
import { GRANT as G, type GrantHash } from '../redis/records.js';

/** A live session as an actor holds it: kept small, about 40 bytes of fields plus its strings. */
export interface LiveSession {
  sid: string;
  mac: string;
  untilMs: number;
  lastMs: number;
  startedMs: number;
  idleSec: number;
  downKbps: number;
  upKbps: number;
  /** Daily quota in MB, 0: none. */
  quotaMb: number;
  /** Session quota in MB (download and upload together), 0: none. */
  sessionQuotaMb: number;
  userName: string;
  ip: string;
  ssid: string;
  /** The SSIDs the session may use, newline separated ('' any): GRANT.ssids. */
  ssids: string;
  /**
   * NAS that last spoke for this session, the User-Name it used (the code for
   * PAP, often the bare MAC for MAC authentication: what a Disconnect or CoA
   * must carry for the NAS to match it) and its Acct-Session-Id.
   */
  nasId: string;
  nasUser: string;
  acctId: string;
  /**
   * The totals last recorded in Redis for `acctId` (GRANT field `a:<acctId>`), -1 unknown: an
   * Interim-Update bringing the same totals and nothing else new needs no script (HotspotActor.acct).
   */
  acctIn: number;
  acctOut: number;
  bytesIn: number;
  bytesOut: number;
  apName: string;
  signal: number | null;
  /**
   * The device's daily usage in bytes as last read from Redis (accounting
   * returns it), for the local day `dailyDay` at `dailyAtMs`: Access-Requests
   * read it here instead of asking Redis each time.
   */
  daily: number;
  dailyDay: string;
  dailyAtMs: number;
  /** Timer-wheel slot (owned by the wheel). */
  slot: number;
}

export type EndReason =
  | 'session_timeout' | 'idle_timeout' | 'daily_quota' | 'session_quota'
  | 'user_request' | 'admin_disconnect' | 'blocked' | 'nas_reboot' | 'replaced' | 'lost_carrier' | 'pms_checkout';

export type AccountOutcome =
  | { kind: 'none' }
  | {
    kind: 'ok' | 'session_quota' | 'daily_quota'; sid: string; bytesIn: number; bytesOut: number; daily: number; lastMs: number;
    /** The request's Acct-Session-Id is the session's current one (not that of a NAS the device has left). */
    current: boolean;
  };

/** A live session from its Redis hash (the grant, fields: engine/redis/records.ts), or null when the hash is not a session. */
export function sessionFromHash(h: GrantHash): LiveSession | null {
  const sid = h[G.sid];
  const mac = h[G.mac];
  if (!sid || !mac) return null;
  const signal = h[G.signal];
  const acctId = h[G.acctId] ?? '';
  const totals = acctId ? h[G.acctTotalsPrefix + acctId] : undefined;
  const sp = totals ? totals.indexOf(' ') : -1;
  return {
    sid, mac,
    untilMs: Number(h[G.until]), lastMs: Number(h[G.last] ?? h[G.created]), startedMs: Number(h[G.created]),
    idleSec: Number(h[G.idleSec] ?? 0), downKbps: Number(h[G.downKbps] ?? 0), upKbps: Number(h[G.upKbps] ?? 0),
    quotaMb: Number(h[G.quotaMb] ?? 0), sessionQuotaMb: Number(h[G.sessionQuotaMb] ?? 0),
    userName: h[G.user] ?? '', ip: h[G.ip] ?? '', ssid: h[G.ssid] ?? '', ssids: h[G.ssids] ?? '', nasId: h[G.nasId] ?? '', nasUser: h[G.nasUser] ?? '',
    acctId, acctIn: sp > 0 ? Number(totals!.slice(0, sp)) : -1, acctOut: sp > 0 ? Number(totals!.slice(sp + 1)) : -1, bytesIn: Number(h[G.bytesIn] ?? 0), bytesOut: Number(h[G.bytesOut] ?? 0), apName: h[G.apName] ?? '',
    signal: signal ? Number(signal) : null, daily: 0, dailyDay: '', dailyAtMs: 0, slot: 0,
  };
}

/**
 * The Redis side of live sessions, used by the actor threads. Redis is the
 * durable truth (AOF); an actor's memory is a copy it can always rebuild.
 */
export class SessionStore {
  /** Accounting's byte counts for the dashboard, written once a second (made on the first accounting). */
  private tally: ActivityTally | undefined;
  /** Accounting reports of one event-loop turn go to Redis in one call per tenant. */
  private readonly batcher: AccountBatcher;

  constructor(private readonly redis: Redis) {
    this.batcher = new AccountBatcher(redis);
  }

  /** Writes the accounting byte counts summed so far and stops their timer. */
  async close(): Promise<void> {
    await this.tally?.close();
    this.tally = undefined;
  }

  /** Every live session of a hotspot, for an actor starting (or restarting after a crash). */
  async loadLive(tenant: string, hs: string): Promise<LiveSession[]> {
    const out: LiveSession[] = [];
    const sids = await this.redis.zrange(keys.live(tenant, hs), 0, -1);
    for (let i = 0; i < sids.length; i += 500) {
      const chunk = sids.slice(i, i + 500);
      const refs = await this.redis.mget(chunk.map((sid) => keys.sessionRef(tenant, sid)));
      const macs = refs.map((r) => (r ? r.slice(r.indexOf(' ') + 1) : ''));
      const p = this.redis.pipeline();
      for (const mac of macs) p.hgetall(keys.grant(tenant, hs, mac || '-'));
      const hashes = (await p.exec()) ?? [];
      hashes.forEach(([, h], j) => {
        const s = sessionFromHash((h ?? {}) as GrantHash);
        if (s && s.sid === chunk[j]) out.push(s);
      });
    }
    return out;
  }

  /** The live session of a device at a hotspot, if any. */
  async byMac(tenant: string, hs: string, mac: string): Promise<LiveSession | null> {
    const h = await this.redis.hgetall(keys.grant(tenant, hs, mac));
    return sessionFromHash(h);
  }

  /** The device's session if it is live: its grant, while its id is in the live set (one round trip). */
  async liveByMac(tenant: string, hs: string, mac: string): Promise<LiveSession | null> {
    const flat = await this.redis.liveSessionV1(keys.grant(tenant, hs, mac), keys.live(tenant, hs));
    if (flat.length === 0) return null;
    const h: Record<string, string> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
    return sessionFromHash(h);
  }

  async dailyUsed(tenant: string, mac: string, day: string): Promise<number> {
    return Number((await this.redis.get(keys.dailyUsage(tenant, mac, day))) ?? 0);
  }

  /** Sessions whose end time has passed, with that time (a safety net for sessions this actor never saw). */
  async overdue(tenant: string, hs: string, nowMs: number, limit = 500): Promise<{ sid: string; untilMs: number }[]> {
    const flat = await this.redis.zrangebyscore(keys.live(tenant, hs), '-inf', nowMs, 'WITHSCORES', 'LIMIT', 0, limit);
    const out: { sid: string; untilMs: number }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push({ sid: flat[i]!, untilMs: Number(flat[i + 1]) });
    return out;
  }

  async macOf(tenant: string, sid: string): Promise<string | null> {
    // "<hotspot> <mac>", and once ended " <operation id>" after them (end-session-10.lua).
    const ref = await this.redis.get(keys.sessionRef(tenant, sid));
    return ref?.split(' ')[1] ?? null;
  }

  /**
   * The NAS now speaking for a session, and the User-Name it uses for it;
   * written only while the device's grant still holds that session.
   */
  async rememberNas(tenant: string, hs: string, mac: string, sid: string, nasId: string, nasUser: string, ssid = ''): Promise<void> {
    await this.redis.rememberNasV2(keys.grant(tenant, hs, mac), keys.liveBySsid(tenant), sid, nasId, nasUser, ssid);
  }

  /**
   * Records one accounting report (account-session-3.lua's rules), batched with the others of this
   * event-loop turn (AccountBatcher); resolves once it is in Redis.
   */
  async account(tenant: string, hs: string, mac: string, day: string, nowMs: number, acctId: string,
    inOctets: number, outOctets: number, ip: string, ap: string, signal: string, status: 'start' | 'interim' | 'stop'): Promise<AccountOutcome> {
    const r = await this.batcher.submit({ tenant, hs, mac, day, nowMs, acctId, inOctets, outOctets, ip, ap, signal, status });
    const kind = String(r[0]);
    if (kind === 'none') return { kind: 'none' };
    (this.tally ??= new ActivityTally(this.redis)).add(tenant, hs, nowMs, Number(r[7]), Number(r[8]));
    return {
      kind: kind as 'ok', sid: String(r[1]), bytesIn: Number(r[2]), bytesOut: Number(r[3]), daily: Number(r[4]),
      lastMs: Number(r[5]), current: r[6] === 1,
    };
  }

  /**
   * A session ended by another script (a replacing sign-in): its id keeps
   * pointing at the device for an hour, as end-session leaves it, so an
   * operator acting on it is told it ended rather than that it never was.
   */
  async keepRefAfterEnd(tenant: string, sid: string): Promise<void> {
    await this.redis.pexpire(keys.sessionRef(tenant, sid), 3_600_000);
  }

  /**
   * Ends a session once; false when it had already ended. The call carries an operation id, so a resend of it
   * (a connection dropped before the answer) is still told it ended the session (end-session-10.lua).
   */
  async end(tenant: string, hs: string, mac: string, sid: string, nowMs: number, reason: EndReason, by: string): Promise<boolean> {
    const r = await this.redis.endSessionV3(keys.grant(tenant, hs, mac), keys.live(tenant, hs), keys.sessionRef(tenant, sid),
      keys.outbox(tenant), ...activityKeys(tenant, nowMs), sid, nowMs, reason, hs, mac, by, operationId());
    return r[0] === 'ended';
  }

  /**
   * New end time in ms, or null when the session is not live. The call carries an operation id, so a
   * resend of it (a connection dropped before the answer) adds the minutes once (extend-session-4.lua).
   */
  async extend(tenant: string, hs: string, mac: string, sid: string, nowMs: number, minutes: number, by: string): Promise<number | null> {
    const r = await this.redis.extendSessionV3(keys.grant(tenant, hs, mac), keys.live(tenant, hs), keys.outbox(tenant), keys.events(tenant), sid, nowMs, minutes, by, operationId());
    return r[0] === 'extended' ? Number(r[1]) : null;
  }
}

/** A script call's operation id: what makes the same call sent again harmless. */
function operationId(): string {
  return randomBytes(9).toString('base64url');
}
