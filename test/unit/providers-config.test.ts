import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { callbackAuthentic, deliveredRefs } from '../../engine/signin/providers/delivery-callbacks.js';
import { basicPair, isEnvRef, resolveEnvRef } from '../../engine/signin/providers/env-ref.js';
import { normalizeMsgappInput } from '../../engine/signin/providers/msgapp-provider.js';
import { NETGSM_BASE_URL } from '../../engine/signin/providers/netgsm-sms.js';
import { checkEmailConfig, checkSmsConfig } from '../../engine/signin/providers/provider-registry.js';
import { checkSmsText, domesticTr } from '../../engine/signin/providers/sms-carrier.js';
import { AppError } from '../../engine/errors.js';
import { ConfigError, loadConfig } from '../../engine/config.js';

describe('env:// references', () => {
  it('accepts env://NAME only and resolves it from the given environment', () => {
    expect(isEnvRef('env://NETGSM_CRED')).toBe(true);
    for (const bad of ['NETGSM_CRED', 'env://', 'env://1X', 'env://A-B', 'file:///etc/passwd', 'env://A B', 'usr:pass']) expect(isEnvRef(bad)).toBe(false);
    expect(resolveEnvRef('env://X_1', { X_1: 'u:p' })).toBe('u:p');
    expect(resolveEnvRef('env://X_1', { X_1: '' })).toBeNull();
    expect(resolveEnvRef('env://X_2', {})).toBeNull();
    expect(resolveEnvRef('X_1', { X_1: 'u:p' })).toBeNull();
  });

  it('splits usercode:password at the first colon and refuses values without both parts', () => {
    expect(basicPair('usr:pa:ss')).toEqual({ user: 'usr', header: 'Basic ' + Buffer.from('usr:pa:ss').toString('base64') });
    expect(basicPair('nocolon')).toBeNull();
    expect(basicPair(':p')).toBeNull();
    expect(basicPair('u:')).toBeNull();
  });
});

describe("Netgsm's OTP route rules, checked at configuration time", () => {
  it('one segment of plain ASCII: Turkish letters, emoji and 161 characters are refused', () => {
    expect(checkSmsText('Kodunuz: 123456. 5 dakika gecerlidir.')).toEqual([]);
    expect(checkSmsText('Kodunuz: 123456. 5 dakika geçerlidir.')[0]).toContain('ç');
    expect(checkSmsText('Code 123456 \u{1F600}')).toHaveLength(1);
    expect(checkSmsText('x'.repeat(160))).toEqual([]);
    expect(checkSmsText('x'.repeat(161))[0]).toContain('161');
    // GSM extension-table characters take two septets and are not in the plain subset.
    expect(checkSmsText('code [123456]')).toHaveLength(1);
  });

  it('domestic numbers: +90 and ten digits become the ten digits; others are not Turkish', () => {
    expect(domesticTr('+905321234567')).toBe('5321234567');
    expect(domesticTr('+4915112345678')).toBeNull();
    expect(domesticTr('05321234567')).toBeNull();
  });

  it('SMS settings: an env:// credential, an http(s) base_url, a sender of at most 11 plain characters', () => {
    expect(checkSmsConfig({ provider: 'netgsm', credentials_ref: 'env://NETGSM', sender: 'OTELWIFI' })).toEqual([]);
    const problems = checkSmsConfig({ provider: 'netgsm', credentials_ref: 'usr:pass', base_url: 'ftp://x', sender: 'ÇokUzunBaşlık12' });
    expect(problems).toHaveLength(3);
    expect(checkSmsConfig({ provider: 'other' as 'netgsm', credentials_ref: 'env://X' })[0]).toContain('no SMS carrier');
  });

  it('e-mail settings: an env:// SMTP URL and an address', () => {
    expect(checkEmailConfig({ smtp_url_ref: 'env://SMTP', from: 'Otel <wifi@otel.example>' })).toEqual([]);
    expect(checkEmailConfig({ smtp_url_ref: 'smtp://u:p@host', from: 'not an address' })).toHaveLength(2);
  });
});

describe('messaging-app provider records (types A, B, C)', () => {
  const fails = (f: () => unknown): { field: string; message: string }[] => {
    try { f(); } catch (e) { return (e as AppError).fields?.details as { field: string; message: string }[]; }
    throw new Error('did not fail');
  };

  it('type C: provider netgsm, the production base_url by default, device id and templates empty', () => {
    const r = normalizeMsgappInput({ type: 'C', enabled: true, api_key_ref: 'env://NETGSM' });
    expect(r).toMatchObject({ type: 'C', provider: 'netgsm', base_url: NETGSM_BASE_URL, business_device_id: null, template_id: null });
    expect(fails(() => normalizeMsgappInput({ type: 'C', enabled: true, api_key_ref: 'env://N', business_device_id: 'd', template_id: 't' }))
      .map((d) => d.field)).toEqual(['business_device_id', 'template_id']);
    expect(fails(() => normalizeMsgappInput({ type: 'C', enabled: true, api_key_ref: 'env://N', provider: 'other' }))[0]!.field).toBe('provider');
    expect(fails(() => normalizeMsgappInput({ type: 'C', enabled: true }))[0]).toEqual({ field: 'api_key_ref', message: 'is required for type C' });
  });

  it('secrets given in clear instead of references are refused', () => {
    expect(fails(() => normalizeMsgappInput({ type: 'C', enabled: true, api_key_ref: 'usr:password' }))[0]!.message).toContain('env://NAME');
  });

  it('type A needs key, device and template id; type B token, phone number id and name:lang', () => {
    expect(fails(() => normalizeMsgappInput({ type: 'A', enabled: true, base_url: 'https://a.example' })).map((d) => d.field))
      .toEqual(['api_key_ref', 'business_device_id', 'template_id']);
    expect(fails(() => normalizeMsgappInput({ type: 'B', enabled: true, base_url: 'https://b.example', access_token_ref: 'env://T', phone_number_id: '1', template_name: 'wifi' }))[0]!.field)
      .toBe('template_name');
    // Disabled records may be incomplete (set up ahead of time).
    expect(normalizeMsgappInput({ type: 'B', enabled: false })).toMatchObject({ provider: 'type_b', enabled: false });
  });
});

describe('delivery callback checks', () => {
  const raw = Buffer.from('{"entry":[{"changes":[{"value":{"statuses":[{"id":"m1","status":"delivered"}]}}]}]}');
  const sig = (secret: string, body: Buffer): string => 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');

  it('HMAC-SHA256 over the raw body: right secret accepted; other secret, other body or no header refused', () => {
    expect(callbackAuthentic('msgapp-b', 'k1', { token: '', signature: sig('k1', raw), raw })).toBe(true);
    expect(callbackAuthentic('msgapp-a', 'k1', { token: '', signature: sig('k1', raw).toUpperCase().replace('SHA256', 'sha256'), raw })).toBe(true);
    expect(callbackAuthentic('msgapp-b', 'k1', { token: '', signature: sig('k2', raw), raw })).toBe(false);
    expect(callbackAuthentic('msgapp-b', 'k1', { token: '', signature: sig('k1', Buffer.from(raw.toString().replace('m1', 'm2'))), raw })).toBe(false);
    expect(callbackAuthentic('msgapp-a', 'k1', { token: '', signature: '', raw })).toBe(false);
  });

  it('netgsm: the shared token, exactly; an empty one never matches', () => {
    expect(callbackAuthentic('netgsm', 'tok-123', { token: 'tok-123', signature: '', raw: null })).toBe(true);
    expect(callbackAuthentic('netgsm', 'tok-123', { token: 'tok-124', signature: '', raw: null })).toBe(false);
    expect(callbackAuthentic('netgsm', 'tok-123', { token: '', signature: '', raw: null })).toBe(false);
  });

  it('reads the delivered message ids of each shape, ignoring other statuses', () => {
    expect(deliveredRefs('msgapp-b', JSON.parse(raw.toString()))).toEqual(['m1']);
    expect(deliveredRefs('netgsm', [{ jobid: '7', status: 1 }, { jobid: '8', status: 0 }])).toEqual(['7']);
    expect(deliveredRefs('msgapp-a', { events: [{ message_id: 'a', status: 'read' }, { message_id: 'b', status: 'failed' }] })).toEqual(['a']);
    expect(deliveredRefs('msgapp-a', 'garbage')).toEqual([]);
  });
});

describe('SMTP_URL and SMTP_FROM', () => {
  const base = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://x@127.0.0.1/x', JWT_SECRET: 'x'.repeat(32) };
  it('takes smtp:// and smtps:// URLs, refuses others, and has a From default', () => {
    expect(loadConfig({ ...base, SMTP_URL: 'smtps://u:p@mail.example:465' }).smtpUrl).toBe('smtps://u:p@mail.example:465');
    expect(loadConfig(base)).toMatchObject({ smtpUrl: undefined, smtpFrom: 'Guest Wi-Fi <no-reply@localhost>' });
    expect(loadConfig({ ...base, SMTP_FROM: 'wifi@otel.example' }).smtpFrom).toBe('wifi@otel.example');
    expect(() => loadConfig({ ...base, SMTP_URL: 'http://mail.example' })).toThrow(ConfigError);
  });
});
