import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Metrics } from '../../engine/metrics.js';
import { OutboundPolicy } from '../../engine/net/outbound-target.js';
import { EmailSender } from '../../engine/signin/providers/email-sender.js';
import type { MsgappProvider } from '../../engine/signin/providers/msgapp-provider.js';
import { msgappSender, TYPE_C_CODES } from '../../engine/signin/providers/msgapp-senders.js';
import { NetgsmSmsSender } from '../../engine/signin/providers/netgsm-sms.js';
import { PROVIDER_ERRORS_METRIC, ProviderFailures } from '../../engine/signin/providers/provider-failures.js';
import { ProviderHttp } from '../../engine/signin/providers/provider-http.js';
import type { OtpMessage } from '../../engine/signin/providers/types.js';
import { FakeCarrier, SMS_PATH, TYPE_C_PATH } from '../support/fake-carrier.js';
import { capturingLogger } from '../support/log-capture.js';
import { SmtpListener } from '../support/smtp-listener.js';

/**
 * Each provider adapter against a fake carrier on loopback and a real SMTP
 * listener: what goes on the wire (auth header, body), how answers map to
 * SendResults, and that a refusal is one log line naming the code's meaning
 * and one metric increment, with no credential anywhere in the logs.
 */
const SECRET = 'usr8812:s3cr3t-Pa55w0rd';
const ENV = `PROVIDER_TEST_${process.pid}`;
const basic = 'Basic ' + Buffer.from(SECRET).toString('base64');
// The fake carrier and SMTP listener are on loopback (ALLOW_PRIVATE_TARGETS=true); the refusals are in outbound-*.test.ts.
const outbound = new OutboundPolicy({ allowPrivate: true });
const http = new ProviderHttp(outbound);
const msg = (over: Partial<OtpMessage> = {}): OtpMessage => ({ tenantId: 'ten_test', requestId: 'req_1', to: '+905321234567', code: '482913', locale: 'tr', ...over });

function typeC(base: string, over: Partial<MsgappProvider> = {}): MsgappProvider {
  return {
    tenant_id: 'ten_test', type: 'C', provider: 'netgsm', enabled: true, base_url: base, api_key_ref: `env://${ENV}`,
    business_device_id: null, template_id: null, access_token_ref: null, phone_number_id: null, template_name: null,
    callback_secret_ref: null, api_key_set: false, access_token_set: false, callback_secret_set: false, updated_at: new Date().toISOString(), ...over,
  };
}

describe('OTP provider adapters', () => {
  let carrier: FakeCarrier;
  let smtp: SmtpListener;
  let metrics: Metrics;
  let captured: ReturnType<typeof capturingLogger>;
  let failures: ProviderFailures;

  beforeAll(async () => {
    process.env[ENV] = SECRET;
    carrier = await FakeCarrier.start();
    smtp = await SmtpListener.start();
  });
  afterAll(async () => {
    delete process.env[ENV];
    await carrier.close();
    await smtp.close();
  });
  const fresh = (): void => {
    carrier.reset();
    metrics = new Metrics();
    captured = capturingLogger();
    failures = new ProviderFailures(captured.log, metrics);
  };
  afterEach(() => {
    // Whatever a test sent or refused: the secret's value never reaches a log line.
    expect(captured.lines.join('')).not.toContain('s3cr3t');
    expect(captured.lines.join('')).not.toContain(Buffer.from(SECRET).toString('base64'));
  });

  describe('Netgsm SMS (REST v2 OTP route)', () => {
    it('posts {msgheader, msg, no} with HTTP Basic and a domestic number; "00" is success with the jobid', async () => {
      fresh();
      const s = new NetgsmSmsSender({ provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${ENV}`, sender: 'OTELWIFI' }, failures, http);
      const r = await s.send(msg());
      expect(r).toEqual({ ok: true, providerRef: '1' });
      const [req] = carrier.to(SMS_PATH);
      expect(req!.method).toBe('POST');
      expect(req!.headers.authorization).toBe(basic);
      expect(req!.json).toEqual({ msgheader: 'OTELWIFI', msg: 'Wi-Fi giris kodunuz: 482913. Kod 5 dakika gecerlidir.', no: '5321234567' });
      expect(/^[\x20-\x7e]*$/.test(req!.json.msg)).toBe(true);
      expect(carrier.lastCode('+905321234567')).toBe('482913');
    });

    it('uses the usercode as msgheader when no sender is set, and English text for locale en', async () => {
      fresh();
      const s = new NetgsmSmsSender({ provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${ENV}` }, failures, http);
      expect((await s.send(msg({ locale: 'en' }))).ok).toBe(true);
      expect(carrier.to(SMS_PATH)[0]!.json).toMatchObject({ msgheader: 'usr8812', msg: 'Your Wi-Fi sign-in code: 482913. Valid for 5 minutes.' });
    });

    it('maps another code to a failure with that code, a log line and the metric', async () => {
      fresh();
      carrier.answerNext(SMS_PATH, { status: 200, body: { code: '40' } });
      const s = new NetgsmSmsSender({ provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${ENV}` }, failures, http);
      const r = await s.send(msg());
      expect(r).toMatchObject({ ok: false, provider: 'netgsm_sms', code: '40', retryable: false });
      // The metric's label is the failure's kind, from a fixed set; the carrier's own code stays in the log.
      expect(r).toMatchObject({ kind: 'refused' });
      expect(await metrics.render()).toContain(`guestwifi_${PROVIDER_ERRORS_METRIC}{provider="netgsm_sms",code="refused"} 1`);
      expect(captured.lines.some((l) => l.includes('code 40') && l.includes('msgheader'))).toBe(true);
    });

    it('refuses a non-Turkish number before calling the carrier', async () => {
      fresh();
      const s = new NetgsmSmsSender({ provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${ENV}` }, failures, http);
      expect(await s.send(msg({ to: '+4915112345678' }))).toMatchObject({ ok: false, code: 'number_not_domestic' });
      expect(carrier.requests).toHaveLength(0);
    });

    it('an unset variable is credentials_unset, naming the reference only', async () => {
      fresh();
      const s = new NetgsmSmsSender({ provider: 'netgsm', base_url: carrier.url, credentials_ref: 'env://NO_SUCH_PROVIDER_VAR' }, failures, http);
      expect(await s.send(msg())).toMatchObject({ ok: false, code: 'credentials_unset', retryable: false });
      expect(carrier.requests).toHaveLength(0);
      expect(captured.lines.join('')).toContain('env://NO_SUCH_PROVIDER_VAR');
    });
  });

  describe('messaging-app type C', () => {
    it('posts exactly {to, code} to {base_url}/v1/otp with HTTP Basic; 2xx with code "00" is success', async () => {
      fresh();
      const r = await msgappSender(typeC(carrier.url), failures, http).send(msg());
      expect(r).toEqual({ ok: true, providerRef: '1' });
      const [req] = carrier.to(TYPE_C_PATH);
      expect(req!.headers.authorization).toBe(basic);
      expect(req!.json).toEqual({ to: '+905321234567', code: '482913' });
    });

    it.each(Object.entries(TYPE_C_CODES))('code %s (%s): log line, metric, failure', async (code, meaning) => {
      fresh();
      carrier.answerNext(TYPE_C_PATH, { status: 200, body: { code } });
      const r = await msgappSender(typeC(carrier.url), failures, http).send(msg());
      const kind = ({ '30': 'credentials_rejected', '100': 'provider_error' } as Record<string, string>)[code] ?? 'refused';
      expect(r).toEqual({ ok: false, provider: 'netgsm', kind, code, retryable: code === '100', detail: meaning });
      expect(metrics.value(PROVIDER_ERRORS_METRIC, `netgsm\u001f${kind}`)).toBe(1);
      expect(await metrics.render()).toContain(`guestwifi_${PROVIDER_ERRORS_METRIC}{provider="netgsm",code="${kind}"} 1`);
      const line = captured.lines.map((l) => JSON.parse(l)).find((l) => l.code === code);
      expect(line).toMatchObject({ level: 40, provider: 'netgsm', channel: 'msgapp', meaning, otp_request_id: 'req_1' });
      expect(line.msg).toBe(`msgapp provider netgsm refused the send: ${kind}, code ${code} (${meaning})`);
      // The guest's phone is personal data: not in the log line.
      expect(JSON.stringify(line)).not.toContain('5321234567');
    });

    it('a 2xx without code "00" is not success; a non-JSON 5xx is retryable', async () => {
      fresh();
      carrier.answerNext(TYPE_C_PATH, { status: 200, body: { status: 'ok' } });
      expect(await msgappSender(typeC(carrier.url), failures, http).send(msg())).toMatchObject({ ok: false, code: 'http_200', retryable: false });
      carrier.answerNext(TYPE_C_PATH, { status: 503, body: 'Service Unavailable' });
      expect(await msgappSender(typeC(carrier.url), failures, http).send(msg())).toMatchObject({ ok: false, code: 'http_503', retryable: true });
    });

    it('an unreachable carrier is a retryable network failure', async () => {
      fresh();
      const r = await msgappSender(typeC('http://127.0.0.1:1'), failures, http).send(msg());
      expect(r).toMatchObject({ ok: false, kind: 'connect_refused', code: 'ECONNREFUSED', retryable: true });
      expect(metrics.value(PROVIDER_ERRORS_METRIC, 'netgsm\u001fconnect_refused')).toBe(1);
    });
  });

  describe('messaging-app types A and B', () => {
    it('type A: X-API-Key, device id, template id, the code as parameter and our request id as reference', async () => {
      fresh();
      carrier.answerNext('/v1/messages/template', { status: 202, body: { message_id: 'a-77' } });
      const p = typeC(carrier.url, { type: 'A', provider: 'acme', business_device_id: 'dev-9', template_id: 'tpl-3' });
      expect(await msgappSender(p, failures, http).send(msg())).toEqual({ ok: true, providerRef: 'a-77' });
      const [req] = carrier.to('/v1/messages/template');
      expect(req!.headers['x-api-key']).toBe(SECRET);
      expect(req!.json).toEqual({ device_id: 'dev-9', to: '+905321234567', template_id: 'tpl-3', parameters: ['482913'], reference: 'req_1' });
    });

    it('type B: Bearer token to /{phone_number_id}/messages with the template name:lang; an error body is a failure', async () => {
      fresh();
      carrier.answerNext('/1234/messages', { status: 200, body: { messages: [{ id: 'wamid.X' }] } });
      const p = typeC(carrier.url, { type: 'B', provider: 'direct', api_key_ref: null, access_token_ref: `env://${ENV}`, phone_number_id: '1234', template_name: 'wifi_code:tr' });
      expect(await msgappSender(p, failures, http).send(msg())).toEqual({ ok: true, providerRef: 'wamid.X' });
      const [req] = carrier.to('/1234/messages');
      expect(req!.headers.authorization).toBe(`Bearer ${SECRET}`);
      expect(req!.json).toMatchObject({ to: '905321234567', type: 'template', biz_opaque_callback_data: 'req_1',
        template: { name: 'wifi_code', language: { code: 'tr' }, components: [{ type: 'body', parameters: [{ type: 'text', text: '482913' }] }] } });
      carrier.answerNext('/1234/messages', { status: 400, body: { error: { code: 131026, message: 'undeliverable' } } });
      expect(await msgappSender(p, failures, http).send(msg())).toMatchObject({ ok: false, provider: 'direct', code: '131026' });
    });
  });

  describe('e-mail over SMTP', () => {
    it("sends the code through the tenant's own server (env:// URL with a login), in Turkish, valid 5 minutes", async () => {
      fresh();
      const ref = `${ENV}_SMTP`;
      process.env[ref] = smtp.urlWithLogin('mailer', 's3cr3t-smtp');
      try {
        const s = new EmailSender({ urlRef: `env://${ref}`, serviceUrl: undefined, from: 'Otel Wi-Fi <wifi@otel.example>' }, failures, outbound);
        const r = await s.send(msg({ to: 'guest@example.org' }));
        expect(r.ok).toBe(true);
        const m = await smtp.waitFor('guest@example.org');
        expect(m.from).toBe('wifi@otel.example');
        expect(m.user).toBe('mailer');
        expect(m.subject).toBe('Wi-Fi giriş kodunuz: 482913');
        expect(m.text).toContain('482913');
        expect(m.text).toContain('5 dakika');
      } finally {
        delete process.env[ref];
      }
    });

    it('falls back to the service-wide SMTP_URL, in English for locale en', async () => {
      fresh();
      const s = new EmailSender({ urlRef: null, serviceUrl: smtp.url, from: 'no-reply@localhost' }, failures, outbound);
      expect((await s.send(msg({ to: 'visitor@example.org', locale: 'en', code: '100200' }))).ok).toBe(true);
      const m = await smtp.waitFor('visitor@example.org');
      expect(m.text).toContain('100200');
      expect(m.text).toContain('valid for 5 minutes');
      expect(smtp.lastCode('visitor@example.org')).toBe('100200');
    });

    it('an unreachable server is a retryable failure, logged without the URL', async () => {
      fresh();
      const s = new EmailSender({ urlRef: null, serviceUrl: 'smtp://u:s3cr3t-x@127.0.0.1:1', from: 'no-reply@localhost' }, failures, outbound);
      expect(await s.send(msg({ to: 'nobody@example.org' }))).toMatchObject({ ok: false, provider: 'smtp', retryable: true });
      expect(await metrics.render()).toContain('guestwifi_otp_provider_errors_total{provider="smtp",code="connect_refused"} 1');
    });
  });
});
