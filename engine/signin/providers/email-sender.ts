import nodemailer from 'nodemailer';
import type { SecretSource } from '../../secrets/secret-store.js';
import { resolveEnvRef } from './env-ref.js';
import { missingSecret, type Failure, type ProviderFailures } from './provider-failures.js';
import type { OtpMessage, OtpSender, SendResult } from './types.js';

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
 * open for the odd guest. The URL is resolved for this send only.
 */
export class EmailSender implements OtpSender {
  readonly channel = 'email' as const;
  readonly provider = 'smtp';

  constructor(private readonly target: SmtpTarget, private readonly failures: ProviderFailures) {}

  async send(msg: OtpMessage): Promise<SendResult> {
    const fail = (f: Failure): SendResult => this.failures.report('email', this.provider, msg, f);
    const url = this.target.inline ? this.target.inline() : this.target.urlRef ? resolveEnvRef(this.target.urlRef) : this.target.serviceUrl;
    if (!url || !/^smtps?:\/\//.test(url)) return fail(missingSecret(this.target.inline ? 'email.smtp_url (inline)' : this.target.urlRef ?? 'SMTP_URL'));
    const t = EMAIL_TEXT[msg.locale];
    // nodemailer's own logger stays off (its default): it would print the AUTH exchange.
    const transport = nodemailer.createTransport({ url, connectionTimeout: SMTP_TIMEOUT_MS, greetingTimeout: SMTP_TIMEOUT_MS, socketTimeout: SMTP_TIMEOUT_MS });
    try {
      const info = await transport.sendMail({
        from: this.target.from, to: msg.to,
        subject: t.subject.replace('{{code}}', msg.code), text: t.text.replace('{{code}}', msg.code),
        headers: { 'X-Request-Id': msg.requestId },
      });
      return { ok: true, providerRef: info.messageId };
    } catch (err) {
      const e = err as { responseCode?: number; code?: string; message?: string };
      // 4xx replies and connection trouble may pass; a 5xx reply (bad recipient, relay refused) will not.
      const code = e.responseCode ? `smtp_${e.responseCode}` : (e.code ?? 'smtp_error');
      return fail({ code, meaning: smtpMeaning(e), retryable: !e.responseCode || e.responseCode < 500 });
    } finally {
      transport.close();
    }
  }
}

/** The server's reply without anything that could carry the URL's credentials. */
function smtpMeaning(e: { responseCode?: number; code?: string; message?: string }): string {
  if (e.responseCode) return `SMTP server replied ${e.responseCode}`;
  return `SMTP failure ${e.code ?? ''}`.trim();
}
