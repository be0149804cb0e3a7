import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signatures of a webhook delivery, two schemes over the same body:
 *
 * - `X-Signature-256: sha256=<hex>`: HMAC-SHA256 of the raw body keyed with
 *   the subscription's secret as given (its UTF-8 bytes), lowercase hex: the
 *   contract's header, GitHub's scheme, so receivers written for GitHub
 *   verify it unchanged.
 * - Standard Webhooks (`webhook-signature: v1,<base64>`): HMAC-SHA256 of
 *   "<webhook-id>.<webhook-timestamp>.<body>". Its key is the base64 after
 *   `whsec_` when the secret has that prefix (the form its libraries take),
 *   else the secret's UTF-8 bytes, so one secret serves both schemes.
 *
 * During a secret rotation's overlap each header carries both signatures,
 * the new one first, separated by a space; a receiver accepts the delivery
 * when any one verifies.
 */

const WHSEC = 'whsec_';

/** The key Standard Webhooks' libraries derive from `secret`. */
export function standardKey(secret: string): Buffer {
  return secret.startsWith(WHSEC) ? Buffer.from(secret.slice(WHSEC.length), 'base64') : Buffer.from(secret, 'utf8');
}

/** Whether a `whsec_` secret's rest is base64 of at least 16 bytes (a secret without the prefix is used as it is). */
export function wellFormedSecret(secret: string): boolean {
  if (!secret.startsWith(WHSEC)) return true;
  const rest = secret.slice(WHSEC.length);
  return /^[A-Za-z0-9+/]+={0,2}$/.test(rest) && Buffer.from(rest, 'base64').length >= 16;
}

/** `sha256=<lowercase hex HMAC-SHA256(body, secret)>`. */
export function signatureHeader(body: string | Buffer, secret: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** `v1,<base64 HMAC-SHA256("<id>.<timestamp>.<body>")>` with the Standard Webhooks key. */
export function standardSignature(id: string, timestampSec: number, body: string | Buffer, secret: string): string {
  return 'v1,' + createHmac('sha256', standardKey(secret)).update(`${id}.${timestampSec}.`).update(body).digest('base64');
}

/**
 * A receiver's check of `X-Signature-256`: true when one of the header's
 * space-separated values is the body's signature, compared in constant time
 * (timingSafeEqual over equal lengths). Exported for tests and as the
 * reference docs/webhooks.md shows.
 */
export function verifySignatureHeader(header: string, body: string | Buffer, secret: string): boolean {
  const want = Buffer.from(signatureHeader(body, secret), 'utf8');
  let ok = false;
  for (const part of header.split(' ')) {
    const got = Buffer.from(part, 'utf8');
    // No early return: every value is compared, so the time does not tell which one matched.
    if (got.length === want.length && timingSafeEqual(got, want)) ok = true;
  }
  return ok;
}

/** The signing secrets of one delivery: the current one, and the previous during a rotation's overlap. */
export interface SigningSecrets {
  current: string;
  previous: string | null;
}

/** The headers that sign one attempt (lower-case names, as the HTTP client wants them). */
export function signedHeaders(deliveryId: string, timestampSec: number, body: string, secrets: SigningSecrets): Record<string, string> {
  const all = secrets.previous === null ? [secrets.current] : [secrets.current, secrets.previous];
  const ts = String(timestampSec);
  return {
    'x-signature-256': all.map((s) => signatureHeader(body, s)).join(' '),
    'x-webhook-id': deliveryId,
    'x-webhook-timestamp': ts,
    'webhook-id': deliveryId,
    'webhook-timestamp': ts,
    'webhook-signature': all.map((s) => standardSignature(deliveryId, timestampSec, body, s)).join(' '),
  };
}
