import type { RedisClient as Redis } from '../../redis/redis-client.js';
import { keys } from '../../redis/keys.js';
import { EmailSender } from './email-sender.js';
import type { SecretSource, SecretStore } from '../../secrets/secret-store.js';
import { isEnvRef, isTenantEnvRef, resolveEnvRef } from './env-ref.js';
import type { MsgappProviderStore } from './msgapp-provider-store.js';
import { msgappSender } from './msgapp-senders.js';
import { NETGSM_CARRIER } from './netgsm-sms.js';
import type { OutboundHttp } from '../../net/outbound-http.js';
import type { OutboundPolicy } from '../../net/outbound-target.js';
import type { ProviderFailures } from './provider-failures.js';
import { ProviderHttp } from './provider-http.js';
import type { SmsCarrier } from './sms-carrier.js';
import type { EmailConfig, OtpChannelName, OtpMessage, OtpSender, OtpSenders, SendResult, SignInConfigSource, SmsConfig } from './types.js';

/** The SMS carriers by their settings name; İleti Merkezi and Verimor join here. */
export const SMS_CARRIERS: Record<SmsConfig['provider'], SmsCarrier> = { netgsm: NETGSM_CARRIER };

/** How long a message id from a provider maps to our request id: past the code's life and any late callback. */
const PROVIDER_REF_TTL_SEC = 900;

export interface ProviderRegistryOptions {
  config: SignInConfigSource;
  msgapp: MsgappProviderStore;
  redis: Redis;
  failures: ProviderFailures;
  /** Where tenants' providers may be reached (ALLOW_PRIVATE_TARGETS); every connection is checked and pinned. */
  outbound: OutboundPolicy;
  /** The service's one outbound HTTP client (shared with the webhook deliveries); absent: one of its own on `outbound`. */
  http?: OutboundHttp;
  /** Tenant secrets given inline (sealed); null: only env:// references work. */
  secrets?: SecretStore | null;
  /** The service-wide SMTP server (SMTP_URL), used when a tenant names none. */
  smtpUrl: string | undefined;
  /** The From address when a tenant's e-mail settings give none. */
  smtpFrom: string;
  /** How long a tenant's resolved sender is reused before its settings are read again. */
  ttlMs?: number;
  now?: () => number;
}

/**
 * The OtpSenders the OTP flows use: a tenant's sender per channel, built
 * from its sign-in settings (SMS, e-mail) and its platform messaging-app
 * record, and kept `ttlMs` so a burst of sign-ins reads neither settings
 * table per request. A settings change calls invalidate(): at once on this
 * process, and on the others as soon as their settings service re-reads the
 * newer row (its onChange), before that copy is used. A messaging-app record
 * has no such signal from other processes: it is taken within `ttlMs`. No
 * restart either way: inline credentials are read from tenant_secrets when a
 * sender is built, env:// references at each send.
 */
export class ProviderRegistry implements OtpSenders {
  private readonly cache = new Map<string, { until: number; sender: Promise<OtpSender | null> }>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly http: ProviderHttp;

  constructor(private readonly o: ProviderRegistryOptions) {
    this.http = new ProviderHttp(o.http ?? o.outbound);
    // A messaging-app account onboarded through another process is taken within seconds, with no restart.
    this.ttlMs = o.ttlMs ?? 5_000;
    this.now = o.now ?? Date.now;
  }

  forTenant(tenantId: string, channel: OtpChannelName): Promise<OtpSender | null> {
    const key = `${tenantId}\n${channel}`;
    const hit = this.cache.get(key);
    if (hit && hit.until > this.now()) return hit.sender;
    const sender = this.build(tenantId, channel);
    this.cache.set(key, { until: this.now() + this.ttlMs, sender });
    // A failed read (Postgres down) is not remembered: the next request tries again.
    sender.catch(() => { if (this.cache.get(key)?.sender === sender) this.cache.delete(key); });
    return sender;
  }

  /** Forgets the tenant's senders; the next request reads its settings again. */
  invalidate(tenantId: string): void {
    for (const c of ['sms', 'msgapp', 'email'] as const) this.cache.delete(`${tenantId}\n${c}`);
  }

  /** A tenant's sealed secret as a source opened per send (the process keeps the ciphertext only); null when none is stored. */
  private inline(tenantId: string, name: string): Promise<SecretSource | null> {
    return this.o.secrets ? this.o.secrets.source(tenantId, name) : Promise.resolve(null);
  }

  /** The request id a provider's message id stands for, as recorded at send time; null when unknown or too old. */
  requestFor(tenantId: string, provider: string, providerRef: string): Promise<string | null> {
    return this.o.redis.get(keys.otpProviderRef(tenantId, provider, providerRef));
  }

  private async build(tenantId: string, channel: OtpChannelName): Promise<OtpSender | null> {
    if (channel === 'sms') {
      const cfg = await this.o.config.smsConfig(tenantId);
      const carrier = cfg ? SMS_CARRIERS[cfg.provider] : undefined;
      if (!cfg || !carrier) return null;
      let secret: SecretSource;
      if (cfg.credentials_set) {
        secret = (await this.inline(tenantId, 'sms.credentials')) ?? (() => null);
      } else {
        // Settings are checked when saved; this guards rows written before that rule (or by hand).
        const ref = cfg.credentials_ref;
        if (!ref || !isTenantEnvRef(ref, tenantId)) return null;
        secret = () => resolveEnvRef(ref);
      }
      return carrier.sender(cfg, this.o.failures, this.http, secret);
    }
    if (channel === 'email') {
      const cfg = await this.o.config.emailConfig(tenantId);
      if (!cfg || (!cfg.smtp_url_ref && !cfg.smtp_url_set && !this.o.smtpUrl)) return null;
      if (cfg.smtp_url_ref && !isTenantEnvRef(cfg.smtp_url_ref, tenantId)) return null;
      const inline = cfg.smtp_url_set ? (await this.inline(tenantId, 'email.smtp_url')) ?? (() => null) : undefined;
      return new EmailSender({ urlRef: cfg.smtp_url_ref ?? null, inline, serviceUrl: this.o.smtpUrl, from: cfg.from || this.o.smtpFrom }, this.o.failures, this.o.outbound);
    }
    const rec = await this.o.msgapp.get(tenantId);
    if (!rec || !rec.enabled) return null;
    const secret = (await this.o.msgapp.secretOf(rec, rec.type === 'B' ? 'access_token' : 'api_key')) ?? (() => null);
    return new RefRecordingSender(msgappSender(rec, this.o.failures, this.http, secret), this.o.redis);
  }
}

/**
 * Remembers which request a provider's message id belongs to, so that the
 * provider's delivery callback (which knows only its own id) can report the
 * request delivered. Written before the send's result is returned: a callback
 * can come back faster than our answer to the guest.
 */
class RefRecordingSender implements OtpSender {
  readonly channel: OtpChannelName;
  readonly provider: string;

  constructor(private readonly inner: OtpSender, private readonly redis: Redis) {
    this.channel = inner.channel;
    this.provider = inner.provider;
  }

  async send(msg: OtpMessage): Promise<SendResult> {
    const r = await this.inner.send(msg);
    if (r.ok && r.providerRef) {
      await this.redis.set(keys.otpProviderRef(msg.tenantId, this.provider, r.providerRef), msg.requestId, 'EX', PROVIDER_REF_TTL_SEC);
    }
    return r;
  }
}

/**
 * Problems with a tenant's SMS settings, one sentence each; the sign-in
 * settings service calls it before saving, so a template or number format the
 * carrier would refuse is reported to the operator, not to a guest.
 */
export function checkSmsConfig(cfg: SmsConfig): string[] {
  const carrier = SMS_CARRIERS[cfg.provider];
  return carrier ? carrier.check(cfg) : [`no SMS carrier named ${JSON.stringify(cfg.provider)}`];
}

/** Problems with a tenant's e-mail settings. */
export function checkEmailConfig(cfg: EmailConfig): string[] {
  const problems: string[] = [];
  if (cfg.smtp_url_ref !== undefined && !isEnvRef(cfg.smtp_url_ref)) problems.push('smtp_url_ref must be an env://NAME reference (the variable holds an smtp:// or smtps:// URL)');
  if (cfg.from !== undefined && !/^[^\r\n]{0,200}@[^\s@]+$|^[^\r\n<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(cfg.from)) problems.push('from must be an e-mail address, optionally as "Name <address>"');
  return problems;
}

/**
 * The targets of a tenant's SMS and e-mail settings, checked before saving:
 * the carrier's base_url and the SMTP server its reference names (when the
 * variable is set now; it is checked again at every send either way).
 * Throws 400 target_not_allowed naming the field, never the URL (it may hold a password).
 */
export async function checkSettingsTargets(outbound: OutboundPolicy, sms: SmsConfig | null, email: EmailConfig | null): Promise<void> {
  if (sms?.base_url) await outbound.checkUrl('sms.base_url', sms.base_url, ['https:', 'http:']);
  const smtp = email?.smtp_url_ref ? resolveEnvRef(email.smtp_url_ref) : null;
  if (smtp) await outbound.checkUrl('email.smtp_url_ref', smtp, ['smtp:', 'smtps:']);
}
