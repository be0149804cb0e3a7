import type { SecretSource } from '../../secrets/secret-store.js';
import { basicPair, resolveEnvRef } from './env-ref.js';
import type { MsgappProvider } from './msgapp-provider.js';
import { field, joinUrl, type ProviderAnswer, type ProviderHttp } from './provider-http.js';
import { httpKind, missingSecret, networkFailure, type Failure, type FailureKind, type ProviderFailures } from './provider-failures.js';
import type { OtpMessage, OtpSender, SendResult } from './types.js';

/** Type C answer codes other than "00", as the contract lists them. */
export const TYPE_C_CODES: Record<string, string> = {
  '30': 'credentials or IP rejected',
  '60': 'package not defined',
  '70': 'parameter error',
  '80': 'template not found',
  '100': 'system error',
};
const TYPE_C_KINDS: Record<string, FailureKind> = { '30': 'credentials_rejected', '100': 'provider_error' };

/** What one provider type does differently: where, with which credential, which body, and how to read the answer. */
interface Call {
  /** The reference holding the credential, or the inline field's name: for the failure's wording only. */
  ref: string | null;
  url: (msg: OtpMessage) => string;
  /** Headers from the resolved secret; null: the secret is not of the expected form. */
  headers: (secret: string) => Record<string, string> | null;
  body: (msg: OtpMessage) => unknown;
  /** ok with the provider's message id, or the failure. */
  read: (a: ProviderAnswer) => { ok: true; ref: string } | Failure;
}

/**
 * A messaging-app sender: one JSON POST per code. The secret is resolved from
 * its env:// reference for this send only and goes nowhere but the header.
 */
class MsgappSender implements OtpSender {
  readonly channel = 'msgapp' as const;

  constructor(readonly provider: string, private readonly call: Call, private readonly failures: ProviderFailures, private readonly http: ProviderHttp,
    private readonly secretOf: SecretSource) {}

  async send(msg: OtpMessage): Promise<SendResult> {
    const fail = (f: Failure): SendResult => this.failures.report('msgapp', this.provider, msg, f);
    const ref = this.call.ref ?? '';
    const secret = this.secretOf();
    const headers = secret ? this.call.headers(secret) : null;
    if (!headers) return fail(missingSecret(ref || '(no reference)'));
    let answer;
    try {
      answer = await this.http.postJson(this.call.url(msg), headers, this.call.body(msg));
    } catch (err) {
      return fail(networkFailure(err));
    }
    const r = this.call.read(answer);
    return 'ok' in r ? { ok: true, providerRef: r.ref || undefined } : fail(r);
  }
}

const ok2xx = (a: ProviderAnswer): boolean => a.status >= 200 && a.status < 300;
const httpFailure = (a: ProviderAnswer, code: string): Failure =>
  code ? { kind: httpKind(a.status), code, meaning: 'refused by the provider', retryable: a.status >= 500 }
    : { kind: httpKind(a.status), code: `http_${a.status}`, meaning: `HTTP ${a.status} without an error code`, retryable: a.status >= 500 };

/**
 * Type C (the SMS carrier's messaging-app product): exactly
 * `POST {base_url}/v1/otp`, HTTP Basic with the `usercode:password` pair, body
 * `{to: <E.164>, code}` and nothing else; the template (netgsm_verify_code)
 * is fixed at the carrier. Success is a 2xx whose JSON `code` is "00".
 */
function typeC(p: MsgappProvider): Call {
  return {
    ref: p.api_key_set ? 'api_key (inline)' : p.api_key_ref,
    url: () => joinUrl(p.base_url, '/v1/otp'),
    headers: (secret) => {
      const pair = basicPair(secret);
      return pair ? { authorization: pair.header } : null;
    },
    body: (msg) => ({ to: msg.to, code: msg.code }),
    read: (a) => {
      const code = field(a.json, 'code');
      if (ok2xx(a) && code === '00') return { ok: true, ref: field(a.json, 'jobid') };
      if (!code) return httpFailure(a, '');
      return { kind: TYPE_C_KINDS[code] ?? 'refused', code, meaning: TYPE_C_CODES[code] ?? 'unknown type C code', retryable: code === '100' };
    },
  };
}

/**
 * Type A (API key plus business device id, provider template id). No public
 * contract fixes this call; it is a plausible reseller API, documented here:
 * `POST {base_url}/v1/messages/template`, header `X-API-Key`, body
 * `{device_id, to, template_id, parameters: [code], reference: request_id}`;
 * success a 2xx with `{message_id}`; failure `{error: {code}}` or `{code}`.
 */
function typeA(p: MsgappProvider): Call {
  return {
    ref: p.api_key_set ? 'api_key (inline)' : p.api_key_ref,
    url: () => joinUrl(p.base_url, '/v1/messages/template'),
    headers: (secret) => ({ 'x-api-key': secret }),
    body: (msg) => ({ device_id: p.business_device_id, to: msg.to, template_id: p.template_id, parameters: [msg.code], reference: msg.requestId }),
    read: (a) => (ok2xx(a) ? { ok: true, ref: field(a.json, 'message_id') } : httpFailure(a, errorCode(a.json))),
  };
}

/**
 * Type B (direct: system-user access token plus phone number id, template
 * `name:lang`), shaped after the business-messaging cloud APIs:
 * `POST {base_url}/{phone_number_id}/messages` with `Authorization: Bearer`,
 * a template message whose one body parameter is the code, and our request id
 * as opaque callback data; success a 2xx with `{messages: [{id}]}`, failure
 * `{error: {code, message}}`.
 */
function typeB(p: MsgappProvider): Call {
  const [name, lang] = (p.template_name ?? ':').split(':') as [string, string];
  return {
    ref: p.access_token_set ? 'access_token (inline)' : p.access_token_ref,
    url: () => joinUrl(p.base_url, `/${encodeURIComponent(p.phone_number_id ?? '')}/messages`),
    headers: (secret) => ({ authorization: `Bearer ${secret}` }),
    body: (msg) => ({
      messaging_product: 'whatsapp', recipient_type: 'individual', to: msg.to.replace(/^\+/, ''), type: 'template',
      template: { name, language: { code: lang }, components: [{ type: 'body', parameters: [{ type: 'text', text: msg.code }] }] },
      biz_opaque_callback_data: msg.requestId,
    }),
    read: (a) => {
      if (!ok2xx(a)) return httpFailure(a, errorCode(a.json));
      const messages = (a.json as { messages?: { id?: unknown }[] } | null)?.messages;
      return { ok: true, ref: typeof messages?.[0]?.id === 'string' ? messages[0].id : '' };
    },
  };
}

function errorCode(json: unknown): string {
  if (json === null || typeof json !== 'object') return '';
  const e = (json as { error?: unknown }).error;
  return field(e, 'code') || field(json, 'code');
}

/** The sender of a tenant's messaging-app provider record; `secret` yields its key (A, C) or token (B) per send. */
export function msgappSender(p: MsgappProvider, failures: ProviderFailures, http: ProviderHttp, secret: SecretSource = () => envSecret(p)): OtpSender {
  const call = p.type === 'C' ? typeC(p) : p.type === 'A' ? typeA(p) : typeB(p);
  return new MsgappSender(p.provider, call, failures, http, secret);
}

/** The record's key (A, C) or token (B) from its env:// reference: the default where no inline secret is looked up. */
function envSecret(p: MsgappProvider): string | null {
  const ref = p.type === 'B' ? p.access_token_ref : p.api_key_ref;
  return ref ? resolveEnvRef(ref) : null;
}
