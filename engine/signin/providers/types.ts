/**
 * Placeholder with the exact interfaces of /work/briefs/otp-shared.md, so the
 * OTP core (engine/signin/otp/) builds on its own branch. Helper H owns this
 * file: at merge, H's version replaces this one.
 */
export type OtpChannelName = 'sms' | 'msgapp' | 'email';
export interface OtpMessage { tenantId: string; requestId: string; to: string /* E.164 phone or e-mail */; code: string; locale: 'tr' | 'en' }
export type SendResult =
  | { ok: true; providerRef?: string }
  | { ok: false; provider: string; code: string; retryable: boolean; detail: string };
export interface OtpSender { readonly channel: OtpChannelName; readonly provider: string; send(msg: OtpMessage): Promise<SendResult> }
/** Resolves the tenant's configured sender for a channel (null: not configured). Cached, invalidated on config change. */
export interface OtpSenders { forTenant(tenantId: string, channel: OtpChannelName): Promise<OtpSender | null> }
/** Called by a provider's delivery callback route once the provider's signature/secret checked out. */
export interface DeliveryReceiver { delivered(tenantId: string, requestId: string, channel: OtpChannelName): Promise<void> }
