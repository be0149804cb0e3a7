import { AppError, Errors } from '../errors.js';
import type { HotspotRef } from '../hotspots/hotspot-service.js';
import { normalizeMac } from '../ids.js';
import type { Logger } from '../logger.js';
import { gatewayFrom, parseGatewayParams, type GatewayParams } from './gateway-params.js';
import { buildHandback, type Handback } from './handback.js';
import type { PortalOutcome, PortalRecord } from './portal-state.js';
import type { HotspotLookup } from './sign-in-pipeline.js';
import type { UamCredentials } from './uam-credential.js';

/** What every portal sign-in answers on success (voucher, OTP code, and the later sponsor and room sign-ins). */
// A type, not an interface: an answer is also kept as a plain record for the page (PortalOutcome).
export type PortalStarted = { session_id: string; redirect_url: string | null };

/** A portal sign-in as the guest's request states it; the method's own fields stay with the caller's `start`. */
export interface PortalSignInRequest {
  hotspotId: string;
  /** The device as the form or client gave it ('' when none). */
  mac: string;
  /** The guest ticked "I accept the terms". */
  acceptedTerms: boolean;
  /** The gateway's parameters as the page passed them on (a query string or an object); absent: no hand-back. */
  gateway: unknown;
  /**
   * A browser's form post (no JavaScript): the outcome, errors included, is
   * kept for the page the browser is sent to, with what the page shows again.
   * Null: a JSON client, answered directly, errors thrown.
   */
  page: { lang: 'tr' | 'en'; ip: string; ssid: string; code?: string } | null;
}

/** The answer: the sign-in's own, with `handback` when the request carried gateway parameters. */
export type PortalAnswer<T extends PortalStarted> = T & { handback?: Handback };

export type PortalSignInResult<T extends PortalStarted> =
  /** A JSON client's answer (`page` null); a refusal is thrown as its AppError. */
  | { kind: 'answer'; answer: PortalAnswer<T> }
  /** A form post's outcome, kept for the page under `record` (PortalState.load). */
  | { kind: 'kept'; record: string }
  /** A form post for a hotspot that does not exist: nothing kept, the page says hotspot_not_found. */
  | { kind: 'no_hotspot' };

/** Where form outcomes are kept for the page (PortalState). */
export interface OutcomeKeeper {
  save(tenantId: string, rec: PortalRecord): Promise<string>;
}

/**
 * The portal's rules around every sign-in method, whatever the form: the
 * hotspot looked up once and handed to the method (which passes it on to the
 * sign-in pipeline, so nothing looks it up again), the hotspot's terms, the
 * gateway's parameters read once and checked to name the device that signs
 * in, the hand-back to the gateway after the session starts, and for a
 * browser's form post the outcome kept for the page. The HTTP routes only
 * translate the request into a PortalSignInRequest and the result into a
 * reply.
 */
export class PortalSignIn {
  constructor(
    private readonly hotspots: HotspotLookup,
    private readonly uam: UamCredentials,
    private readonly outcomes: OutcomeKeeper,
    private readonly log: Logger,
  ) {}

  /**
   * Runs `start`, one method's sign-in at the resolved hotspot, inside the
   * portal's rules. `start` is called only once the terms and the gateway's
   * parameters pass, so a refusal there costs no voucher use or code try.
   */
  async run<T extends PortalStarted>(req: PortalSignInRequest, start: (hotspot: HotspotRef) => Promise<T>): Promise<PortalSignInResult<T>> {
    const hotspot = await this.hotspots.ref(req.hotspotId);
    if (!req.page) return { kind: 'answer', answer: await this.signIn(hotspot, req, start) };
    let outcome: PortalOutcome;
    try {
      outcome = { ok: true, body: { ...await this.signIn(hotspot, req, start) } };
    } catch (err) {
      const e = err instanceof AppError ? err : Errors.INTERNAL();
      if (!(err instanceof AppError)) this.log.error({ err }, 'portal form sign-in failed');
      outcome = { ok: false, status: e.status, body: e.toBody() };
    }
    if (!hotspot) return { kind: 'no_hotspot' };
    const { lang, ip, ssid, code } = req.page;
    const rec: PortalRecord = {
      hs: hotspot.id, mac: normalizeMac(req.mac) ?? '', lang, ip, ssid, gateway: typeof req.gateway === 'string' ? req.gateway : '', outcome,
      // A refused voucher code stays in its field (the guest corrects a letter instead of typing it all again); a used one is not kept.
      ...(code && !outcome.ok ? { code } : {}),
    };
    return { kind: 'kept', record: await this.outcomes.save(hotspot.tenantId, rec) };
  }

  /**
   * The hand-back for a session just started (UamCredentials.issue makes the
   * one-time credential UAM and MikroTik log in with); null when the gateway
   * family cannot be handed back (buildHandback).
   */
  async handback(hotspot: HotspotRef, gw: GatewayParams, sessionId: string, mac: string, redirectUrl: string | null): Promise<Handback | null> {
    const needsCredential = gw.kind === 'uam' || gw.kind === 'mikrotik';
    const credential = needsCredential ? await this.uam.issue(hotspot.tenantId, { hotspotId: hotspot.id, mac, sessionId }) : null;
    return buildHandback(gw, { credential, secret: hotspot.uamSecret, uamAuth: hotspot.portal.uam_auth, landingUrl: redirectUrl });
  }

  /** The hand-back for the gateway parameters a request carried as given (a body's or query's `gateway`); null when none. */
  async handbackFor(hotspot: HotspotRef, gateway: unknown, sessionId: string, mac: string, redirectUrl: string | null): Promise<Handback | null> {
    const src = gatewayFrom(gateway);
    const gw = src ? parseGatewayParams(src) : null;
    return gw ? this.handback(hotspot, gw, sessionId, mac, redirectUrl) : null;
  }

  /**
   * The portal's rules before any method runs, for a sign-in or a request
   * that leads to one (a sponsor's): the hotspot's terms accepted, and the
   * gateway's parameters usable now and naming the device that signs in
   * (else one guest's sign-in could open the gateway for another device).
   * Returns the parsed parameters, null when the request carried none.
   */
  admit(hotspot: HotspotRef, req: Pick<PortalSignInRequest, 'mac' | 'acceptedTerms' | 'gateway'>): GatewayParams | null {
    if (hotspot.portal.terms_required && !req.acceptedTerms) throw Errors.TERMS_NOT_ACCEPTED();
    return this.gatewayOf(req);
  }

  private gatewayOf(req: Pick<PortalSignInRequest, 'mac' | 'gateway'>): GatewayParams | null {
    const src = gatewayFrom(req.gateway);
    const gw = src ? parseGatewayParams(src) : null;
    if (gw?.mac && gw.mac !== normalizeMac(req.mac)) {
      throw Errors.VALIDATION_FAILED('The gateway names another device than the one signing in', [{ field: 'mac', message: 'must be the device the gateway names' }]);
    }
    return gw;
  }

  private async signIn<T extends PortalStarted>(hotspot: HotspotRef | null, req: PortalSignInRequest, start: (hotspot: HotspotRef) => Promise<T>): Promise<PortalAnswer<T>> {
    // Checked before anything is used: a hand-back that cannot be built must not cost a voucher use.
    // As the pipeline answers: a malformed MAC before an unknown hotspot.
    const gw = hotspot ? this.admit(hotspot, req) : this.gatewayOf(req);
    const mac = normalizeMac(req.mac);
    if (!hotspot) throw mac ? Errors.HOTSPOT_NOT_FOUND() : Errors.INVALID_MAC(req.mac);
    const result = await start(hotspot);
    const handback = gw && mac ? await this.handback(hotspot, gw, result.session_id, mac, result.redirect_url) : null;
    return handback ? { ...result, handback } : result;
  }
}
