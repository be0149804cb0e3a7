/**
 * MD5 (RFC 1321), incremental and allocation-free, for RADIUS authenticators
 * and HMAC-MD5 (RFC 2104) Message-Authenticators.
 *
 * Why not node:crypto: RADIUS hashes a few dozen to a few hundred octets per
 * packet, 3-5 times per Access-Request. Profiling the server under load
 * (bench/radius-load.ts) showed each createHash/createHmac costing 1.5-3.5 µs
 * of object set-up (a stream-capable JS wrapper and an OpenSSL 3 EVP context
 * per call) plus a digest Buffer and the garbage they leave: about a third of
 * the server's CPU per packet. This implementation keeps its state in
 * preallocated typed arrays, hashes straight out of the datagram's Buffer and
 * precomputes the HMAC inner and outer pad blocks once per secret
 * (`HmacMd5Key`), so a packet costs only the compression rounds.
 * test/radius/md5.test.ts checks it against the RFC 1321 and RFC 2202 vectors
 * and against node:crypto on random inputs.
 *
 * MD5 here serves only the RADIUS protocol, which fixes the algorithm; it has
 * no data-dependent branches, so it adds no timing channel. An instance is
 * not re-entrant: reset, update and digest synchronously.
 */

const INIT = new Int32Array([0x67452301, 0xefcdab89 | 0, 0x98badcfe | 0, 0x10325476]);

/** State after absorbing some whole blocks: what an HMAC key precomputes. */
export type Md5State = Int32Array;

export class Md5 {
  private readonly h = new Int32Array(4);
  private readonly block = new Uint8Array(64);
  private blockLen = 0;
  private total = 0;

  constructor() {
    this.reset();
  }

  reset(): this {
    this.h.set(INIT);
    this.blockLen = 0;
    this.total = 0;
    return this;
  }

  /** Continues from a state reached after `bytes` octets (a multiple of 64). */
  resume(state: Md5State, bytes: number): this {
    this.h.set(state);
    this.blockLen = 0;
    this.total = bytes;
    return this;
  }

  /** The current state; valid only on a 64-octet boundary. */
  snapshot(): Md5State {
    return Int32Array.from(this.h);
  }

  update(data: Uint8Array, start = 0, end = data.length): this {
    this.total += end - start;
    let i = start;
    if (this.blockLen > 0) {
      while (i < end && this.blockLen < 64) this.block[this.blockLen++] = data[i++]!;
      if (this.blockLen < 64) return this;
      this.compress(this.block, 0);
      this.blockLen = 0;
    }
    for (; i + 64 <= end; i += 64) this.compress(data, i);
    while (i < end) this.block[this.blockLen++] = data[i++]!;
    return this;
  }

  /** As if `n` zero octets were passed to update. */
  updateZeros(n: number): this {
    this.total += n;
    while (n > 0) {
      const take = Math.min(n, 64 - this.blockLen);
      this.block.fill(0, this.blockLen, this.blockLen + take);
      this.blockLen += take;
      n -= take;
      if (this.blockLen === 64) {
        this.compress(this.block, 0);
        this.blockLen = 0;
      }
    }
    return this;
  }

  /** Pads, finishes and writes the 16-octet digest at `out[offset]`. The instance must be reset before reuse. */
  digestInto(out: Uint8Array, offset = 0): void {
    const bits = this.total * 8;
    const b = this.block;
    b[this.blockLen++] = 0x80;
    if (this.blockLen > 56) {
      b.fill(0, this.blockLen, 64);
      this.compress(b, 0);
      this.blockLen = 0;
    }
    b.fill(0, this.blockLen, 56);
    const lo = bits >>> 0;
    const hi = Math.floor(bits / 0x1_0000_0000) >>> 0;
    b[56] = lo; b[57] = lo >>> 8; b[58] = lo >>> 16; b[59] = lo >>> 24;
    b[60] = hi; b[61] = hi >>> 8; b[62] = hi >>> 16; b[63] = hi >>> 24;
    this.compress(b, 0);
    for (let i = 0; i < 4; i++) {
      const v = this.h[i]!;
      out[offset + 4 * i] = v;
      out[offset + 4 * i + 1] = v >>> 8;
      out[offset + 4 * i + 2] = v >>> 16;
      out[offset + 4 * i + 3] = v >>> 24;
    }
  }

  private compress(d: Uint8Array, at: number): void {
    // Unrolled with the round functions written out (RFC 1321 §3.4): calls
    // to helpers would exceed V8's inlining budget. Generated, not hand-typed;
    // the tests compare against node:crypto.
    const x0 = word(d, at), x1 = word(d, at + 4), x2 = word(d, at + 8), x3 = word(d, at + 12);
    const x4 = word(d, at + 16), x5 = word(d, at + 20), x6 = word(d, at + 24), x7 = word(d, at + 28);
    const x8 = word(d, at + 32), x9 = word(d, at + 36), x10 = word(d, at + 40), x11 = word(d, at + 44);
    const x12 = word(d, at + 48), x13 = word(d, at + 52), x14 = word(d, at + 56), x15 = word(d, at + 60);
    const h = this.h;
    let a = h[0]!, b = h[1]!, c = h[2]!, d_ = h[3]!;
    a = (a + ((b & c) | (~b & d_)) + x0 + (0xd76aa478 | 0)) | 0; a = ((a << 7) | (a >>> 25)) + b | 0;
    d_ = (d_ + ((a & b) | (~a & c)) + x1 + (0xe8c7b756 | 0)) | 0; d_ = ((d_ << 12) | (d_ >>> 20)) + a | 0;
    c = (c + ((d_ & a) | (~d_ & b)) + x2 + 0x242070db) | 0; c = ((c << 17) | (c >>> 15)) + d_ | 0;
    b = (b + ((c & d_) | (~c & a)) + x3 + (0xc1bdceee | 0)) | 0; b = ((b << 22) | (b >>> 10)) + c | 0;
    a = (a + ((b & c) | (~b & d_)) + x4 + (0xf57c0faf | 0)) | 0; a = ((a << 7) | (a >>> 25)) + b | 0;
    d_ = (d_ + ((a & b) | (~a & c)) + x5 + 0x4787c62a) | 0; d_ = ((d_ << 12) | (d_ >>> 20)) + a | 0;
    c = (c + ((d_ & a) | (~d_ & b)) + x6 + (0xa8304613 | 0)) | 0; c = ((c << 17) | (c >>> 15)) + d_ | 0;
    b = (b + ((c & d_) | (~c & a)) + x7 + (0xfd469501 | 0)) | 0; b = ((b << 22) | (b >>> 10)) + c | 0;
    a = (a + ((b & c) | (~b & d_)) + x8 + 0x698098d8) | 0; a = ((a << 7) | (a >>> 25)) + b | 0;
    d_ = (d_ + ((a & b) | (~a & c)) + x9 + (0x8b44f7af | 0)) | 0; d_ = ((d_ << 12) | (d_ >>> 20)) + a | 0;
    c = (c + ((d_ & a) | (~d_ & b)) + x10 + (0xffff5bb1 | 0)) | 0; c = ((c << 17) | (c >>> 15)) + d_ | 0;
    b = (b + ((c & d_) | (~c & a)) + x11 + (0x895cd7be | 0)) | 0; b = ((b << 22) | (b >>> 10)) + c | 0;
    a = (a + ((b & c) | (~b & d_)) + x12 + 0x6b901122) | 0; a = ((a << 7) | (a >>> 25)) + b | 0;
    d_ = (d_ + ((a & b) | (~a & c)) + x13 + (0xfd987193 | 0)) | 0; d_ = ((d_ << 12) | (d_ >>> 20)) + a | 0;
    c = (c + ((d_ & a) | (~d_ & b)) + x14 + (0xa679438e | 0)) | 0; c = ((c << 17) | (c >>> 15)) + d_ | 0;
    b = (b + ((c & d_) | (~c & a)) + x15 + 0x49b40821) | 0; b = ((b << 22) | (b >>> 10)) + c | 0;
    a = (a + ((b & d_) | (c & ~d_)) + x1 + (0xf61e2562 | 0)) | 0; a = ((a << 5) | (a >>> 27)) + b | 0;
    d_ = (d_ + ((a & c) | (b & ~c)) + x6 + (0xc040b340 | 0)) | 0; d_ = ((d_ << 9) | (d_ >>> 23)) + a | 0;
    c = (c + ((d_ & b) | (a & ~b)) + x11 + 0x265e5a51) | 0; c = ((c << 14) | (c >>> 18)) + d_ | 0;
    b = (b + ((c & a) | (d_ & ~a)) + x0 + (0xe9b6c7aa | 0)) | 0; b = ((b << 20) | (b >>> 12)) + c | 0;
    a = (a + ((b & d_) | (c & ~d_)) + x5 + (0xd62f105d | 0)) | 0; a = ((a << 5) | (a >>> 27)) + b | 0;
    d_ = (d_ + ((a & c) | (b & ~c)) + x10 + 0x02441453) | 0; d_ = ((d_ << 9) | (d_ >>> 23)) + a | 0;
    c = (c + ((d_ & b) | (a & ~b)) + x15 + (0xd8a1e681 | 0)) | 0; c = ((c << 14) | (c >>> 18)) + d_ | 0;
    b = (b + ((c & a) | (d_ & ~a)) + x4 + (0xe7d3fbc8 | 0)) | 0; b = ((b << 20) | (b >>> 12)) + c | 0;
    a = (a + ((b & d_) | (c & ~d_)) + x9 + 0x21e1cde6) | 0; a = ((a << 5) | (a >>> 27)) + b | 0;
    d_ = (d_ + ((a & c) | (b & ~c)) + x14 + (0xc33707d6 | 0)) | 0; d_ = ((d_ << 9) | (d_ >>> 23)) + a | 0;
    c = (c + ((d_ & b) | (a & ~b)) + x3 + (0xf4d50d87 | 0)) | 0; c = ((c << 14) | (c >>> 18)) + d_ | 0;
    b = (b + ((c & a) | (d_ & ~a)) + x8 + 0x455a14ed) | 0; b = ((b << 20) | (b >>> 12)) + c | 0;
    a = (a + ((b & d_) | (c & ~d_)) + x13 + (0xa9e3e905 | 0)) | 0; a = ((a << 5) | (a >>> 27)) + b | 0;
    d_ = (d_ + ((a & c) | (b & ~c)) + x2 + (0xfcefa3f8 | 0)) | 0; d_ = ((d_ << 9) | (d_ >>> 23)) + a | 0;
    c = (c + ((d_ & b) | (a & ~b)) + x7 + 0x676f02d9) | 0; c = ((c << 14) | (c >>> 18)) + d_ | 0;
    b = (b + ((c & a) | (d_ & ~a)) + x12 + (0x8d2a4c8a | 0)) | 0; b = ((b << 20) | (b >>> 12)) + c | 0;
    a = (a + (b ^ c ^ d_) + x5 + (0xfffa3942 | 0)) | 0; a = ((a << 4) | (a >>> 28)) + b | 0;
    d_ = (d_ + (a ^ b ^ c) + x8 + (0x8771f681 | 0)) | 0; d_ = ((d_ << 11) | (d_ >>> 21)) + a | 0;
    c = (c + (d_ ^ a ^ b) + x11 + 0x6d9d6122) | 0; c = ((c << 16) | (c >>> 16)) + d_ | 0;
    b = (b + (c ^ d_ ^ a) + x14 + (0xfde5380c | 0)) | 0; b = ((b << 23) | (b >>> 9)) + c | 0;
    a = (a + (b ^ c ^ d_) + x1 + (0xa4beea44 | 0)) | 0; a = ((a << 4) | (a >>> 28)) + b | 0;
    d_ = (d_ + (a ^ b ^ c) + x4 + 0x4bdecfa9) | 0; d_ = ((d_ << 11) | (d_ >>> 21)) + a | 0;
    c = (c + (d_ ^ a ^ b) + x7 + (0xf6bb4b60 | 0)) | 0; c = ((c << 16) | (c >>> 16)) + d_ | 0;
    b = (b + (c ^ d_ ^ a) + x10 + (0xbebfbc70 | 0)) | 0; b = ((b << 23) | (b >>> 9)) + c | 0;
    a = (a + (b ^ c ^ d_) + x13 + 0x289b7ec6) | 0; a = ((a << 4) | (a >>> 28)) + b | 0;
    d_ = (d_ + (a ^ b ^ c) + x0 + (0xeaa127fa | 0)) | 0; d_ = ((d_ << 11) | (d_ >>> 21)) + a | 0;
    c = (c + (d_ ^ a ^ b) + x3 + (0xd4ef3085 | 0)) | 0; c = ((c << 16) | (c >>> 16)) + d_ | 0;
    b = (b + (c ^ d_ ^ a) + x6 + 0x04881d05) | 0; b = ((b << 23) | (b >>> 9)) + c | 0;
    a = (a + (b ^ c ^ d_) + x9 + (0xd9d4d039 | 0)) | 0; a = ((a << 4) | (a >>> 28)) + b | 0;
    d_ = (d_ + (a ^ b ^ c) + x12 + (0xe6db99e5 | 0)) | 0; d_ = ((d_ << 11) | (d_ >>> 21)) + a | 0;
    c = (c + (d_ ^ a ^ b) + x15 + 0x1fa27cf8) | 0; c = ((c << 16) | (c >>> 16)) + d_ | 0;
    b = (b + (c ^ d_ ^ a) + x2 + (0xc4ac5665 | 0)) | 0; b = ((b << 23) | (b >>> 9)) + c | 0;
    a = (a + (c ^ (b | ~d_)) + x0 + (0xf4292244 | 0)) | 0; a = ((a << 6) | (a >>> 26)) + b | 0;
    d_ = (d_ + (b ^ (a | ~c)) + x7 + 0x432aff97) | 0; d_ = ((d_ << 10) | (d_ >>> 22)) + a | 0;
    c = (c + (a ^ (d_ | ~b)) + x14 + (0xab9423a7 | 0)) | 0; c = ((c << 15) | (c >>> 17)) + d_ | 0;
    b = (b + (d_ ^ (c | ~a)) + x5 + (0xfc93a039 | 0)) | 0; b = ((b << 21) | (b >>> 11)) + c | 0;
    a = (a + (c ^ (b | ~d_)) + x12 + 0x655b59c3) | 0; a = ((a << 6) | (a >>> 26)) + b | 0;
    d_ = (d_ + (b ^ (a | ~c)) + x3 + (0x8f0ccc92 | 0)) | 0; d_ = ((d_ << 10) | (d_ >>> 22)) + a | 0;
    c = (c + (a ^ (d_ | ~b)) + x10 + (0xffeff47d | 0)) | 0; c = ((c << 15) | (c >>> 17)) + d_ | 0;
    b = (b + (d_ ^ (c | ~a)) + x1 + (0x85845dd1 | 0)) | 0; b = ((b << 21) | (b >>> 11)) + c | 0;
    a = (a + (c ^ (b | ~d_)) + x8 + 0x6fa87e4f) | 0; a = ((a << 6) | (a >>> 26)) + b | 0;
    d_ = (d_ + (b ^ (a | ~c)) + x15 + (0xfe2ce6e0 | 0)) | 0; d_ = ((d_ << 10) | (d_ >>> 22)) + a | 0;
    c = (c + (a ^ (d_ | ~b)) + x6 + (0xa3014314 | 0)) | 0; c = ((c << 15) | (c >>> 17)) + d_ | 0;
    b = (b + (d_ ^ (c | ~a)) + x13 + 0x4e0811a1) | 0; b = ((b << 21) | (b >>> 11)) + c | 0;
    a = (a + (c ^ (b | ~d_)) + x4 + (0xf7537e82 | 0)) | 0; a = ((a << 6) | (a >>> 26)) + b | 0;
    d_ = (d_ + (b ^ (a | ~c)) + x11 + (0xbd3af235 | 0)) | 0; d_ = ((d_ << 10) | (d_ >>> 22)) + a | 0;
    c = (c + (a ^ (d_ | ~b)) + x2 + 0x2ad7d2bb) | 0; c = ((c << 15) | (c >>> 17)) + d_ | 0;
    b = (b + (d_ ^ (c | ~a)) + x9 + (0xeb86d391 | 0)) | 0; b = ((b << 21) | (b >>> 11)) + c | 0;
    h[0] = (h[0]! + a) | 0;
    h[1] = (h[1]! + b) | 0;
    h[2] = (h[2]! + c) | 0;
    h[3] = (h[3]! + d_) | 0;
  }
}

/** Little-endian 32-bit word at `at`. */
function word(d: Uint8Array, at: number): number {
  return d[at]! | (d[at + 1]! << 8) | (d[at + 2]! << 16) | (d[at + 3]! << 24);
}

/** A shared secret prepared for HMAC-MD5 and for the MD5 constructions that append or prepend it. */
export class HmacMd5Key {
  /** The secret's octets (UTF-8, as node:crypto and other RADIUS servers take a text secret). */
  readonly bytes: Buffer;
  /** MD5 state after the (key XOR ipad) block. */
  readonly inner: Md5State;
  /** MD5 state after the (key XOR opad) block. */
  readonly outer: Md5State;

  constructor(secret: string) {
    const md5 = new Md5(); // its own: a caller's instance may be mid-hash
    this.bytes = Buffer.from(secret, 'utf8');
    const k = new Uint8Array(64);
    if (this.bytes.length > 64) md5.reset().update(this.bytes).digestInto(k);
    else k.set(this.bytes);
    const pad = new Uint8Array(64);
    for (let i = 0; i < 64; i++) pad[i] = k[i]! ^ 0x36;
    this.inner = md5.reset().update(pad).snapshot();
    for (let i = 0; i < 64; i++) pad[i] = k[i]! ^ 0x5c;
    this.outer = md5.reset().update(pad).snapshot();
  }
}
