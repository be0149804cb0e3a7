import { HEADER_LENGTH } from './codec.js';
import { HmacMd5Key, Md5 } from './md5.js';

const MA_LENGTH = 18;
/** Secrets remembered with their HMAC pads; past this the cache starts over (one NAS secret each, so rarely). */
const MAX_KEYS = 10_000;

/**
 * The RADIUS authenticators and User-Password hiding, computed with our MD5
 * (md5.ts: why) straight from the datagram's octets, without copying or
 * zeroing anything in place and without allocating per packet.
 *
 * One instance per server or client (it owns a hash state and scratch
 * space): every method runs synchronously to completion. Secrets are taken as
 * text, as NasRecord holds them, and prepared once (`HmacMd5Key`).
 *
 * Offsets: `at` is the offset of an attribute's type octet, as
 * `findAttribute` returns; every method assumes `checkFraming` accepted the
 * buffer and `len` is what it returned.
 */
export class RadiusCrypto {
  private readonly md5 = new Md5();
  private readonly keys = new Map<string, HmacMd5Key>();
  private readonly inner = new Uint8Array(16);
  private readonly out = new Uint8Array(16);

  /** The prepared form of a secret (cached). */
  key(secret: string): HmacMd5Key {
    let k = this.keys.get(secret);
    if (k === undefined) {
      if (this.keys.size >= MAX_KEYS) this.keys.clear();
      k = new HmacMd5Key(secret);
      this.keys.set(secret, k);
    }
    return k;
  }

  /**
   * Checks the Message-Authenticator at `at` (RFC 3579 §3.2): HMAC-MD5 keyed
   * with the secret over the packet with the attribute's value as 16 zero
   * octets, while the Authenticator field holds `authenticatorInHmac`:
   *  - null: the packet's own field (Access-Request, Status-Server);
   *  - 16 zero octets: Accounting-Request, CoA-Request and Disconnect-Request,
   *    whose Message-Authenticator is computed before the Request
   *    Authenticator (RFC 5176 §3.4);
   *  - the request's authenticator: replies (Access-Accept/Reject, CoA/Disconnect ACK/NAK).
   */
  verifyMessageAuthenticator(buf: Uint8Array, len: number, at: number, secret: string, authenticatorInHmac: Uint8Array | null): boolean {
    if (buf[at + 1] !== MA_LENGTH) return false;
    const key = this.key(secret);
    const md5 = this.md5.resume(key.inner, 64);
    if (authenticatorInHmac) {
      md5.update(buf, 0, 4).update(authenticatorInHmac, 0, 16).update(buf, HEADER_LENGTH, at + 2);
    } else {
      md5.update(buf, 0, at + 2);
    }
    md5.updateZeros(16).update(buf, at + MA_LENGTH, len).digestInto(this.inner);
    this.md5.resume(key.outer, 64).update(this.inner).digestInto(this.out);
    return equal16(this.out, buf, at + 2);
  }

  /** Fills the Message-Authenticator at `at`: HMAC-MD5 over `buf[0, len)` as it stands (value still zero, Authenticator field already set as the packet kind requires). */
  signMessageAuthenticator(buf: Uint8Array, len: number, at: number, secret: string): void {
    const key = this.key(secret);
    this.md5.resume(key.inner, 64).update(buf, 0, len).digestInto(this.inner);
    this.md5.resume(key.outer, 64).update(this.inner).digestInto(buf, at + 2);
  }

  /**
   * MD5(Code + Identifier + Length + `authenticator` + Attributes + Secret)
   * into `out[offset]`: the Response Authenticator of RFC 2865 §3 when
   * `authenticator` is the request's, or null for 16 zero octets, the Request
   * Authenticator of RFC 2866 §3 / RFC 5176 §2.3.
   */
  packetDigestInto(buf: Uint8Array, len: number, authenticator: Uint8Array | null, secret: string, out: Uint8Array, offset = 0): void {
    const s = this.key(secret).bytes;
    const md5 = this.md5.reset().update(buf, 0, 4);
    if (authenticator) md5.update(authenticator, 0, 16);
    else md5.updateZeros(16);
    md5.update(buf, HEADER_LENGTH, len).update(s).digestInto(out, offset);
  }

  /**
   * Replaces the Authenticator field with MD5(packet + secret), the packet
   * taken as it stands: the field must hold what the digest covers (the
   * request's authenticator for a reply, zeros for a signed request).
   */
  signAuthenticatorInPlace(buf: Uint8Array, len: number, secret: string): void {
    const s = this.key(secret).bytes;
    this.md5.reset().update(buf, 0, len).update(s).digestInto(buf, 4);
  }

  /** Checks an Accounting-Request's (or CoA/Disconnect-Request's) Request Authenticator (RFC 2866 §3, RFC 5176 §2.3). */
  verifyRequestAuthenticator(buf: Uint8Array, len: number, secret: string): boolean {
    this.packetDigestInto(buf, len, null, secret, this.out);
    return equal16(this.out, buf, 4);
  }

  /** Checks a reply's Response Authenticator against the request's authenticator (RFC 2865 §3, RFC 5176 §2.3). */
  verifyResponseAuthenticator(buf: Uint8Array, len: number, requestAuthenticator: Uint8Array, secret: string): boolean {
    this.packetDigestInto(buf, len, requestAuthenticator, secret, this.out);
    return equal16(this.out, buf, 4);
  }

  /**
   * Recovers a User-Password (RFC 2865 §5.2): c(i) XOR MD5(S + c(i-1)) with
   * c(0) the Request Authenticator; trailing NUL padding removed. Returns null
   * when the hidden value is not 16..128 octets in steps of 16.
   */
  decryptUserPassword(buf: Uint8Array, at: number, secret: string, requestAuthenticator: Uint8Array): string | null {
    const n = buf[at + 1]! - 2;
    if (n < 16 || n > 128 || (n & 15) !== 0) return null;
    const s = this.key(secret).bytes;
    const start = at + 2;
    const plain = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i += 16) {
      const md5 = this.md5.reset().update(s);
      if (i === 0) md5.update(requestAuthenticator, 0, 16);
      else md5.update(buf, start + i - 16, start + i);
      md5.digestInto(this.out);
      for (let j = 0; j < 16; j++) plain[i + j] = buf[start + i + j]! ^ this.out[j]!;
    }
    let end = n;
    while (end > 0 && plain[end - 1] === 0) end--;
    return plain.toString('utf8', 0, end);
  }

  /** Hides a User-Password (RFC 2865 §5.2) for an Access-Request with this Request Authenticator. */
  encryptUserPassword(password: string, secret: string, requestAuthenticator: Uint8Array): Buffer {
    const plain = Buffer.from(password, 'utf8');
    if (plain.length > 128) throw new RangeError('User-Password longer than 128 octets (RFC 2865 §5.2)');
    const n = Math.max(16, Math.ceil(plain.length / 16) * 16);
    const out = Buffer.alloc(n);
    plain.copy(out);
    const s = this.key(secret).bytes;
    for (let i = 0; i < n; i += 16) {
      const md5 = this.md5.reset().update(s);
      if (i === 0) md5.update(requestAuthenticator, 0, 16);
      else md5.update(out, i - 16, i);
      md5.digestInto(this.out);
      for (let j = 0; j < 16; j++) out[i + j] = out[i + j]! ^ this.out[j]!;
    }
    return out;
  }
}

/** Constant-time comparison of 16 octets (no early exit: the time does not tell how many matched). */
function equal16(a: Uint8Array, b: Uint8Array, bOffset: number): boolean {
  let diff = 0;
  for (let i = 0; i < 16; i++) diff |= a[i]! ^ b[bOffset + i]!;
  return diff === 0;
}
