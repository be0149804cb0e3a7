import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { deliveryBody, retryAfterMs } from '../../engine/webhooks/webhook-attempt-parts.js';
import {
  signatureHeader, signedHeaders, standardSignature, verifySignatureHeader, wellFormedSecret,
} from '../../engine/webhooks/webhook-signature.js';

/**
 * The two signatures of a webhook delivery against published vectors:
 * GitHub's X-Hub-Signature-256 example (docs.github.com, "Validating webhook
 * deliveries") for X-Signature-256, and the Standard Webhooks example
 * (standard-webhooks spec, the svix test vector) for webhook-signature, then
 * the standardwebhooks library itself verifying what we send.
 */
describe('webhook signatures', () => {
  const GITHUB_SECRET = "It's a Secret to Everybody";
  const GITHUB_PAYLOAD = 'Hello, World!';
  const GITHUB_SIGNATURE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

  it("X-Signature-256 is GitHub's published test vector, and verifies in constant time", () => {
    expect(signatureHeader(GITHUB_PAYLOAD, GITHUB_SECRET)).toBe(GITHUB_SIGNATURE);
    expect(verifySignatureHeader(GITHUB_SIGNATURE, GITHUB_PAYLOAD, GITHUB_SECRET)).toBe(true);
    expect(verifySignatureHeader(GITHUB_SIGNATURE.replace(/7$/, '8'), GITHUB_PAYLOAD, GITHUB_SECRET)).toBe(false);
    expect(verifySignatureHeader(GITHUB_SIGNATURE, 'Hello, World?', GITHUB_SECRET)).toBe(false);
    expect(verifySignatureHeader(GITHUB_SIGNATURE.slice(0, -2), GITHUB_PAYLOAD, GITHUB_SECRET)).toBe(false);
  });

  it('webhook-signature is the Standard Webhooks test vector (whsec_ secret: the key is the base64 after the prefix)', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    expect(standardSignature('msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}', secret))
      .toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('the standardwebhooks library verifies our headers unchanged, for a whsec_ secret and (raw) for another', () => {
    const body = deliveryBody('ten_x', { e: '1700000000000-0', t: 'session.start', ts: 1_700_000_000_000 }, '{"session_id":"s1"}');
    const now = Math.floor(Date.now() / 1000);
    const whsec = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
    const h1 = signedHeaders('dlv_1', now, body, { current: whsec, previous: null });
    expect(new StandardWebhook(whsec).verify(body, h1)).toEqual(JSON.parse(body));
    const plain = 'a-plain-secret-of-enough-length';
    const h2 = signedHeaders('dlv_2', now, body, { current: plain, previous: null });
    expect(new StandardWebhook(Buffer.from(plain), { format: 'raw' }).verify(body, h2)).toEqual(JSON.parse(body));
    expect(() => new StandardWebhook(whsec).verify(body.replace('s1', 's2'), h1)).toThrow();
    expect(h1['x-webhook-id']).toBe('dlv_1');
    expect(h1['webhook-id']).toBe('dlv_1');
    expect(h1['x-webhook-timestamp']).toBe(String(now));
  });

  it('during a rotation both signatures go out, space-separated, and either secret verifies', () => {
    const body = '{"a":1}';
    const now = Math.floor(Date.now() / 1000);
    const oldSecret = 'old-secret-0123456789';
    const newSecret = 'new-secret-0123456789';
    const h = signedHeaders('dlv_3', now, body, { current: newSecret, previous: oldSecret });
    expect(h['x-signature-256']!.split(' ')).toEqual([signatureHeader(body, newSecret), signatureHeader(body, oldSecret)]);
    expect(verifySignatureHeader(h['x-signature-256']!, body, oldSecret)).toBe(true);
    expect(verifySignatureHeader(h['x-signature-256']!, body, newSecret)).toBe(true);
    expect(verifySignatureHeader(h['x-signature-256']!, body, 'another-secret-012345')).toBe(false);
    expect(h['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new StandardWebhook(Buffer.from(oldSecret), { format: 'raw' }).verify(body, h)).toEqual({ a: 1 });
    expect(new StandardWebhook(Buffer.from(newSecret), { format: 'raw' }).verify(body, h)).toEqual({ a: 1 });
  });

  it('the body is {id, type, created_at, tenant_id, data}, the same bytes each time; whsec_ secrets must carry 16 bytes', () => {
    const st = { e: '1700000000000-3', t: 'voucher.redeemed', ts: 1_700_000_000_123 };
    const a = deliveryBody('ten_1', st, '{"voucher_id":"vch_1","code":"ABC"}');
    expect(a).toBe(deliveryBody('ten_1', st, '{"voucher_id":"vch_1","code":"ABC"}'));
    expect(JSON.parse(a)).toEqual({
      id: 'evt_1700000000000-3', type: 'voucher.redeemed', created_at: '2023-11-14T22:13:20.123Z', tenant_id: 'ten_1',
      data: { voucher_id: 'vch_1', code: 'ABC' },
    });
    expect(JSON.parse(deliveryBody('ten_1', st, 'not json')).data).toEqual({});
    expect(wellFormedSecret('whsec_' + Buffer.alloc(16).toString('base64'))).toBe(true);
    expect(wellFormedSecret('whsec_c2hvcnQ=')).toBe(false);
    expect(wellFormedSecret('any-other-secret')).toBe(true);
    expect(retryAfterMs('7', 0)).toBe(7000);
    expect(retryAfterMs(new Date(60_000).toUTCString().toLowerCase(), 0)).toBe(60_000);
    expect(retryAfterMs('soon', 0)).toBeNull();
  });
});
