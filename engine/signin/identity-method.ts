import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import type { HotspotRef } from '../hotspots/hotspot-service.js';
import { activityKeys } from '../events/activity-keys.js';
import { newId } from '../ids.js';
import { keys } from '../redis/keys.js';
import type { AuthMethod, SessionTerms, SignInContext, SignInMethod, StartedSession, StartOutcome } from './method.js';

/** Methods whose own check is a step of their own before the start (a sponsor's approval, a PMS guest record). */
export type PreCheckedMethod = Exclude<AuthMethod, 'voucher'>;

/** Who the earlier step let in. */
export interface CheckedIdentity {
  method: PreCheckedMethod;
  /** The session's user name: an E.164 phone number, an e-mail address. */
  username: string;
}

/**
 * The answer of a pre-checked sign-in: the voucher verify success body
 * `{status, session_id, expires_at, uses_left, redirect_url}`, `uses_left`
 * null as for an unlimited voucher: no voucher was used.
 */
export interface Started {
  status: 'authorized';
  session_id: string;
  expires_at: string;
  uses_left: null;
  redirect_url: string | null;
}

/**
 * A session's terms for a method at a hotspot (its settings for that method).
 * Fields left out take the hotspot's session length and the service defaults.
 */
export interface TermsSource {
  termsFor(hotspot: HotspotRef, method: PreCheckedMethod): Promise<Partial<SessionTerms>>;
}

/** No per-method settings: the hotspot's session length, no bandwidth or quota limits. */
export const HOTSPOT_DEFAULT_TERMS: TermsSource = { termsFor: () => Promise.resolve({}) };

/**
 * The start of a guest whose method has checked them already: only the
 * block check and the method-neutral session start (start-session-13.lua),
 * with the session's terms from the hotspot's settings for that method.
 * The hotel-room sign-in starts through it (PmsMethod holds one, method
 * `pms`, run by SignInService.via). Sponsor approval does not: its link is
 * used up and its session started by one script, approve-sponsor-15.lua
 * (sponsor/sponsor-method.ts); nor do OTP codes: use-otp-14.lua
 * (otp/otp-code-method.ts). Both share resolveTerms and startedAnswer from here.
 */
export class IdentityMethod implements SignInMethod<CheckedIdentity, StartedSession, Started> {
  /** One instance per method, so the pipeline records each decision under its own method. */
  readonly name: PreCheckedMethod;

  constructor(
    private readonly redis: Redis,
    private readonly terms: TermsSource,
    private readonly defaults: { sessionMinutes: number; idleSec: number },
    method: PreCheckedMethod,
  ) {
    this.name = method;
  }

  async start(ctx: SignInContext, id: CheckedIdentity): Promise<StartOutcome> {
    const t = ctx.tenantId;
    const hs = ctx.hotspot.id;
    const x = resolveTerms(await this.terms.termsFor(ctx.hotspot, this.name), ctx.hotspot, this.defaults);
    let a: unknown[];
    try {
      const sid = newId('sess_');
      a = await this.redis.startSessionV3(keys.grant(t, hs, ctx.mac), keys.outbox(t), keys.loaded(t), keys.live(t, hs),
        keys.sessionRef(t, sid), keys.block(t, ctx.mac), ...activityKeys(t, ctx.now), keys.knownDevices(t), ctx.now, ctx.mac, hs, ctx.ip, ctx.ssid, sid,
        x.minutes, x.idleSec, this.name, id.username, x.downKbps, x.upKbps, x.quotaMb, x.sessionQuotaMb, x.profile, ctx.device);
    } catch (err) {
      throw Errors.SERVICE_UNAVAILABLE('Session store').withCause(err);
    }
    const answer = String(a[0]);
    switch (answer) {
      case 'ok':
        return { kind: 'started', session: { sessionId: String(a[1]), untilMs: Number(a[2]), reused: false, replaced: String(a[3] ?? '') } };
      case 'not_loaded': return { kind: 'not_loaded', runId: String(a[1]) };
      case 'blocked': return { kind: 'refused', answer, error: Errors.DEVICE_BLOCKED() };
      default: throw Errors.UNEXPECTED_SCRIPT_ANSWER('start-session', answer);
    }
  }

  answer(ctx: SignInContext, s: StartedSession): Started {
    return startedAnswer(ctx, s);
  }
}

/**
 * A method's terms with what it leaves out filled in: the hotspot's session
 * length, else the service default; the service's idle time-out; no
 * bandwidth or quota limits. Shared by every pre-checked method's start.
 */
export function resolveTerms(x: Partial<SessionTerms>, hotspot: HotspotRef, defaults: { sessionMinutes: number; idleSec: number }): SessionTerms {
  return {
    minutes: x.minutes || hotspot.sessionMinutes || defaults.sessionMinutes, idleSec: x.idleSec || defaults.idleSec,
    downKbps: x.downKbps ?? 0, upKbps: x.upKbps ?? 0, quotaMb: x.quotaMb ?? 0, sessionQuotaMb: x.sessionQuotaMb ?? 0, profile: x.profile ?? '',
  };
}

/** The answer of a pre-checked sign-in (Started). */
export function startedAnswer(ctx: SignInContext, s: StartedSession): Started {
  return { status: 'authorized', session_id: s.sessionId, expires_at: new Date(s.untilMs).toISOString(), uses_left: null, redirect_url: ctx.hotspot.redirectUrl };
}
