import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signedHeaders, standardKey } from '../../engine/webhooks/webhook-signature.js';

/**
 * signedHeaders signs with keys padded once per secrets object (two one-shot
 * SHA-256 per signature, RFC 2104 by hand) instead of createHmac per
 * delivery. Checked here against node:crypto's HMAC for the keys where a
 * hand-made HMAC goes wrong: longer than the 64-byte block (hashed first),
 * exactly the block, short, non-ASCII, whsec_ keys; non-ASCII bodies; the
 * same secrets object reused for many deliveries (the pads' scratch space
 * must not leak from one signature into the next), and a rotation's two.
 */
const reference = (deliveryId: string, ts: number, body: string, secrets: string[]): Record<string, string> => ({
  'x-signature-256': secrets.map((s) => 'sha256=' + createHmac('sha256', s).update(body).digest('hex')).join(' '),
  'webhook-signature': secrets.map((s) => 'v1,' + createHmac('sha256', standardKey(s)).update(`${deliveryId}.${ts}.${body}`).digest('base64')).join(' '),
});

describe('webhook signatures from padded keys', () => {
  const secrets = [
    'k', 'a-plain-secret-of-enough-length', 'x'.repeat(64), 'y'.repeat(65), 'z'.repeat(200), 'şifre-İğdır-ı-ü-ö',
    'whsec_' + randomBytes(24).toString('base64'), 'whsec_' + randomBytes(100).toString('base64'),
  ];
  const bodies = ['', '{"a":1}', '{"name":"Çağrı Öztürk 🚀"}', JSON.stringify({ data: 'b'.repeat(5000) })];

  it('equal node:crypto HMAC-SHA256 for short, block-sized, long, non-ASCII and whsec_ keys and bodies', () => {
    for (const secret of secrets) {
      const one = { current: secret, previous: null };
      for (const body of bodies) {
        // The same secrets object across bodies: the pads are made once and reused.
        const h = signedHeaders('dlv_1', 1_700_000_000, body, one);
        const want = reference('dlv_1', 1_700_000_000, body, [secret]);
        expect(h['x-signature-256']).toBe(want['x-signature-256']);
        expect(h['webhook-signature']).toBe(want['webhook-signature']);
      }
    }
  });

  it('a rotation signs with both, the new first, each right, and many deliveries in a row stay right', () => {
    const pair = { current: secrets[4]!, previous: secrets[6]! };
    for (let i = 0; i < 50; i++) {
      const body = `{"i":${i},"pad":"${'p'.repeat(i * 7)}"}`;
      const h = signedHeaders(`dlv_${i}`, 1_700_000_000 + i, body, pair);
      const want = reference(`dlv_${i}`, 1_700_000_000 + i, body, [pair.current, pair.previous]);
      expect(h['x-signature-256']).toBe(want['x-signature-256']);
      expect(h['webhook-signature']).toBe(want['webhook-signature']);
      expect(h['x-webhook-id']).toBe(`dlv_${i}`);
      expect(h['webhook-timestamp']).toBe(String(1_700_000_000 + i));
    }
  });
});
