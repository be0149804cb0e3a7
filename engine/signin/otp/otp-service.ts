import type { DeviceType } from '../../reports/device-type.js';
import type { RedisClient as Redis } from '../../redis/redis-client.js';
import { AppError, Errors } from '../../errors.js';
import type { PortalMethod } from '../../hotspots/portal-settings.js';
import type { HotspotRef, HotspotService } from '../../hotspots/hotspot-service.js';
import { newId, normalizeMac } from '../../ids.js';
import type { Logger } from '../../logger.js';
import { labelValues, type Metrics } from '../../metrics.js';
import type { DeliveryReceiver, OtpChannelName, OtpSenders } from '../providers/types.js';
import type { AuthMethod, SignInSettings, SignInSettingsService } from '../sign-in-settings.js';
import { emailDomain, limitPrefix, normalizeEmail, normalizePhone, prefixAllowed } from './identity.js';
import { CODE_TTL_MS, generateCode, type OtpHasher } from './otp-code.js';
import { OtpStore, type RequestStatus } from './otp-store.js';
import type { OtpDecisionSink, SessionStarter, VerifiedIdentity } from './types.js';

export interface OtpRequestInput {
  hotspotId: string;
  /** `phone` for sms and msgapp, `email` for email: as the guest typed it. */
  to: string;
  channel: OtpChannelName;
  mac: string;
  /** The guest's address as reported: recorded only. */
  ip: string;
  /** The request's source address (a fact): the per-address send limit's key. */
  source: string;
  ssid: string;
  locale?: 'tr' | 'en';
}

export interface OtpVerifyInput {
  hotspotId: string;
  /** `phone` covers codes sent by SMS or messaging app; `email` codes sent by e-mail. */
  kind: 'phone' | 'email';
  to: string;
  code: string;
  mac: string;
  ip: string;
  /** The request's source address (a fact). */
  source: string;
  ssid: string;
  /** The device type the guest's browser claimed (a statistic only). */
  device?: DeviceType;
  /** The hotspot `hotspotId` names, when the caller resolved it already (the portal sign-in): not looked up again. */
  hotspot?: HotspotRef;
}

export interface OtpSent { status: 'sent'; channel: OtpChannelName; expires_in: number; request_id: string }
export type OtpAuthorized = Awaited<ReturnType<SessionStarter['code']>>;

export interface OtpPorts {
  senders: OtpSenders;
  sessions: SessionStarter;
  decisions: OtpDecisionSink;
}

// Request ids name their tenant, so GET .../sms/status?request_id= finds the hash-tagged state with nothing else.
const REQUEST_ID = /^(otp_[0-9a-z]{16})\.(tn_[0-9a-z]+)$/;

const METHOD_OF: Record<OtpChannelName, VerifiedIdentity['method']> = { sms: 'sms_otp', msgapp: 'msgapp_otp', email: 'email' };

/** otp_verify_total's outcome for a verify's refusal, by error code (a code refused, or a blocked device whose code stays alive). */
const VERIFY_OUTCOME: Partial<Record<string, string>> = {
  otp_invalid: 'invalid', otp_expired: 'expired', otp_locked: 'locked', device_blocked: 'blocked',
};

/**
 * OTP sign-in by SMS, messaging app and e-mail:
 * limits and code state are atomic in Redis (OtpStore's scripts), sending
 * goes through the OtpSenders port, the code check with the session start
 * through SessionStarter.
 * Also the DeliveryReceiver the providers' callback routes call.
 */
export class OtpService implements DeliveryReceiver {
  readonly store: OtpStore;

  constructor(
    redis: Redis,
    private readonly hotspots: HotspotService,
    private readonly settings: SignInSettingsService,
    private readonly hasher: OtpHasher,
    private readonly ports: OtpPorts,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {
    this.store = new OtpStore(redis);
    metrics.counter('otp_requests_total', 'OTP code requests by outcome (sent, delivered, limited, send_failed), channel, and for limited the limit that bit', 'outcome,channel,limit');
    metrics.counter('otp_verify_total', 'OTP code checks by outcome', 'outcome');
    metrics.counter('otp_fallback_total', 'Messaging-app codes whose delivery watch fired, by what followed', 'outcome');
  }

  async request(r: OtpRequestInput): Promise<OtpSent> {
    const { tenantId, settings, hotspotMethods } = await this.hotspot(r.hotspotId);
    const method = METHOD_OF[r.channel];
    const mac = normalizeMac(r.mac);
    const reject = (e: AppError): AppError => this.refuse(tenantId, r.hotspotId, method, e, mac);
    // offeredMethods(hotspotMethods, settings.methods).includes(method), without the array it builds per request.
    if (!hotspotMethods.includes(method) || !settings.methods.includes(method)) throw reject(Errors.METHOD_NOT_ALLOWED_HERE(method));
    if (!mac) throw reject(Errors.INVALID_MAC(r.mac));
    let identity: string;
    let prefix: string;
    if (r.channel === 'email') {
      const email = normalizeEmail(r.to);
      if (!email) throw reject(Errors.EMAIL_INVALID());
      identity = email;
      prefix = emailDomain(email);
    } else {
      const phone = normalizePhone(r.to);
      if (!phone) throw reject(Errors.PHONE_INVALID());
      if (!prefixAllowed(phone, settings.allowed_prefixes, settings.blocked_prefixes)) throw reject(Errors.PHONE_PREFIX_BLOCKED());
      identity = phone;
      prefix = limitPrefix(phone, settings.otp.prefix_digits);
    }

    const now = this.now();
    const requestId = `${newId('otp_')}.${tenantId}`;
    const code = generateCode();
    const hash = this.hasher.hash(tenantId, r.hotspotId, identity, code);
    const watch = r.channel === 'msgapp';
    const counted = await this.store.request({
      tenantId, hotspotId: r.hotspotId, identity, requestId, channel: r.channel, hash, source: r.source, mac, prefix, limits: settings.otp,
      fallbackDueMs: watch ? now + settings.msgapp.fallback_timeout_sec * 1000 : 0, fallbackSms: settings.msgapp.fallback_sms, locale: r.locale ?? 'tr',
    }, now);
    if (!counted.ok) {
      this.metrics.inc('otp_requests_total', labelValues('limited', r.channel, counted.limit));
      throw reject(Errors.OTP_RATE_LIMITED(Math.max(1, Math.ceil(counted.retryAfterMs / 1000))));
    }

    const msg = { tenantId, requestId, to: identity, code, locale: r.locale ?? 'tr' } as const;
    const state = { hotspotId: r.hotspotId, identity };
    if (await this.send(r.channel, msg)) {
      this.metrics.inc('otp_requests_total', labelValues('sent', r.channel, ''));
      return { status: 'sent', channel: r.channel, expires_in: CODE_TTL_MS / 1000, request_id: requestId };
    }
    // Refused outright: for the messaging app that is "not delivered" at once.
    if (watch && settings.msgapp.fallback_sms && await this.store.settle(tenantId, state, requestId, 'resent', hash, this.now(), 'sent')) {
      this.metrics.inc('otp_fallback_total', 'refused_resent');
      if (await this.send('sms', msg)) {
        this.metrics.inc('otp_requests_total', labelValues('sent', 'sms', ''));
        return { status: 'sent', channel: 'sms', expires_in: CODE_TTL_MS / 1000, request_id: requestId };
      }
      await this.store.settle(tenantId, state, requestId, 'not_delivered', '', this.now(), 'resent_by_sms');
    } else {
      await this.store.settle(tenantId, state, requestId, 'not_delivered', '', this.now(), 'sent');
    }
    this.metrics.inc('otp_requests_total', labelValues('send_failed', r.channel, ''));
    throw reject(Errors.OTP_SEND_FAILED());
  }

  /** The delivery state the portal polls (the guest is told which channel carried the code). */
  async status(requestId: string): Promise<{ status: RequestStatus; channel: OtpChannelName }> {
    const m = REQUEST_ID.exec(requestId);
    const st = m ? await this.store.state(m[2]!, requestId) : null;
    if (!st) throw Errors.OTP_REQUEST_NOT_FOUND();
    return { status: st.status, channel: st.channel };
  }

  /**
   * Checks the presented code and starts the session in one atomic step
   * (SessionStarter: the sign-in pipeline with OtpCodeMethod). The pipeline
   * records the decision for the code's outcome; this records only what it
   * refuses before (a malformed MAC or identity).
   */
  async verify(v: OtpVerifyInput): Promise<OtpAuthorized> {
    // Only the tenant is needed here (the pipeline reads the method's settings): no settings read.
    // The hotspot goes on to the pipeline with the claim: one lookup for the whole sign-in.
    const hs = v.hotspot?.id === v.hotspotId ? v.hotspot : await this.hotspots.ref(v.hotspotId);
    if (!hs) throw Errors.HOTSPOT_NOT_FOUND();
    const tenantId = hs.tenantId;
    const fallbackMethod = v.kind === 'email' ? 'email' : 'sms_otp';
    const mac = normalizeMac(v.mac);
    const reject = (e: AppError): AppError => this.refuse(tenantId, v.hotspotId, fallbackMethod, e, mac);
    if (!mac) throw reject(Errors.INVALID_MAC(v.mac));
    const identity = v.kind === 'email' ? normalizeEmail(v.to) : normalizePhone(v.to);
    if (!identity) throw reject(v.kind === 'email' ? Errors.EMAIL_INVALID() : Errors.PHONE_INVALID());
    const codeHash = this.hasher.hash(tenantId, v.hotspotId, identity, v.code.trim());
    try {
      const answer = await this.ports.sessions.code({
        tenantId, hotspotId: v.hotspotId, hotspot: hs, mac, ip: v.ip, source: v.source, ssid: v.ssid, kind: v.kind, username: identity, codeHash, device: v.device,
      });
      this.metrics.inc('otp_verify_total', 'ok');
      return answer;
    } catch (err) {
      const outcome = err instanceof AppError ? VERIFY_OUTCOME[err.code] : undefined;
      if (outcome) this.metrics.inc('otp_verify_total', outcome);
      throw err;
    }
  }

  /** DeliveryReceiver: the provider confirmed delivery; a pending fallback is cancelled in the same step. */
  async delivered(tenantId: string, requestId: string, channel: OtpChannelName): Promise<void> {
    if (await this.store.delivered(tenantId, requestId, channel)) this.metrics.inc('otp_requests_total', labelValues('delivered', channel, ''));
  }

  /**
   * A claimed delivery watch fired (OtpFallbackPoller): the messaging-app
   * code was not delivered in time. With fallback on, a fresh code goes by
   * SMS (the old one could be on its way still, but is only stored hashed);
   * otherwise the request ends not_delivered.
   */
  async fireFallback(tenantId: string, requestId: string): Promise<void> {
    const st = await this.store.state(tenantId, requestId);
    if (!st || st.status !== 'sent') {
      // Delivered, expired or settled meanwhile: only drop the watch.
      await this.store.settle(tenantId, st ?? { hotspotId: '', identity: '' }, requestId, 'not_delivered', '', this.now(), 'sent');
      return;
    }
    if (!st.fallbackSms) {
      if (await this.store.settle(tenantId, st, requestId, 'not_delivered', '', this.now(), 'sent')) this.metrics.inc('otp_fallback_total', 'not_delivered');
      return;
    }
    const code = generateCode();
    const hash = this.hasher.hash(tenantId, st.hotspotId, st.identity, code);
    if (!await this.store.settle(tenantId, st, requestId, 'resent', hash, this.now(), 'sent')) return;
    if (await this.send('sms', { tenantId, requestId, to: st.identity, code, locale: st.locale })) {
      this.metrics.inc('otp_fallback_total', 'resent_by_sms');
      return;
    }
    await this.store.settle(tenantId, st, requestId, 'not_delivered', '', this.now(), 'resent_by_sms');
    this.metrics.inc('otp_fallback_total', 'sms_failed');
  }

  private async hotspot(hotspotId: string): Promise<{ tenantId: string; settings: SignInSettings; hotspotMethods: PortalMethod[] }> {
    const hs = await this.hotspots.ref(hotspotId);
    if (!hs) throw Errors.HOTSPOT_NOT_FOUND();
    return { tenantId: hs.tenantId, settings: await this.settings.get(hs.tenantId), hotspotMethods: hs.portal.methods };
  }

  /** Sends through the tenant's provider; false when none is configured or it refused (logged without secrets). */
  private async send(channel: OtpChannelName, msg: { tenantId: string; requestId: string; to: string; code: string; locale: 'tr' | 'en' }): Promise<boolean> {
    const sender = await this.ports.senders.forTenant(msg.tenantId, channel);
    if (!sender) {
      this.log.warn({ tenant: msg.tenantId, channel }, 'no OTP sender configured for the channel');
      return false;
    }
    try {
      const r = await sender.send(msg);
      if (r.ok) return true;
      this.log.warn({ tenant: msg.tenantId, channel, provider: r.provider, code: r.code, detail: r.detail, request: msg.requestId }, 'OTP send refused');
    } catch (err) {
      this.log.warn({ tenant: msg.tenantId, channel, provider: sender.provider, err: (err as Error).message }, 'OTP send failed');
    }
    return false;
  }

  /** Records a refusal as an auth.failure decision (with the device when its MAC was well formed) and hands the error back to throw. */
  private refuse(tenantId: string, hotspotId: string, method: AuthMethod & VerifiedIdentity['method'], e: AppError, mac: string | null): AppError {
    this.ports.decisions.record(mac
      ? { tenantId, hotspotId, method, outcome: 'reject', reason: e.code, at: this.now(), mac }
      : { tenantId, hotspotId, method, outcome: 'reject', reason: e.code, at: this.now() });
    return e;
  }
}
