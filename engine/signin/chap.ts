import { createHash, timingSafeEqual } from 'node:crypto';
import type { ChapResponse } from '../sessions/ports.js';

/**
 * Whether a CHAP response proves knowledge of `secret` (RFC 1994 §4.1, as
 * RADIUS carries it, RFC 2865 §2.2): MD5(ident || secret || challenge).
 * Compared in constant time. UAM gateways (CoovaChilli, ChilliSpot) send the
 * portal's one-time credential this way, and a NAS's own login page may send
 * a voucher code as both user name and secret.
 */
export function chapMatches(chap: ChapResponse, secret: string): boolean {
  if (chap.response.length !== 16) return false;
  const expected = createHash('md5').update(Buffer.of(chap.ident & 0xff)).update(secret, 'utf8').update(chap.challenge).digest();
  return timingSafeEqual(expected, chap.response);
}
