import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors, type AppError } from '../errors.js';
import { activityKeys } from '../events/activity-keys.js';
import { newId } from '../ids.js';
import { labelValues, type Metrics } from '../metrics.js';
import { keys } from '../redis/keys.js';
import type { SignInContext, SignInMethod, SignInRequest, StartedSession, StartOutcome } from './method.js';
import type { GuessingLimits } from './sign-in-settings.js';

/** A tenant's guessing limits (SignInSettingsService, through its short cache). */
export interface GuessingLimitsSource {
  guessing(tenantId: string): Promise<GuessingLimits>;
}

/**
 * The window the refusals per hotspot are counted in (KEYS[17] of
 * use-voucher-18.lua), read by the signin_guessing detector. Fixed, so every
 * process and the detector name the same buckets whatever the tenants' limits.
 */
export const GUESS_REFUSAL_WINDOW_MS = 600_000;

/** A voucher sign-in as the portal and RADIUS PAP present it. */
export interface VerifyRequest extends SignInRequest {
  code: string;
}

/** The portal's success answer: `{status: authorized, session_id, expires_at, uses_left, redirect_url}`. */
export interface Authorized {
  status: 'authorized';
  session_id: string;
  expires_at: string;
  uses_left: number | null;
  redirect_url: string | null;
}

interface VoucherSession extends StartedSession {
  /** null: unlimited. */
  usesLeft: number | null;
}

/**
 * The voucher way in. The guessing limits, the checks (expiry, window, SSID,
 * remaining uses), the use counter and the session start are one Lua script
 * (use-voucher-18.lua), so a voucher is never used more than max_uses, no
 * guest gets in without the start record queued, and a device or address past
 * its guessing limit spends nothing; this class only prepares its arguments
 * and maps its answer onto the spec's bodies.
 */
export class VoucherMethod implements SignInMethod<{ code: string }, VoucherSession, Authorized> {
  readonly name = 'voucher' as const;
  static readonly METRIC = 'voucher_verify_total';
  /** Attempts a guessing limit refused; labels bounded: limit device|address, via portal|radius. */
  static readonly LIMITED_METRIC = 'voucher_guess_limited_total';

  constructor(
    private readonly redis: Redis,
    private readonly metrics: Metrics,
    private readonly defaults: { sessionMinutes: number; idleSec: number },
    private readonly limits: GuessingLimitsSource,
  ) {
    metrics.counter(VoucherMethod.METRIC, 'Portal voucher verifications by outcome', 'result');
    metrics.counter(VoucherMethod.LIMITED_METRIC, 'Voucher attempts refused by a guessing limit (too_many_attempts)', 'limit,via');
  }

  async start(ctx: SignInContext, input: { code: string }): Promise<StartOutcome<VoucherSession>> {
    const t = ctx.tenantId;
    const hs = ctx.hotspot.id;
    const minutes = ctx.hotspot.sessionMinutes ?? this.defaults.sessionMinutes;
    let a: unknown[];
    try {
      const g = await this.limits.guessing(t);
      const sid = newId('sess_');
      // No source address (RADIUS: the packet comes from the NAS): no per-address limit; its key is never touched.
      const perAddress = ctx.source ? g.per_address : 0;
      a = await this.redis.useVoucherV9(
        keys.voucher(t, input.code), keys.voucherDevices(t, input.code), keys.grant(t, hs, ctx.mac), keys.outbox(t), keys.loaded(t),
        keys.live(t, hs), keys.sessionRef(t, sid), keys.block(t, ctx.mac), ...activityKeys(t, ctx.now),
        keys.guessesByDevice(t, hs, ctx.mac), keys.guessesByAddress(t, ctx.source), keys.guessRefusals(t, Math.floor(ctx.now / GUESS_REFUSAL_WINDOW_MS)),
        keys.knownDevices(t),
        ctx.now, ctx.mac, hs, ctx.ip, ctx.ssid, sid, minutes, this.defaults.idleSec,
        g.per_device, perAddress, g.window_sec * 1000, 2 * GUESS_REFUSAL_WINDOW_MS, ctx.device);
    } catch (err) {
      throw Errors.SERVICE_UNAVAILABLE('Voucher store').withCause(err);
    }
    const answer = String(a[0]);
    const refused = (error: AppError): StartOutcome<VoucherSession> => ({ kind: 'refused', answer, error });
    switch (answer) {
      case 'ok': {
        const max = Number(a[4]);
        return {
          kind: 'started',
          session: {
            sessionId: String(a[1]), untilMs: Number(a[2]), usesLeft: max < 0 ? null : max - Number(a[3]),
            reused: Number(a[5]) === 1, replaced: a[6] ? String(a[6]) : '',
          },
        };
      }
      case 'not_loaded': return { kind: 'not_loaded', runId: String(a[1]) };
      case 'blocked': return refused(Errors.DEVICE_BLOCKED());
      case 'not_found': return refused(Errors.VOUCHER_NOT_FOUND());
      case 'expired': return refused(Errors.VOUCHER_EXPIRED(new Date(Number(a[1])).toISOString()));
      case 'not_yet_valid': return refused(Errors.VOUCHER_NOT_YET_VALID(new Date(Number(a[1])).toISOString()));
      case 'exhausted': return refused(Errors.VOUCHER_EXHAUSTED(Number(a[1]), Number(a[2])));
      case 'ssid': return refused(Errors.VOUCHER_SSID_NOT_ALLOWED(ctx.ssid));
      case 'too_many_attempts':
        this.metrics.inc(VoucherMethod.LIMITED_METRIC, labelValues(String(a[2]) === 'address' ? 'address' : 'device', ctx.viaNas ? 'radius' : 'portal'));
        // Whole seconds, rounded up: a guest who waits retry_after is let through.
        return refused(Errors.TOO_MANY_ATTEMPTS(Math.max(1, Math.ceil(Number(a[1]) / 1000))));
      default: throw Errors.UNEXPECTED_SCRIPT_ANSWER('use-voucher', answer);
    }
  }

  settled(outcome: StartOutcome<VoucherSession>): void {
    this.metrics.inc(VoucherMethod.METRIC, outcome.kind === 'started' ? 'ok' : outcome.kind === 'refused' ? outcome.answer : 'not_loaded');
  }

  answer(ctx: SignInContext, s: VoucherSession): Authorized {
    return {
      status: 'authorized',
      session_id: s.sessionId,
      expires_at: new Date(s.untilMs).toISOString(),
      uses_left: s.usesLeft,
      redirect_url: ctx.hotspot.redirectUrl,
    };
  }
}
