/**
 * The ports between OTP delivery (this folder) and the OTP flows
 * (engine/signin/otp/): a sender per channel, resolved per tenant, and the
 * receiver a provider's delivery callback reports to. Shapes fixed by the
 * shared design (briefs/otp-shared.md); other folders import only these.
 */
export type OtpChannelName = 'sms' | 'msgapp' | 'email';

export interface OtpMessage { tenantId: string; requestId: string; to: string /* E.164 phone or e-mail */; code: string; locale: 'tr' | 'en' }

export type SendResult =
  | { ok: true; providerRef?: string }
  /** `kind` from a fixed set (provider-failures.ts); `code` is the provider's own, for the log only. */
  | { ok: false; provider: string; kind: string; code: string; retryable: boolean; detail: string };

/** A message of its own (not a code) sent through a tenant's e-mail settings: a sponsor's approval request. */
export interface MailMessage { tenantId: string; requestId: string; to: string; subject: string; text: string }

export interface OtpSender {
  readonly channel: OtpChannelName; readonly provider: string; send(msg: OtpMessage): Promise<SendResult>;
  /** E-mail senders only: a message with its own subject and text, through the same server and checks as a code. */
  mail?(msg: MailMessage): Promise<SendResult>;
}

/** Resolves the tenant's configured sender for a channel (null: not configured). Cached, invalidated on config change. */
export interface OtpSenders { forTenant(tenantId: string, channel: OtpChannelName): Promise<OtpSender | null> }

/** Called by a provider's delivery callback route once the provider's signature/secret checked out. */
export interface DeliveryReceiver { delivered(tenantId: string, requestId: string, channel: OtpChannelName): Promise<void> }

/** A tenant's SMS settings (the `sms` part of `PUT /v1/settings/sign-in`), as the registry needs them. */
export interface SmsConfig {
  provider: 'netgsm';
  /** Absent: the carrier's production address. */
  base_url?: string | undefined;
  /** `env://NAME`; the variable holds `usercode:password`. Absent when given inline (credentials_set). */
  credentials_ref?: string | undefined;
  /** The `usercode:password` pair was given inline and is sealed in tenant_secrets (sms.credentials). */
  credentials_set?: boolean | undefined;
  /** The registered sender name (Netgsm `msgheader`); absent: the usercode, Netgsm's default header. */
  sender?: string | undefined;
}

/** A tenant's e-mail settings (the `email` part of `PUT /v1/settings/sign-in`). */
export interface EmailConfig {
  /** `env://NAME` holding an smtp:// or smtps:// URL; absent: the service-wide SMTP_URL. */
  smtp_url_ref?: string | undefined;
  /** The smtp(s):// URL was given inline and is sealed in tenant_secrets (email.smtp_url). */
  smtp_url_set?: boolean | undefined;
  from?: string | undefined;
}

/**
 * Where the registry reads a tenant's SMS and e-mail settings. The sign-in
 * settings service (engine/signin/otp/, table sign_in_settings) implements it;
 * null: the tenant has not configured that channel.
 */
export interface SignInConfigSource {
  smsConfig(tenantId: string): Promise<SmsConfig | null>;
  emailConfig(tenantId: string): Promise<EmailConfig | null>;
}
