import type { RedisClient as Redis } from '../../redis/redis-client.js';
import { Errors } from '../../errors.js';
import { activityKeys } from '../../events/activity-keys.js';
import { keys } from '../../redis/keys.js';
import type { SessionTerms } from '../method.js';
import type { OtpChannelName } from '../providers/types.js';
import type { OtpLimits } from '../sign-in-settings.js';
import { CODE_TTL_MS, MAX_TRIES } from './otp-code.js';

/** How long a request's delivery state stays readable by the status route. */
export const REQUEST_STATE_TTL_MS = 3_600_000;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** A claimed fallback is claimed again after this, should its process die before settling it. */
export const FALLBACK_LEASE_MS = 30_000;
/** Tenants stay in the pollers' index this long after their last scheduled fallback (> the longest time-out). */
export const FALLBACK_INDEX_MS = 3_600_000;

export type RequestStatus = 'sent' | 'delivered' | 'resent_by_sms' | 'not_delivered';

export interface NewCode {
  tenantId: string; hotspotId: string; identity: string; requestId: string; channel: OtpChannelName; hash: string;
  /**
   * The request's source address (a fact, never the body's `ip`) and the
   * device's MAC (a claim: counted per hotspot, beside the source's limit).
   */
  source: string; mac: string; prefix: string; limits: OtpLimits;
  /** When the delivery watch fires (msgapp only), ms; 0: none. */
  fallbackDueMs: number;
  fallbackSms: boolean;
  /** The guest's language, kept with the request so a fallback SMS sent later is in it too (default tr). */
  locale?: 'tr' | 'en';
}

export type RequestOutcome = { ok: true } | { ok: false; limit: string; retryAfterMs: number };
/** The auth methods a code signs in with, by the channel that carried it. */
export type OtpMethod = 'sms_otp' | 'msgapp_otp' | 'email';

/** A session's terms if the code turns out to have gone by `channel` (SessionTerms, resolved: no field left out). */
export interface ChannelTerms extends SessionTerms {
  channel: OtpChannelName;
  method: OtpMethod;
}

/** A presented code, with everything the start needs should it match. */
export interface CodeUse {
  tenantId: string; hotspotId: string; identity: string;
  /** Keyed hash of the presented code (OtpHasher). */
  hash: string;
  /** Canonical MAC. */
  mac: string; ip: string; ssid: string;
  /** The new session's id (fresh per call). */
  sessionId: string;
  /** The device type the browser claimed (SignInContext.device). */
  device?: string;
  now: number;
  /** One group per channel the code may have gone by (a phone code: SMS or messaging app). */
  terms: ChannelTerms[];
}

export type UseOutcome =
  | { kind: 'started'; sessionId: string; untilMs: number; replaced: string; method: OtpMethod; requestId: string }
  | { kind: 'invalid'; attemptsLeft: number }
  | { kind: 'expired' | 'locked' | 'blocked' }
  | { kind: 'not_loaded'; runId: string };

export interface RequestState { status: RequestStatus; channel: OtpChannelName; hotspotId: string; identity: string; fallbackSms: boolean; locale: 'tr' | 'en' }

/**
 * The OTP state in Redis, through its Lua scripts (engine/redis/lua/*otp*):
 * this class only builds keys and arguments and reads the answers.
 */
export class OtpStore {
  constructor(private readonly redis: Redis) {}

  async request(c: NewCode, now: number): Promise<RequestOutcome> {
    const t = c.tenantId;
    const l = c.limits;
    if (c.fallbackDueMs > 0) await this.redis.zadd(keys.otpFallbackTenants(), c.fallbackDueMs, t);
    const a = await this.redis.requestOtpV1(
      keys.otpCode(t, c.hotspotId, c.identity), keys.otpRequest(t, c.requestId), keys.otpLimit(t, 'user', c.identity),
      keys.otpLimit(t, 'ip', c.source), keys.otpLimit(t, 'mac', `${c.hotspotId}/${c.mac}`), keys.otpLimit(t, 'prefix', c.prefix), keys.otpFallbacks(t),
      now, c.hash, c.requestId, c.channel, c.hotspotId, c.identity, CODE_TTL_MS, REQUEST_STATE_TTL_MS,
      l.cooldown_sec * 1000, l.per_identity_daily, DAY_MS,
      c.source ? l.per_ip_hourly : 0, l.per_mac_hourly, c.prefix ? l.per_prefix_hourly : 0, HOUR_MS,
      c.fallbackDueMs, c.fallbackSms ? 1 : 0, c.locale ?? 'tr');
    if (a[0] === 'ok') return { ok: true };
    if (a[0] === 'limited') return { ok: false, limit: String(a[1]), retryAfterMs: Number(a[2]) };
    throw Errors.UNEXPECTED_SCRIPT_ANSWER('request-otp', String(a[0]));
  }

  /**
   * Checks a presented code and, on a match, consumes it and starts the
   * device's session in the same script (use-otp-14.lua): the code is used
   * up if and only if the session starts.
   */
  async use(u: CodeUse): Promise<UseOutcome> {
    const t = u.tenantId;
    const terms: (string | number)[] = [];
    for (const g of u.terms) {
      terms.push(g.channel, g.method, g.minutes, g.idleSec, g.downKbps, g.upKbps, g.quotaMb, g.sessionQuotaMb, g.profile);
    }
    const a = await this.redis.useOtpV3(keys.otpCode(t, u.hotspotId, u.identity), keys.grant(t, u.hotspotId, u.mac), keys.outbox(t),
      keys.loaded(t), keys.live(t, u.hotspotId), keys.sessionRef(t, u.sessionId), keys.block(t, u.mac), ...activityKeys(t, u.now), keys.knownDevices(t),
      u.now, u.hash, MAX_TRIES, u.mac, u.hotspotId, u.ip, u.ssid, u.sessionId, u.identity, u.device ?? '', ...terms);
    switch (a[0]) {
      case 'ok':
        return { kind: 'started', sessionId: String(a[1]), untilMs: Number(a[2]), replaced: String(a[3] ?? ''), method: String(a[4]) as OtpMethod,
          requestId: String(a[5] ?? '') };
      case 'invalid': return { kind: 'invalid', attemptsLeft: Number(a[1]) };
      case 'not_loaded': return { kind: 'not_loaded', runId: String(a[1]) };
      case 'expired': case 'locked': case 'blocked': return { kind: a[0] };
      default: throw Errors.UNEXPECTED_SCRIPT_ANSWER('use-otp', String(a[0]));
    }
  }

  async state(tenantId: string, requestId: string): Promise<RequestState | null> {
    const v = await this.redis.hmget(keys.otpRequest(tenantId, requestId), 'status', 'ch', 'hs', 'user', 'fb', 'lang');
    if (!v[0]) return null;
    return { status: v[0] as RequestStatus, channel: v[1] as OtpChannelName, hotspotId: v[2] ?? '', identity: v[3] ?? '', fallbackSms: v[4] === '1',
      locale: v[5] === 'en' ? 'en' : 'tr' };
  }

  /** True when the request went from sent to delivered (its fallback cancelled). */
  async delivered(tenantId: string, requestId: string, channel: OtpChannelName): Promise<boolean> {
    return (await this.redis.markOtpDeliveredV1(keys.otpRequest(tenantId, requestId), keys.otpFallbacks(tenantId), requestId, channel)) === 'delivered';
  }

  /**
   * Moves a request out of its wait: `resent` re-issues the code (hash) for SMS, `not_delivered` kills it.
   * False when the request had moved on already (delivered, used, replaced).
   */
  async settle(tenantId: string, st: Pick<RequestState, 'hotspotId' | 'identity'>, requestId: string,
    outcome: 'resent' | 'not_delivered', hash: string, now: number, expect: 'sent' | 'resent_by_sms'): Promise<boolean> {
    const a = await this.redis.settleOtpFallbackV1(keys.otpRequest(tenantId, requestId), keys.otpFallbacks(tenantId),
      keys.otpCode(tenantId, st.hotspotId, st.identity), requestId, outcome, hash, now, CODE_TTL_MS, expect);
    return a[0] === 'ok';
  }

  /** Tenants that may have fallbacks waiting (scheduled one within FALLBACK_INDEX_MS). */
  async fallbackTenants(now: number): Promise<string[]> {
    const index = keys.otpFallbackTenants();
    await this.redis.zremrangebyscore(index, '-inf', now - FALLBACK_INDEX_MS);
    return this.redis.zrangebyscore(index, now - FALLBACK_INDEX_MS, '+inf');
  }

  claimDue(tenantId: string, now: number, limit: number): Promise<string[]> {
    return this.redis.claimOtpFallbacksV1(keys.otpFallbacks(tenantId), now, FALLBACK_LEASE_MS, limit);
  }
}
