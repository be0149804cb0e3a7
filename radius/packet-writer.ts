import { isIPv4 } from 'node:net';
import { Attr } from './attributes.js';
import { AUTHENTICATOR_LENGTH, HEADER_LENGTH, MAX_PACKET_LENGTH } from './codec.js';
import { RadiusErrors } from './errors.js';
import { RadiusCrypto } from './radius-crypto.js';

const MAX_VALUE = 253;
const UINT32_MAX = 0xffffffff;

/**
 * Builds one packet at a time in a 4096-octet scratch buffer owned by the
 * writer, then copies out exactly `Length` octets. Not re-entrant: begin,
 * add attributes and finish synchronously (the server and the CoA client each
 * own one writer, and nothing awaits between begin and finish).
 *
 * The three `finish*` methods are the three ways RADIUS signs a packet; each
 * fills a reserved Message-Authenticator (RFC 3579 §3.2) the way its packet
 * kind requires, then the Authenticator field.
 */
export class PacketWriter {
  private readonly buf = Buffer.allocUnsafe(MAX_PACKET_LENGTH);
  private len = HEADER_LENGTH;
  private ma = -1;

  /** `crypto`: share the owner's instance (and its prepared secrets) when it has one. */
  constructor(private readonly crypto: RadiusCrypto = new RadiusCrypto()) {}

  /**
   * Starts a packet. `authenticator` is what the Authenticator field holds
   * while attributes are added: an Access-Request's random Request
   * Authenticator (User-Password hiding needs it); zeros otherwise.
   */
  begin(code: number, identifier: number, authenticator?: Buffer): this {
    this.buf[0] = code;
    this.buf[1] = identifier;
    if (authenticator) authenticator.copy(this.buf, 4, 0, AUTHENTICATOR_LENGTH);
    else this.buf.fill(0, 4, HEADER_LENGTH);
    this.len = HEADER_LENGTH;
    this.ma = -1;
    return this;
  }

  /** Reserves the Message-Authenticator here; call it first for replies (Blast-RADIUS, CVE-2024-3596). */
  messageAuthenticator(): this {
    this.room(18);
    this.ma = this.len;
    this.buf[this.len] = Attr.MESSAGE_AUTHENTICATOR;
    this.buf[this.len + 1] = 18;
    this.buf.fill(0, this.len + 2, this.len + 18);
    this.len += 18;
    return this;
  }

  /** An attribute with raw octets (at most 253). */
  bytes(type: number, value: Buffer): this {
    if (value.length > MAX_VALUE) throw RadiusErrors.RADIUS_BAD_VALUE(`attribute ${type}: ${value.length} octets, at most 253 fit`);
    this.room(2 + value.length);
    this.buf[this.len] = type;
    this.buf[this.len + 1] = 2 + value.length;
    value.copy(this.buf, this.len + 2);
    this.len += 2 + value.length;
    return this;
  }

  /** A text attribute, UTF-8, cut to 253 octets on a character boundary. */
  string(type: number, value: string): this {
    this.room(2 + Math.min(MAX_VALUE, Buffer.byteLength(value)));
    const n = this.buf.write(value, this.len + 2, MAX_VALUE, 'utf8');
    this.buf[this.len] = type;
    this.buf[this.len + 1] = 2 + n;
    this.len += 2 + n;
    return this;
  }

  /** A 4-octet integer; values above 2^32-1 are clamped (the type cannot hold them). */
  uint32(type: number, value: number): this {
    this.room(6);
    this.buf[this.len] = type;
    this.buf[this.len + 1] = 6;
    this.buf.writeUInt32BE(toUint32(value), this.len + 2);
    this.len += 6;
    return this;
  }

  /** A 4-octet IPv4 address from dotted form. */
  ipv4(type: number, ip: string): this {
    if (!isIPv4(ip)) throw RadiusErrors.RADIUS_BAD_VALUE(`attribute ${type}: ${JSON.stringify(ip)} is not an IPv4 address`);
    this.room(6);
    this.buf[this.len] = type;
    this.buf[this.len + 1] = 6;
    let at = this.len + 2;
    for (const part of ip.split('.')) this.buf[at++] = Number(part);
    this.len += 6;
    return this;
  }

  /**
   * Copies every attribute of `type` from a request, in order: Proxy-State
   * must come back unmodified in the reply (RFC 2865 §5.33, RFC 2866 §4.2).
   */
  copyAttributes(request: Buffer, len: number, type: number): this {
    for (let at = HEADER_LENGTH; at < len; at += request[at + 1]!) {
      if (request[at] !== type) continue;
      const n = request[at + 1]!;
      this.room(n);
      request.copy(this.buf, this.len, at, at + n);
      this.len += n;
    }
    return this;
  }

  /** User-Password hidden with the Request Authenticator given to `begin` (RFC 2865 §5.2). */
  userPassword(password: string, secret: string): this {
    return this.bytes(Attr.USER_PASSWORD, this.crypto.encryptUserPassword(password, secret, this.buf.subarray(4, HEADER_LENGTH)));
  }

  /** A Vendor-Specific attribute (RFC 2865 §5.26) holding one 4-octet integer. */
  vendorUint32(vendorId: number, vendorType: number, value: number): this {
    this.room(12);
    this.vsaHeader(vendorId, vendorType, 4);
    this.buf.writeUInt32BE(toUint32(value), this.len + 8);
    this.len += 12;
    return this;
  }

  /** A Vendor-Specific attribute holding text (at most 247 octets of UTF-8). */
  vendorString(vendorId: number, vendorType: number, value: string): this {
    this.room(8 + Math.min(MAX_VALUE - 6, Buffer.byteLength(value)));
    const n = this.buf.write(value, this.len + 8, MAX_VALUE - 6, 'utf8');
    this.vsaHeader(vendorId, vendorType, n);
    this.len += 8 + n;
    return this;
  }

  /**
   * Finishes a reply (Access-Accept/Reject, Accounting-Response, CoA/Disconnect
   * ACK/NAK): Message-Authenticator over the packet with the request's
   * authenticator in the header (RFC 3579 §3.2), then the Response
   * Authenticator MD5(Code+ID+Length+RequestAuth+Attributes+Secret) (RFC 2865 §3).
   */
  finishReply(requestAuthenticator: Buffer, secret: string): Buffer {
    this.setLength();
    requestAuthenticator.copy(this.buf, 4, 0, AUTHENTICATOR_LENGTH);
    this.signMessageAuthenticator(secret);
    this.digestInto(secret);
    return this.copyOut();
  }

  /**
   * Finishes an Accounting-Request, CoA-Request or Disconnect-Request: the
   * Message-Authenticator is computed with a zero Authenticator field, then
   * the Request Authenticator MD5(Code+ID+Length+16 zeros+Attributes+Secret)
   * (RFC 2866 §3, RFC 5176 §2.3 and §3.4).
   */
  finishSignedRequest(secret: string): Buffer {
    this.setLength();
    this.buf.fill(0, 4, HEADER_LENGTH);
    this.signMessageAuthenticator(secret);
    this.digestInto(secret);
    return this.copyOut();
  }

  /** Finishes an Access-Request or Status-Server: the random authenticator from `begin` stays; Message-Authenticator over it. */
  finishAccessRequest(secret: string): Buffer {
    this.setLength();
    this.signMessageAuthenticator(secret);
    return this.copyOut();
  }

  private vsaHeader(vendorId: number, vendorType: number, valueLength: number): void {
    const b = this.buf;
    b[this.len] = Attr.VENDOR_SPECIFIC;
    b[this.len + 1] = 8 + valueLength;
    b.writeUInt32BE(vendorId, this.len + 2);
    b[this.len + 6] = vendorType;
    b[this.len + 7] = 2 + valueLength;
  }

  private room(n: number): void {
    if (this.len + n > MAX_PACKET_LENGTH) throw RadiusErrors.RADIUS_PACKET_TOO_LARGE(`code ${this.buf[0]}`);
  }

  private setLength(): void {
    this.buf.writeUInt16BE(this.len, 2);
  }

  private signMessageAuthenticator(secret: string): void {
    if (this.ma >= 0) this.crypto.signMessageAuthenticator(this.buf, this.len, this.ma, secret);
  }

  /** The Authenticator field already holds what the digest covers (request authenticator or zeros). */
  private digestInto(secret: string): void {
    this.crypto.signAuthenticatorInPlace(this.buf, this.len, secret);
  }

  private copyOut(): Buffer {
    const out = Buffer.allocUnsafe(this.len);
    this.buf.copy(out, 0, 0, this.len);
    return out;
  }
}

function toUint32(value: number): number {
  if (!Number.isFinite(value) || value < 0) throw RadiusErrors.RADIUS_BAD_VALUE(`${value} is not a non-negative integer`);
  return Math.min(Math.floor(value), UINT32_MAX);
}
