import { AppError, Errors } from '../../errors.js';
import type { HotspotRef } from '../../hotspots/hotspot-service.js';
import { newId, normalizeMac } from '../../ids.js';
import type { Logger } from '../../logger.js';
import type { DecisionSink } from '../decision-sink.js';
import { gatewayFrom, gatewayQuery } from '../gateway-params.js';
import type { Handback } from '../handback.js';
import type { Started } from '../identity-method.js';
import type { SignInRequest } from '../method.js';
import { emailDomain, normalizeEmail } from '../otp/identity.js';
import type { OtpSenders } from '../providers/types.js';
import type { SignInSettings } from '../sign-in-settings.js';
import type { SponsorApproval } from './sponsor-method.js';
import { shownMac, sponsorMail } from './sponsor-mail.js';
import { newLinkToken, parseLinkToken, tenantOfRequest, type SponsorRequest, type SponsorState, type SponsorStore } from './sponsor-store.js';

export interface SponsorAsk {
  hotspotId: string;
  sponsorEmail: string;
  guestName: string;
  mac: string;
  /** The guest's address as reported: recorded only. */
  ip: string;
  /** The request's source address (a fact): the per-address limit's key. */
  source: string;
  ssid: string;
  lang: 'tr' | 'en';
  /** The gateway's parameters (query string or object), for the hand-back once approved. */
  gateway: unknown;
  acceptTerms: boolean;
}

/** What the guest's page polls: pending, rejected, expired, or the authorized body of voucher verify (with the hand-back). */
export type SponsorStatus =
  | { status: 'pending'; expires_in: number }
  | { status: 'rejected' | 'expired' }
  | (Started & { handback?: Handback });

/** The sponsor's page: who asks, where, which device, the lengths to choose from; `state` says whether the link still works. */
export interface SponsorLinkView {
  state: SponsorState | 'unknown';
  guest: string;
  venue: string;
  device: string;
  durations: number[];
  lang: 'tr' | 'en';
  /** The length approved, once approved. */
  minutes: number | null;
}

/** A request as the console lists it. */
export interface SponsorRequestRow {
  id: string; hotspot_id: string; guest_name: string; sponsor_email: string; mac: string; status: SponsorState;
  requested_at: string; expires_at: string; decided_at: string | null; minutes: number | null;
}

export interface SponsorDeps {
  store: SponsorStore;
  hotspots: { ref(id: string): Promise<HotspotRef | null> };
  settings: { get(tenantId: string): Promise<SignInSettings> };
  senders: OtpSenders;
  /** The sign-in pipeline with SponsorMethod (SignInService.sponsor). */
  starter: { sponsor(req: SignInRequest, approval: SponsorApproval, tenantId: string): Promise<Started> };
  decisions: DecisionSink;
  /** The portal's rules before a sign-in: terms and the gateway's device (PortalSignIn.admit); throws the refusal. */
  admit(ref: HotspotRef, req: { mac: string; acceptedTerms: boolean; gateway: unknown }): unknown;
  /** The gateway hand-back for a started session (PortalSignIn.handbackFor). */
  handback(ref: HotspotRef, gateway: unknown, sessionId: string, mac: string, redirectUrl: string | null): Promise<Handback | null>;
  /** PORTAL_PUBLIC_URL: where the links point; unset: sponsor approval is unavailable. */
  publicUrl: string | undefined;
  log: Logger;
  now: () => number;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * Sponsor approval: a guest names a sponsor, the sponsor's
 * e-mail carries a single-use link to a page where they approve (choosing
 * the access length) or reject. Approval starts the session of the device
 * the request was filed for through the sign-in pipeline, so the guest's
 * browser plays no part in it. Every pending request is a JIT approval.
 */
export class SponsorService {
  constructor(private readonly d: SponsorDeps) {}

  /** Files a guest's request and mails the sponsor. */
  async request(a: SponsorAsk): Promise<{ status: 'pending'; request_id: string; expires_in: number }> {
    const ref = await this.d.hotspots.ref(a.hotspotId);
    if (!ref) throw Errors.HOTSPOT_NOT_FOUND();
    const tenantId = ref.tenantId;
    const refuse = (e: AppError): AppError => {
      this.d.decisions.record({ tenantId, hotspotId: ref.id, method: 'sponsor', outcome: 'reject', reason: e.code, at: this.d.now() });
      return e;
    };
    const sp = (await this.d.settings.get(tenantId)).sponsor;
    if (!sp.enabled) throw refuse(Errors.METHOD_NOT_ALLOWED_HERE('sponsor'));
    if (!this.d.publicUrl) throw Errors.SPONSOR_UNAVAILABLE();
    const mac = normalizeMac(a.mac);
    if (!mac) throw refuse(Errors.INVALID_MAC(a.mac));
    // As for every portal sign-in (PortalSignIn.admit): the terms, and a gateway that hands back the device that asks,
    // with parameters usable now, not only once the sponsor has approved.
    try {
      this.d.admit(ref, { mac, acceptedTerms: a.acceptTerms, gateway: a.gateway });
    } catch (err) {
      throw err instanceof AppError ? refuse(err) : err;
    }
    const src = gatewayFrom(a.gateway);
    const sponsor = normalizeEmail(a.sponsorEmail);
    if (!sponsor) throw refuse(Errors.EMAIL_INVALID());
    if (!sp.allowed_emails.includes(sponsor) && !sp.allowed_domains.includes(emailDomain(sponsor))) throw refuse(Errors.SPONSOR_NOT_ALLOWED());
    const guest = a.guestName.replace(/\s+/g, ' ').trim();
    if (!guest) throw refuse(Errors.VALIDATION_FAILED('guest_name is empty', [{ field: 'guest_name', message: 'is required' }]));

    const now = this.d.now();
    const requestId = `${newId('spr_')}.${tenantId}`;
    const { token, hash } = newLinkToken(tenantId);
    const ttlMs = sp.link_ttl_minutes * 60_000;
    const filed = await this.d.store.file({
      tenantId, requestId, tokenHash: hash, hotspotId: ref.id, mac, ip: a.ip, ssid: a.ssid, guest, sponsor,
      gateway: src ? gatewayQuery(src) : '', lang: a.lang, source: a.source, linkTtlMs: ttlMs,
      limits: { perIp: sp.per_ip_hourly, perMac: sp.per_mac_hourly, perSponsor: sp.per_sponsor_hourly },
    }, now);
    if (!filed.ok) throw refuse(Errors.SPONSOR_RATE_LIMITED(Math.max(1, Math.ceil(filed.retryAfterMs / 1000))));

    const link = `${this.d.publicUrl}/portal/sponsor/${token}`;
    const mail = sponsorMail({
      guest, venue: venueName(ref), device: shownMac(mac, sp.show_mac),
      approveUrl: `${link}?action=approve`, rejectUrl: `${link}?action=reject`, ttlMinutes: sp.link_ttl_minutes,
    });
    if (!await this.send(tenantId, requestId, sponsor, mail)) {
      // Nobody can answer a request whose link went nowhere: withdrawn, so it never shows as waiting.
      await this.d.store.withdraw(tenantId, requestId, hash, this.d.now());
      throw refuse(Errors.SPONSOR_SEND_FAILED());
    }
    return { status: 'pending', request_id: requestId, expires_in: Math.round(ttlMs / 1000) };
  }

  /**
   * What the guest's page polls. The id names its tenant (another tenant's id
   * with this tenant's name is simply unknown). `bind`: only for that hotspot
   * and device (the portal page's own view), else unknown.
   */
  async status(requestId: string, bind?: { hotspotId: string; mac: string }): Promise<SponsorStatus> {
    const tenantId = tenantOfRequest(requestId);
    const now = this.d.now();
    const r = tenantId ? await this.d.store.get(tenantId, requestId, now) : null;
    if (!r || (bind && (bind.hotspotId !== r.hotspotId || bind.mac !== r.mac))) throw Errors.SPONSOR_REQUEST_NOT_FOUND();
    switch (r.status) {
      case 'pending': return { status: 'pending', expires_in: Math.max(0, Math.round((r.exp - now) / 1000)) };
      case 'rejected': case 'expired': return { status: r.status };
      case 'approved': return this.authorized(r);
    }
  }

  /** The sponsor's page for a link (GET: never changes anything, so a mail scanner following the link decides nothing). */
  async view(token: string): Promise<SponsorLinkView> {
    const none: SponsorLinkView = { state: 'unknown', guest: '', venue: '', device: '', durations: [], lang: 'tr', minutes: null };
    const t = parseLinkToken(token);
    const r = t ? await this.d.store.byLink(t.tenantId, t.hash, this.d.now()) : null;
    if (!r) return none;
    const ref = await this.d.hotspots.ref(r.hotspotId);
    const sp = (await this.d.settings.get(r.tenantId)).sponsor;
    return {
      state: r.status, guest: r.guest, venue: ref ? venueName(ref) : r.hotspotId, device: shownMac(r.mac, sp.show_mac),
      durations: sp.durations_minutes, lang: r.lang, minutes: r.minutes,
    };
  }

  /**
   * The sponsor's decision through a link. Approve: the link used up and the
   * session started in one step (409 sponsor_link_used if it was used,
   * 410 sponsor_link_expired past its life or for no such link). `source` is
   * the sponsor's address (recorded with nothing; the pipeline wants one).
   */
  async decide(token: string, action: 'approve' | 'reject', minutes: number | null, source: string): Promise<{ decision: 'approved' | 'rejected'; minutes: number | null }> {
    const t = parseLinkToken(token);
    const r = t ? await this.d.store.byLink(t.tenantId, t.hash, this.d.now()) : null;
    if (!t || !r) throw Errors.SPONSOR_LINK_EXPIRED();
    // Checked first so that a second click is told so without a decision recorded; the scripts are the guard under concurrency.
    if (r.status === 'approved' || r.status === 'rejected') throw Errors.SPONSOR_LINK_USED();
    if (r.status === 'expired') throw Errors.SPONSOR_LINK_EXPIRED();
    if (action === 'reject') {
      const now = this.d.now();
      const out = await this.d.store.reject(t.tenantId, r.id, t.hash, now);
      if (out === 'used') throw Errors.SPONSOR_LINK_USED();
      if (out !== 'ok') throw Errors.SPONSOR_LINK_EXPIRED();
      this.d.decisions.record({ tenantId: t.tenantId, hotspotId: r.hotspotId, method: 'sponsor', outcome: 'reject', reason: Errors.SPONSOR_REJECTED().code, at: now, mac: r.mac });
      return { decision: 'rejected', minutes: null };
    }
    const sp = (await this.d.settings.get(t.tenantId)).sponsor;
    const chosen = minutes ?? sp.durations_minutes[0]!;
    if (!sp.durations_minutes.includes(chosen)) {
      throw Errors.VALIDATION_FAILED(`minutes must be one of ${sp.durations_minutes.join(', ')}`, [{ field: 'minutes', message: 'is not one of the choices' }]);
    }
    await this.d.starter.sponsor({ hotspotId: r.hotspotId, mac: r.mac, ip: r.ip, ssid: r.ssid, source },
      { requestId: r.id, tokenHash: t.hash, minutes: chosen, sponsor: r.sponsor }, t.tenantId);
    return { decision: 'approved', minutes: chosen };
  }

  /** The tenant's requests of the last day, newest first, for the console. */
  async list(tenantId: string, limit = 200): Promise<SponsorRequestRow[]> {
    return (await this.d.store.recent(tenantId, this.d.now(), limit)).map((r) => ({
      id: r.id, hotspot_id: r.hotspotId, guest_name: r.guest, sponsor_email: r.sponsor, mac: r.mac, status: r.status,
      requested_at: iso(r.at), expires_at: iso(r.exp), decided_at: r.decidedAt === null ? null : iso(r.decidedAt), minutes: r.minutes,
    }));
  }

  /** The requests waiting for their sponsor: the dashboard's JIT approvals (engine/views/jit-approvals.ts). */
  async pending(tenantId: string): Promise<{ id: string; site_id: string; guest: string; sponsor: string; requested_at: string; expires_at: string }[]> {
    return (await this.d.store.recent(tenantId, this.d.now(), 1000)).filter((r) => r.status === 'pending').map((r) => ({
      id: r.id, site_id: r.hotspotId, guest: r.guest, sponsor: r.sponsor, requested_at: iso(r.at), expires_at: iso(r.exp),
    }));
  }

  private async authorized(r: SponsorRequest): Promise<SponsorStatus> {
    const ref = await this.d.hotspots.ref(r.hotspotId);
    const body: Started = { status: 'authorized', session_id: r.sessionId ?? '', expires_at: iso(r.untilMs ?? 0), uses_left: null, redirect_url: ref?.redirectUrl ?? null };
    if (!ref || !r.gateway) return body;
    try {
      const handback = await this.d.handback(ref, r.gateway, body.session_id, r.mac, body.redirect_url);
      return handback ? { ...body, handback } : body;
    } catch {
      return body; // checked when the request was filed; a hotspot changed since loses only the hand-back
    }
  }

  private async send(tenantId: string, requestId: string, to: string, m: { subject: string; text: string }): Promise<boolean> {
    const sender = await this.d.senders.forTenant(tenantId, 'email');
    if (!sender?.mail) {
      this.d.log.warn({ tenant: tenantId }, 'sponsor request: no e-mail sender configured');
      return false;
    }
    try {
      const r = await sender.mail({ tenantId, requestId, to, subject: m.subject, text: m.text });
      return r.ok;
    } catch (err) {
      this.d.log.warn({ tenant: tenantId, err: (err as Error).message }, 'sponsor request: e-mail failed');
      return false;
    }
  }
}

/** The venue as the sponsor knows it: the portal's display name, else the operator's name for the hotspot. */
function venueName(ref: HotspotRef): string {
  return ref.portal.display_name || ref.name || ref.id;
}
