import { createHmac, randomInt } from 'node:crypto';

/** Digits in a code. */
export const CODE_DIGITS = 6;
/** How long a code is valid, ms: the contract's `expires_in` is 300 s (the template says 5 minutes). */
export const CODE_TTL_MS = 300_000;
/** Wrong tries that kill a code. */
export const MAX_TRIES = 5;

/** A code of six decimal digits from the CSPRNG (crypto.randomInt draws without modulo bias). */
export function generateCode(): string {
  return String(randomInt(0, 10 ** CODE_DIGITS)).padStart(CODE_DIGITS, '0');
}

/**
 * The keyed hash under which a code is stored and compared: HMAC-SHA256 with
 * a server key (config `otpKey`: OTP_SECRET, or derived from JWT_SECRET).
 * Redis never holds a code, and a dump of Redis cannot be brute-forced over
 * the 10^6 codes without the key. Tenant, hotspot and identity are part of
 * the message, so a hash is worthless for any other guest.
 */
export class OtpHasher {
  constructor(private readonly key: Uint8Array) {}

  hash(tenantId: string, hotspotId: string, identity: string, code: string): string {
    return createHmac('sha256', this.key).update(`${tenantId}\n${hotspotId}\n${identity}\n${code}`).digest('hex');
  }
}

/**
 * The OTP key when OTP_SECRET is not set: HMAC-SHA256(JWT_SECRET, a label of
 * its own), so the token key and the code key are never the same bytes.
 */
export function deriveOtpKey(jwtSecret: Uint8Array): Buffer {
  return createHmac('sha256', jwtSecret).update('guest-wifi/otp-code-key/v1').digest();
}
