import { AppError, Errors } from '../../errors.js';
import { newId } from '../../ids.js';
import { resolveTerms, startedAnswer, type Started, type TermsSource } from '../identity-method.js';
import type { SignInContext, SignInMethod, StartedSession, StartOutcome } from '../method.js';
import type { OtpChannelName } from '../providers/types.js';
import type { ChannelTerms, OtpMethod, OtpStore } from './otp-store.js';

/** What a guest presented at an OTP verify, checked for shape by the OTP service. */
export interface CodeInput {
  /** The normalised identity the code was sent to: E.164 phone or e-mail address. */
  identity: string;
  /** Keyed hash of the presented code (OtpHasher). */
  hash: string;
}

/** A session a code started: `method` says which channel had carried the code. */
export interface CodeSession extends StartedSession {
  method: OtpMethod;
}

/** The channels a code of each kind may have gone by, with the auth method each signs in as. */
const CHANNELS: Record<'phone' | 'email', readonly { channel: OtpChannelName; method: OtpMethod }[]> = {
  phone: [{ channel: 'sms', method: 'sms_otp' }, { channel: 'msgapp', method: 'msgapp_otp' }],
  email: [{ channel: 'email', method: 'email' }],
};

/**
 * Sign-in with a one-time code: the code check and the session start are one
 * Redis script (use-otp-14.lua), one round trip, so the code is consumed if
 * and only if the session starts, and a verify costs what a voucher use
 * costs. The pipeline around it (sign-in-pipeline.ts) does what it does for
 * every method: hotspot, block check (in the script), a load of the tenant
 * into Redis when the script finds it missing (the code is untouched then),
 * the decision, the answer.
 *
 * Which channel carried a phone code is only in the stored code, so the
 * script gets the terms of both phone methods and picks; the name this method
 * records refusals under is the phone's first method, `sms_otp`, as the OTP
 * service always did.
 */
export class OtpCodeMethod implements SignInMethod<CodeInput, CodeSession, Started> {
  readonly name: OtpMethod;
  private readonly channels: readonly { channel: OtpChannelName; method: OtpMethod }[];

  constructor(
    private readonly store: OtpStore,
    private readonly terms: TermsSource,
    private readonly defaults: { sessionMinutes: number; idleSec: number },
    kind: 'phone' | 'email',
  ) {
    this.channels = CHANNELS[kind];
    this.name = this.channels[0]!.method;
  }

  async start(ctx: SignInContext, input: CodeInput): Promise<StartOutcome<CodeSession>> {
    const terms: ChannelTerms[] = [];
    for (const c of this.channels) {
      // Spelled out, not `{ ...c, ...x }`: Node 20 copies a second spread source through the runtime,
      // 7-11 us for this object against 0.1 us for the literal (measured; bench/results/otp-signin.md).
      const x = resolveTerms(await this.terms.termsFor(ctx.hotspot, c.method), ctx.hotspot, this.defaults);
      terms.push({
        channel: c.channel, method: c.method, minutes: x.minutes, idleSec: x.idleSec, downKbps: x.downKbps, upKbps: x.upKbps,
        quotaMb: x.quotaMb, sessionQuotaMb: x.sessionQuotaMb, profile: x.profile,
      });
    }
    let r: Awaited<ReturnType<OtpStore['use']>>;
    try {
      r = await this.store.use({
        tenantId: ctx.tenantId, hotspotId: ctx.hotspot.id, identity: input.identity, hash: input.hash, mac: ctx.mac, ip: ctx.ip, ssid: ctx.ssid,
        sessionId: newId('sess_'), now: ctx.now, terms, device: ctx.device,
      });
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw Errors.SERVICE_UNAVAILABLE('Session store').withCause(err);
    }
    switch (r.kind) {
      case 'started':
        return { kind: 'started', session: { sessionId: r.sessionId, untilMs: r.untilMs, reused: false, replaced: r.replaced, method: r.method } };
      case 'not_loaded': return { kind: 'not_loaded', runId: r.runId };
      case 'invalid': return { kind: 'refused', answer: r.kind, error: Errors.OTP_INVALID(r.attemptsLeft) };
      case 'locked': return { kind: 'refused', answer: r.kind, error: Errors.OTP_LOCKED() };
      case 'expired': return { kind: 'refused', answer: r.kind, error: Errors.OTP_EXPIRED() };
      case 'blocked': return { kind: 'refused', answer: r.kind, error: Errors.DEVICE_BLOCKED() };
    }
  }

  answer(ctx: SignInContext, s: CodeSession): Started {
    return startedAnswer(ctx, s);
  }
}
