import type { SecretSource } from '../../secrets/secret-store.js';
import { basicPair, isEnvRef, resolveEnvRef } from './env-ref.js';
import { field, joinUrl, type ProviderHttp } from './provider-http.js';
import { httpKind, missingSecret, networkFailure, type Failure, type FailureKind, type ProviderFailures } from './provider-failures.js';
import { checkSmsText, domesticTr, SMS_TEXT, smsText, type SmsCarrier } from './sms-carrier.js';
import type { OtpMessage, OtpSender, SendResult, SmsConfig } from './types.js';

/** Netgsm's production API; a tenant's `base_url` overrides it (tests point it at a fake carrier). */
export const NETGSM_BASE_URL = 'https://api.netgsm.com.tr';
/** The provider name on Netgsm SMS failures and metrics; type C (messaging app over Netgsm) is plain "netgsm". */
export const NETGSM_SMS = 'netgsm_sms';

/** Netgsm's OTP SMS answer codes other than "00", as its REST v2 documentation lists them, with their kind. */
const SMS_CODES: Record<string, [FailureKind, string]> = {
  '20': ['refused', 'message text problem or too long for one segment'],
  '30': ['credentials_rejected', 'credentials or IP rejected (usercode, password or API access)'],
  '40': ['refused', 'sender name (msgheader) not defined for the account'],
  '50': ['recipient_refused', 'account not allowed to send to this number'],
  '60': ['refused', 'no OTP SMS package defined for the account'],
  '70': ['refused', 'parameter error'],
  '80': ['rate_limited', 'send limit exceeded'],
  '100': ['provider_error', 'system error'],
};

/**
 * One OTP SMS through Netgsm's REST v2 OTP route: `POST {base_url}/sms/rest/v2/otp`,
 * HTTP Basic with the `usercode:password` pair, JSON `{msgheader, msg, no}`,
 * success `{"code": "00", "jobid": ...}`. The route takes one ASCII segment
 * to a domestic number (10 digits, no +90): the text is fixed and checked at
 * start-up (SMS_TEXT), the number converted here.
 */
export class NetgsmSmsSender implements OtpSender {
  readonly channel = 'sms' as const;
  readonly provider = NETGSM_SMS;
  private readonly url: string;

  /** `secret` yields `usercode:password` per send; by default from the config's env:// reference. */
  constructor(private readonly config: SmsConfig, private readonly failures: ProviderFailures, private readonly http: ProviderHttp,
    private readonly secret: SecretSource = () => (config.credentials_ref ? resolveEnvRef(config.credentials_ref) : null)) {
    this.url = joinUrl(config.base_url || NETGSM_BASE_URL, '/sms/rest/v2/otp');
  }

  async send(msg: OtpMessage): Promise<SendResult> {
    const fail = (f: Failure): SendResult => this.failures.report('sms', this.provider, msg, f);
    const no = domesticTr(msg.to);
    if (!no) return fail({ kind: 'recipient_refused', code: 'number_not_domestic', meaning: 'Netgsm\'s OTP route sends to Turkish (+90) numbers only', retryable: false });
    const secret = this.secret();
    const auth = secret ? basicPair(secret) : null;
    if (!auth) return fail(missingSecret(this.config.credentials_ref ?? 'sms.credentials (inline)'));
    let answer;
    try {
      answer = await this.http.postJson(this.url, { authorization: auth.header }, { msgheader: this.config.sender || auth.user, msg: smsText(msg), no });
    } catch (err) {
      return fail(networkFailure(err));
    }
    const code = field(answer.json, 'code');
    if (answer.status >= 200 && answer.status < 300 && code === '00') return { ok: true, providerRef: field(answer.json, 'jobid') || undefined };
    if (!code) return fail({ kind: httpKind(answer.status), code: `http_${answer.status}`, meaning: 'answer without a Netgsm code', retryable: answer.status >= 500 });
    const [kind, meaning] = SMS_CODES[code] ?? ['refused', 'unknown Netgsm code'];
    return fail({ kind, code, meaning, retryable: code === '100' });
  }
}

/** Netgsm as an SMS carrier: its settings check and its sender. */
export const NETGSM_CARRIER: SmsCarrier = {
  name: 'netgsm',
  check: (config) => {
    const problems: string[] = [];
    if (config.credentials_ref !== undefined ? !isEnvRef(config.credentials_ref) : config.credentials_set !== true) {
      problems.push('credentials_ref must be an env://NAME reference (the variable holds usercode:password), or give credentials inline');
    }
    // (base_url's target is checked by the caller, asynchronously: checkSettingsTargets in provider-registry.ts.)
    if (config.base_url !== undefined && !/^https?:\/\/[^\s/]+/.test(config.base_url)) problems.push('base_url must be an http(s) URL');
    // Netgsm sender names (msgheader) are at most 11 characters of the same plain alphabet.
    if (config.sender !== undefined && (config.sender.length > 11 || checkSmsText(config.sender).length > 0 || config.sender.trim() === '')) {
      problems.push('sender must be 1-11 plain ASCII characters, as registered with Netgsm');
    }
    return problems;
  },
  sender: (config, failures, http, secret) => new NetgsmSmsSender(config, failures, http, secret),
};

/** The fixed texts, with the longest code, must go as one ASCII segment; a bad edit fails at start-up, not on a guest. */
for (const [locale, text] of Object.entries(SMS_TEXT)) {
  const problems = checkSmsText(text.replace('{{code}}', '000000'));
  if (problems.length) throw new Error(`SMS_TEXT.${locale}: ${problems.join('; ')}`);
}
