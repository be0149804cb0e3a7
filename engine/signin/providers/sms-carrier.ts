import type { SecretSource } from '../../secrets/secret-store.js';
import type { ProviderFailures } from './provider-failures.js';
import type { ProviderHttp } from './provider-http.js';
import type { OtpMessage, OtpSender, SmsConfig } from './types.js';

/**
 * An SMS carrier: builds its sender from a tenant's SMS settings and checks
 * those settings when they are saved. Netgsm is the first; İleti Merkezi and
 * Verimor are later entries of SMS_CARRIERS with the same two functions.
 */
export interface SmsCarrier {
  readonly name: SmsConfig['provider'];
  /** Problems with the settings, one sentence each (empty: fine). Called at configuration time. */
  check(config: SmsConfig): string[];
  /** `secret` yields the `usercode:password` pair at send time (from its env:// reference or sealed inline). */
  sender(config: SmsConfig, failures: ProviderFailures, http: ProviderHttp, secret: SecretSource): OtpSender;
}

/** The SMS text per locale; `{{code}}` is the OTP. Kept to what every carrier route takes (see checkSmsText). */
export const SMS_TEXT: Record<OtpMessage['locale'], string> = {
  tr: 'Wi-Fi giris kodunuz: {{code}}. Kod 5 dakika gecerlidir.',
  en: 'Your Wi-Fi sign-in code: {{code}}. Valid for 5 minutes.',
};

export function smsText(msg: OtpMessage): string {
  return SMS_TEXT[msg.locale].replace('{{code}}', msg.code);
}

/** The characters of GSM 03.38's default alphabet that are also ASCII (no escapes, no extension table). */
const GSM_ASCII = /^[A-Za-z0-9 @$_!"#%&'()*+,\-./:;<=>?\n\r]*$/;

/**
 * Problems that stop `text` going as one plain segment: only the ASCII part of
 * the GSM 7-bit alphabet (Netgsm's OTP route refuses Turkish letters and
 * Unicode), at most 160 characters. An OTP in two segments may arrive as two
 * messages or late, so this is checked when the template is set, not per send.
 */
export function checkSmsText(text: string): string[] {
  const problems: string[] = [];
  if (!GSM_ASCII.test(text)) {
    const bad = [...new Set([...text].filter((c) => !GSM_ASCII.test(c)))].join('');
    problems.push(`the SMS text may hold only plain ASCII letters, digits and punctuation; it holds ${JSON.stringify(bad)}`);
  }
  if (text.length > 160) problems.push(`the SMS text must fit one segment (160 characters); it has ${text.length}`);
  return problems;
}

/** A Turkish E.164 number as the domestic 10 digits Netgsm's OTP route takes (+905321234567 -> 5321234567); null if not Turkish. */
export function domesticTr(e164: string): string | null {
  const m = /^\+90(\d{10})$/.exec(e164);
  return m ? m[1]! : null;
}
