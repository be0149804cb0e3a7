import { AppError, Errors } from '../../errors.js';
import { newId } from '../../ids.js';
import { resolveTerms, startedAnswer, type Started, type TermsSource } from '../identity-method.js';
import type { SignInContext, SignInMethod, StartedSession, StartOutcome } from '../method.js';
import type { SponsorStore } from './sponsor-store.js';

/** What the sponsor's approval presents to the pipeline: the link (as its hash), the request it stands for, the access length chosen. */
export interface SponsorApproval {
  requestId: string;
  tokenHash: string;
  /** One of the tenant's durations_minutes, checked by the service. */
  minutes: number;
  /** The session's user name: the sponsor's address (docs/sponsor.md says why). */
  sponsor: string;
}

/**
 * Sign-in by a sponsor's approval, through the shared pipeline
 * (sign-in-pipeline.ts): the link is used up and the device's session
 * started by one script (approve-sponsor-15.lua), with the block check and a
 * load of the tenant into Redis when the script finds it missing (the link
 * is untouched then). The pipeline records the decision and, at a
 * `mac_auth` hotspot, has the actor send the CoA, so the device is let in
 * whether or not its guest still has the page open.
 */
export class SponsorMethod implements SignInMethod<SponsorApproval, StartedSession, Started> {
  readonly name = 'sponsor' as const;

  constructor(
    private readonly store: SponsorStore,
    private readonly terms: TermsSource,
    private readonly defaults: { sessionMinutes: number; idleSec: number },
  ) {}

  async start(ctx: SignInContext, a: SponsorApproval): Promise<StartOutcome> {
    const x = resolveTerms(await this.terms.termsFor(ctx.hotspot, 'sponsor'), ctx.hotspot, this.defaults);
    let r: unknown[];
    try {
      r = await this.store.approve({
        tenantId: ctx.tenantId, requestId: a.requestId, tokenHash: a.tokenHash, mac: ctx.mac, hotspotId: ctx.hotspot.id, ip: ctx.ip, ssid: ctx.ssid,
        sessionId: newId('sess_'), minutes: a.minutes, idleSec: x.idleSec, user: a.sponsor,
        downKbps: x.downKbps, upKbps: x.upKbps, quotaMb: x.quotaMb, sessionQuotaMb: x.sessionQuotaMb, profile: x.profile,
      }, ctx.now);
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw Errors.SERVICE_UNAVAILABLE('Session store').withCause(err);
    }
    const answer = String(r[0]);
    switch (answer) {
      case 'ok':
        return { kind: 'started', session: { sessionId: String(r[1]), untilMs: Number(r[2]), reused: false, replaced: String(r[3] ?? '') } };
      case 'not_loaded': return { kind: 'not_loaded', runId: String(r[1]) };
      case 'blocked': return { kind: 'refused', answer, error: Errors.DEVICE_BLOCKED() };
      case 'used': return { kind: 'refused', answer, error: Errors.SPONSOR_LINK_USED() };
      case 'expired': case 'unknown': return { kind: 'refused', answer, error: Errors.SPONSOR_LINK_EXPIRED() };
      default: throw Errors.UNEXPECTED_SCRIPT_ANSWER('approve-sponsor', answer);
    }
  }

  answer(ctx: SignInContext, s: StartedSession): Started {
    return startedAnswer(ctx, s);
  }
}
