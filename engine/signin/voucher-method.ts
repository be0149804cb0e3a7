import { Redis } from 'ioredis';
import { Errors, type AppError } from '../errors.js';
import { activityKeys } from '../events/activity-keys.js';
import { newId } from '../ids.js';
import type { Metrics } from '../metrics.js';
import { keys } from '../redis/keys.js';
import type { SignInContext, SignInMethod, SignInRequest, StartedSession, StartOutcome } from './method.js';

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
 * The voucher way in. The checks (expiry, SSID, remaining uses), the use
 * counter and the session start are one Lua script (use-voucher-14.lua), so a
 * voucher is never used more than max_uses and no guest gets in without the
 * start record queued; this class only prepares its arguments and maps its
 * answer onto the spec's bodies.
 */
export class VoucherMethod implements SignInMethod<{ code: string }, VoucherSession, Authorized> {
  readonly name = 'voucher' as const;
  static readonly METRIC = 'voucher_verify_total';

  constructor(
    private readonly redis: Redis,
    private readonly metrics: Metrics,
    private readonly defaults: { sessionMinutes: number; idleSec: number },
  ) {
    metrics.counter(VoucherMethod.METRIC, 'Portal voucher verifications by outcome', 'result');
  }

  async start(ctx: SignInContext, input: { code: string }): Promise<StartOutcome<VoucherSession>> {
    const t = ctx.tenantId;
    const hs = ctx.hotspot.id;
    const minutes = ctx.hotspot.sessionMinutes ?? this.defaults.sessionMinutes;
    let a: unknown[];
    try {
      const sid = newId('sess_');
      a = await this.redis.useVoucherV6(
        keys.voucher(t, input.code), keys.voucherDevices(t, input.code), keys.grant(t, hs, ctx.mac), keys.outbox(t), keys.loaded(t),
        keys.live(t, hs), keys.sessionRef(t, sid), keys.block(t, ctx.mac), ...activityKeys(t, ctx.now),
        ctx.now, ctx.mac, hs, ctx.ip, ctx.ssid, sid, minutes, this.defaults.idleSec);
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
      case 'exhausted': return refused(Errors.VOUCHER_EXHAUSTED(Number(a[1]), Number(a[2])));
      case 'ssid': return refused(Errors.VOUCHER_SSID_NOT_ALLOWED(ctx.ssid));
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
