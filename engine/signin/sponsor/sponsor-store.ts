import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient as Redis } from '../../redis/redis-client.js';
import { Errors } from '../../errors.js';
import { activityKeys } from '../../events/activity-keys.js';
import { keys } from '../../redis/keys.js';

/** How long a request (and its link key) is kept after it was asked, for the console's list: a day. */
export const SPONSOR_KEEP_MS = 86_400_000;
/** The window of the per-hour request limits. */
const HOUR_MS = 3_600_000;

/** A request's state as stored; `expired` is derived (pending past its link's life). */
export type StoredStatus = 'pending' | 'approved' | 'rejected';
export type SponsorState = StoredStatus | 'expired';

/** One sponsor request as the store holds it. */
export interface SponsorRequest {
  id: string;
  tenantId: string;
  status: SponsorState;
  hotspotId: string;
  mac: string;
  ip: string;
  ssid: string;
  guest: string;
  sponsor: string;
  /** The gateway's parameters (query string), for the hand-back; '' none. */
  gateway: string;
  lang: 'tr' | 'en';
  /** ms */
  at: number;
  /** When the link stops working, ms. */
  exp: number;
  decidedAt: number | null;
  minutes: number | null;
  sessionId: string | null;
  untilMs: number | null;
  /** SHA-256 (hex) of the link's token. */
  tokenHash: string;
}

export interface NewRequest {
  tenantId: string; requestId: string; tokenHash: string; hotspotId: string; mac: string; ip: string; ssid: string;
  guest: string; sponsor: string; gateway: string; lang: 'tr' | 'en'; source: string;
  linkTtlMs: number; limits: { perIp: number; perMac: number; perSponsor: number };
}

// Request ids and link tokens name their tenant, so a status poll or a link finds the hash-tagged keys with nothing else.
const REQUEST_ID = /^spr_[0-9a-z]{16}\.(tn_[0-9a-z]+)$/;
const TOKEN = /^[A-Za-z0-9_-]{43}\.(tn_[0-9a-z]+)$/;

/** The tenant a request id belongs to, or null when it is not one. */
export function tenantOfRequest(id: string): string | null {
  return REQUEST_ID.exec(id)?.[1] ?? null;
}

/** A new link token (256 random bits, with its tenant) and the hash the store keeps instead of it. */
export function newLinkToken(tenantId: string): { token: string; hash: string } {
  const token = `${randomBytes(32).toString('base64url')}.${tenantId}`;
  return { token, hash: hashToken(token) };
}

/** The tenant and stored hash of a presented token, or null when it cannot be one. */
export function parseLinkToken(token: string): { tenantId: string; hash: string } | null {
  const m = TOKEN.exec(token);
  return m ? { tenantId: m[1]!, hash: hashToken(token) } : null;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

const num = (v: string | undefined): number | null => (v === undefined || v === '' ? null : Number(v));

/**
 * Sponsor requests in Redis: filed with their limits and the jit.requested
 * event (request-sponsor-7.lua); decided through approve-sponsor-15.lua (with
 * the session start, via SponsorMethod) or reject-sponsor-3.lua. The
 * status field is the link's single use: it leaves `pending` only in one of
 * those two scripts.
 */
export class SponsorStore {
  constructor(private readonly redis: Redis) {}

  /** Files a request; `{limited}` names the limit reached and the wait. */
  async file(r: NewRequest, now: number): Promise<{ ok: true } | { ok: false; limit: string; retryAfterMs: number }> {
    const t = r.tenantId;
    const a = await this.redis.requestSponsorV1(
      keys.sponsorRequest(t, r.requestId), keys.sponsorLink(t, r.tokenHash), keys.sponsorRecent(t),
      keys.sponsorLimit(t, 'ip', r.source || '-'), keys.sponsorLimit(t, 'mac', `${r.hotspotId}/${r.mac}`), keys.sponsorLimit(t, 'sponsor', r.sponsor),
      keys.events(t), now, r.requestId, r.tokenHash, r.linkTtlMs, SPONSOR_KEEP_MS,
      // No source address (never on the portal surface): that limit cannot key on anything, so it is off.
      r.source ? r.limits.perIp : 0, r.limits.perMac, r.limits.perSponsor, HOUR_MS,
      r.hotspotId, r.mac, r.ip, r.ssid, r.guest, r.sponsor, r.gateway, r.lang);
    if (String(a[0]) === 'ok') return { ok: true };
    return { ok: false, limit: String(a[1]), retryAfterMs: Number(a[2]) };
  }

  /** Withdraws a request whose e-mail could not be sent: nobody can answer it. */
  async withdraw(tenantId: string, requestId: string, tokenHash: string, now: number): Promise<void> {
    await this.redis.withdrawSponsorV1(keys.sponsorRequest(tenantId, requestId), keys.sponsorLink(tenantId, tokenHash),
      keys.sponsorRecent(tenantId), keys.events(tenantId), now, requestId);
  }

  /** A request by id, with `expired` derived; null when unknown (or another tenant's id). */
  async get(tenantId: string, requestId: string, now: number): Promise<SponsorRequest | null> {
    return this.parse(tenantId, requestId, await this.redis.hgetall(keys.sponsorRequest(tenantId, requestId)), now);
  }

  /** The request a link stands for, or null. */
  async byLink(tenantId: string, tokenHash: string, now: number): Promise<SponsorRequest | null> {
    const id = await this.redis.get(keys.sponsorLink(tenantId, tokenHash));
    if (!id) return null;
    const r = await this.get(tenantId, id, now);
    return r && r.tokenHash === tokenHash ? r : null;
  }

  /** The tenant's requests of the last day, newest first (at most `limit`). */
  async recent(tenantId: string, now: number, limit: number): Promise<SponsorRequest[]> {
    const ids = await this.redis.zrevrangebyscore(keys.sponsorRecent(tenantId), '+inf', now - SPONSOR_KEEP_MS, 'LIMIT', 0, limit);
    if (ids.length === 0) return [];
    const p = this.redis.pipeline();
    for (const id of ids) p.hgetall(keys.sponsorRequest(tenantId, id));
    const rows = (await p.exec()) ?? [];
    const out: SponsorRequest[] = [];
    ids.forEach((id, i) => {
      const r = this.parse(tenantId, id, (rows[i]?.[1] ?? {}) as Record<string, string>, now);
      if (r) out.push(r);
    });
    return out;
  }

  /**
   * The approval: the link used up and the session started in one script.
   * Answers the script's reply as it came (SponsorMethod maps it).
   */
  approve(x: {
    tenantId: string; requestId: string; tokenHash: string; mac: string; hotspotId: string; ip: string; ssid: string; sessionId: string;
    minutes: number; idleSec: number; user: string; downKbps: number; upKbps: number; quotaMb: number; sessionQuotaMb: number; profile: string;
  }, now: number): Promise<unknown[]> {
    const t = x.tenantId;
    return this.redis.approveSponsorV2(keys.sponsorLink(t, x.tokenHash), keys.sponsorRequest(t, x.requestId),
      keys.grant(t, x.hotspotId, x.mac), keys.outbox(t), keys.loaded(t), keys.live(t, x.hotspotId), keys.sessionRef(t, x.sessionId), keys.block(t, x.mac),
      ...activityKeys(t, now), keys.knownDevices(t), now, x.requestId, x.tokenHash, x.mac, x.hotspotId, x.ip, x.ssid, x.sessionId,
      x.minutes, x.idleSec, x.user, x.downKbps, x.upKbps, x.quotaMb, x.sessionQuotaMb, x.profile);
  }

  /** The rejection: the link used up, the request rejected, in one script. */
  async reject(tenantId: string, requestId: string, tokenHash: string, now: number): Promise<'ok' | 'unknown' | 'used' | 'expired'> {
    const a = await this.redis.rejectSponsorV1(keys.sponsorLink(tenantId, tokenHash), keys.sponsorRequest(tenantId, requestId), keys.events(tenantId),
      now, requestId, tokenHash, Errors.SPONSOR_REJECTED().code);
    return String(a[0]) as 'ok' | 'unknown' | 'used' | 'expired';
  }

  private parse(tenantId: string, id: string, h: Record<string, string>, now: number): SponsorRequest | null {
    if (!h.status) return null;
    const exp = Number(h.exp);
    const stored = h.status as StoredStatus;
    return {
      id, tenantId, status: stored === 'pending' && exp <= now ? 'expired' : stored,
      hotspotId: h.hs ?? '', mac: h.mac ?? '', ip: h.ip ?? '', ssid: h.ssid ?? '', guest: h.guest ?? '', sponsor: h.sponsor ?? '',
      gateway: h.gw ?? '', lang: h.lang === 'en' ? 'en' : 'tr', at: Number(h.at), exp,
      decidedAt: num(h.decided), minutes: num(h.minutes), sessionId: h.sid || null, untilMs: num(h.until), tokenHash: h.th ?? '',
    };
  }
}
