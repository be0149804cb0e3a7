import type { Redis } from 'ioredis';
import { Errors } from '../../errors.js';
import { keys } from '../../redis/keys.js';
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
  ip: string; mac: string; prefix: string; limits: OtpLimits;
  /** When the delivery watch fires (msgapp only), ms; 0: none. */
  fallbackDueMs: number;
  fallbackSms: boolean;
  /** The guest's language, kept with the request so a fallback SMS sent later is in it too (default tr). */
  locale?: 'tr' | 'en';
}

export type RequestOutcome = { ok: true } | { ok: false; limit: string; retryAfterMs: number };
export type VerifyOutcome =
  | { ok: true; channel: OtpChannelName; requestId: string }
  | { ok: false; result: 'expired' | 'locked' }
  | { ok: false; result: 'invalid'; attemptsLeft: number };

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
      keys.otpLimit(t, 'ip', c.ip), keys.otpLimit(t, 'mac', c.mac), keys.otpLimit(t, 'prefix', c.prefix), keys.otpFallbacks(t),
      now, c.hash, c.requestId, c.channel, c.hotspotId, c.identity, CODE_TTL_MS, REQUEST_STATE_TTL_MS,
      l.cooldown_sec * 1000, l.per_identity_daily, DAY_MS,
      c.ip ? l.per_ip_hourly : 0, l.per_mac_hourly, c.prefix ? l.per_prefix_hourly : 0, HOUR_MS,
      c.fallbackDueMs, c.fallbackSms ? 1 : 0, c.locale ?? 'tr');
    if (a[0] === 'ok') return { ok: true };
    if (a[0] === 'limited') return { ok: false, limit: String(a[1]), retryAfterMs: Number(a[2]) };
    throw Errors.UNEXPECTED_SCRIPT_ANSWER('request-otp', String(a[0]));
  }

  async verify(tenantId: string, hotspotId: string, identity: string, hash: string, now: number): Promise<VerifyOutcome> {
    const a = await this.redis.verifyOtpV1(keys.otpCode(tenantId, hotspotId, identity), now, hash, MAX_TRIES);
    switch (a[0]) {
      case 'ok': return { ok: true, channel: String(a[1]) as OtpChannelName, requestId: String(a[2]) };
      case 'invalid': return { ok: false, result: 'invalid', attemptsLeft: Number(a[1]) };
      case 'expired': case 'locked': return { ok: false, result: a[0] };
      default: throw Errors.UNEXPECTED_SCRIPT_ANSWER('verify-otp', String(a[0]));
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
