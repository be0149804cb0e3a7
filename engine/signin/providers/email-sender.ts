import { isIP } from 'node:net';
import nodemailer from 'nodemailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import type { Options as SmtpOptions } from 'nodemailer/lib/smtp-transport';
import { urlHost, type OutboundPolicy } from '../../net/outbound-target.js';
import type { SecretSource } from '../../secrets/secret-store.js';
import { resolveEnvRef } from './env-ref.js';
import { missingSecret, networkFailure, type Failure, type FailureKind, type ProviderFailures } from './provider-failures.js';
import type { MailMessage, OtpMessage, OtpSender, SendResult } from './types.js';

/** Subject and text per locale; `{{code}}` is the OTP. */
export const EMAIL_TEXT: Record<OtpMessage['locale'], { subject: string; text: string }> = {
  tr: {
    subject: 'Wi-Fi giriş kodunuz: {{code}}',
    text: 'Wi-Fi giriş kodunuz: {{code}}\n\nKod 5 dakika geçerlidir. Bu kodu siz istemediyseniz bu e-postayı dikkate almayın.\n',
  },
  en: {
    subject: 'Your Wi-Fi sign-in code: {{code}}',
    text: 'Your Wi-Fi sign-in code: {{code}}\n\nThe code is valid for 5 minutes. If you did not ask for it, ignore this e-mail.\n',
  },
};

/** Where the mail goes out: a tenant's own SMTP server (by reference) or the service-wide SMTP_URL. */
export interface SmtpTarget {
  /** `env://NAME` holding the tenant's smtp(s):// URL; null: use `serviceUrl`. */
  urlRef: string | null;
  /** The tenant's URL given inline (sealed in tenant_secrets), opened per send; takes precedence over urlRef. */
  inline?: SecretSource | undefined;
  serviceUrl: string | undefined;
  from: string;
}

/** Seconds nodemailer may wait for the server at each step; the guest is waiting. */
const SMTP_TIMEOUT_MS = 10_000;

/**
 * OTP by e-mail over SMTP. A transport per send: an OTP is one message, and a
 * pooled connection per tenant would hold sockets (and the URL's password)
 * open for the odd guest. The URL is resolved for this send only, its host
 * resolved and checked by the outbound policy, and nodemailer is handed the
 * address checked (with the name for SNI and the certificate), so it neither
 * resolves the name again nor follows the URL's own `?host=`, `?service=` or
 * `?proxy=` elsewhere. A tenant's server must be public (ALLOW_PRIVATE_TARGETS
 * aside); the service-wide SMTP_URL is the operator's and may be private.
 */
export class EmailSender implements OtpSender {
  readonly channel = 'email' as const;
  readonly provider = 'smtp';

  constructor(private readonly target: SmtpTarget, private readonly failures: ProviderFailures, private readonly outbound: OutboundPolicy) {}

  send(msg: OtpMessage): Promise<SendResult> {
    const t = EMAIL_TEXT[msg.locale];
    return this.mail({ tenantId: msg.tenantId, requestId: msg.requestId, to: msg.to, subject: t.subject.replace('{{code}}', msg.code), text: t.text.replace('{{code}}', msg.code) });
  }

  /** One message through the tenant's server (or SMTP_URL), its address checked and pinned as for a code. */
  async mail(msg: MailMessage): Promise<SendResult> {
    const fail = (f: Failure): SendResult => this.failures.report('email', this.provider, { tenantId: msg.tenantId, requestId: msg.requestId, to: msg.to, code: '', locale: 'en' }, f);
    const url = this.target.inline ? this.target.inline() : this.target.urlRef ? resolveEnvRef(this.target.urlRef) : this.target.serviceUrl;
    if (!url || !/^smtps?:\/\//.test(url)) return fail(missingSecret(this.target.inline ? 'email.smtp_url (inline)' : this.target.urlRef ?? 'SMTP_URL'));
    let options;
    try {
      options = await this.pinned(url);
    } catch (err) {
      return fail(networkFailure(err));
    }
    // nodemailer's own logger stays off (its default): it would print the AUTH exchange.
    const transport = nodemailer.createTransport({ ...options, connectionTimeout: SMTP_TIMEOUT_MS, greetingTimeout: SMTP_TIMEOUT_MS, socketTimeout: SMTP_TIMEOUT_MS });
    try {
      const info = await transport.sendMail({
        from: this.target.from, to: msg.to,
        subject: msg.subject, text: msg.text,
        headers: { 'X-Request-Id': msg.requestId },
      });
      return { ok: true, providerRef: info.messageId };
    } catch (err) {
      const e = err as { responseCode?: number; code?: string; originalCode?: string; message?: string };
      // 4xx replies and connection trouble may pass; a 5xx reply (bad recipient, relay refused) will not.
      const code = e.responseCode ? `smtp_${e.responseCode}` : (e.code ?? 'smtp_error');
      return fail({ kind: smtpKind(e), code, meaning: smtpMeaning(e), retryable: !e.responseCode || e.responseCode < 500 });
    } finally {
      transport.close();
    }
  }

  /** nodemailer's options for `url`, connecting to the checked address of its host. */
  private pinned(url: string): Promise<SmtpOptions> {
    // A tenant's server (a reference or inline) is the tenant's choice; SMTP_URL the operator's.
    return pinnedSmtpOptions(url, this.target.urlRef || this.target.inline ? this.outbound : this.outbound.operatorChosen());
  }
}

/**
 * nodemailer's options for an smtp(s):// `url`, connecting to the address of
 * its host that `policy` resolved and checked (the name kept for SNI and the
 * certificate). Also the scheduled report mail's transport (engine/schedules/).
 */
export async function pinnedSmtpOptions(url: string, policy: OutboundPolicy): Promise<SmtpOptions> {
  const host = urlHost(url);
  const [first] = await policy.resolve(host);
  const u = parseConnectionUrl(url);
  const servername = isIP(host) ? undefined : host;
  // Only what a mail server's URL should say; anything else in its query (host, service, proxy, getSocket...) is dropped.
  return {
    host: first!.address, port: u.port, secure: u.secure, auth: u.auth, servername,
    tls: { ...u.tls, servername }, requireTLS: u.requireTLS, ignoreTLS: u.ignoreTLS, authMethod: u.authMethod, name: u.name,
  } as SmtpOptions;
}

/** The fixed kind of an SMTP failure and a meaning without anything of the URL (the scheduled report mail's run error). */
export function smtpFailure(err: unknown): { code: string; meaning: string; retryable: boolean } {
  const e = err as { responseCode?: number; code?: string; message?: string };
  return { code: e.responseCode ? `smtp_${e.responseCode}` : (e.code ?? 'smtp_error'), meaning: smtpMeaning(e), retryable: !e.responseCode || e.responseCode < 500 };
}

/** The fixed kind of an SMTP failure: the server's reply class, or how the connection failed. */
function smtpKind(e: { responseCode?: number; code?: string; originalCode?: string }): FailureKind {
  if (e.responseCode) return e.responseCode >= 500 ? 'smtp_5xx' : 'smtp_4xx';
  if (e.code === 'EAUTH') return 'credentials_rejected';
  if (e.code === 'ETLS') return 'tls';
  if (e.code === 'EDNS') return 'dns';
  if (e.code === 'ETIMEDOUT') return 'timeout';
  // nodemailer keeps the socket's own code (ECONNREFUSED...) as originalCode.
  return networkFailure(Object.assign(new Error(''), { code: e.originalCode ?? e.code })).kind;
}

/** The server's reply without anything that could carry the URL's credentials. */
function smtpMeaning(e: { responseCode?: number; code?: string; message?: string }): string {
  if (e.responseCode) return `SMTP server replied ${e.responseCode}`;
  return `SMTP failure ${e.code ?? ''}`.trim();
}
