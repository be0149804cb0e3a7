import { createHash, createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HmacMd5Key, Md5 } from '../../radius/index.js';

const md5 = new Md5();
const hexOf = (data: Uint8Array) => { const out = Buffer.alloc(16); md5.reset().update(data).digestInto(out); return out.toString('hex'); };
const hmacOf = (key: string | Buffer, data: Uint8Array) => {
  const k = new HmacMd5Key(typeof key === 'string' ? key : key.toString('latin1'));
  // HmacMd5Key takes text; for binary keys build it from the octets directly.
  const kk = typeof key === 'string' ? k : Object.assign(Object.create(HmacMd5Key.prototype), binaryKey(key));
  const inner = Buffer.alloc(16);
  const out = Buffer.alloc(16);
  md5.resume(kk.inner, 64).update(data).digestInto(inner);
  md5.resume(kk.outer, 64).update(inner).digestInto(out);
  return out.toString('hex');
};
function binaryKey(key: Buffer): { inner: Int32Array; outer: Int32Array } {
  const k = new Uint8Array(64);
  if (key.length > 64) md5.reset().update(key).digestInto(k); else k.set(key);
  const pad = (x: number) => { const p = new Uint8Array(64); for (let i = 0; i < 64; i++) p[i] = k[i]! ^ x; return md5.reset().update(p).snapshot(); };
  return { inner: pad(0x36), outer: pad(0x5c) };
}

describe('MD5 (RFC 1321)', () => {
  it('matches the RFC 1321 §A.5 test suite', () => {
    const suite: [string, string][] = [
      ['', 'd41d8cd98f00b204e9800998ecf8427e'],
      ['a', '0cc175b9c0f1b6a831c399e269772661'],
      ['abc', '900150983cd24fb0d6963f7d28e17f72'],
      ['message digest', 'f96b697d7cb7938d525a2f31aaf161d0'],
      ['abcdefghijklmnopqrstuvwxyz', 'c3fcd3d76192e4007dfb496cca67e13b'],
      ['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', 'd174ab98d277d9f5a5611c2c9f419d9f'],
      ['1234567890'.repeat(8), '57edf4a22be3c955ac49da2e2107b67a'],
    ];
    for (const [input, digest] of suite) expect(hexOf(Buffer.from(input)), input).toBe(digest);
  });

  it('agrees with node:crypto for every length 0..300 and for random splits into updates', () => {
    for (let n = 0; n <= 300; n++) {
      const data = randomBytes(n);
      const want = createHash('md5').update(data).digest('hex');
      expect(hexOf(data)).toBe(want);
      const out = Buffer.alloc(16);
      md5.reset();
      for (let i = 0; i < n; ) { const j = Math.min(n, i + Math.floor(Math.random() * 70)); md5.update(data, i, j); i = j; }
      md5.digestInto(out);
      expect(out.toString('hex')).toBe(want);
    }
  });

  it('updateZeros equals updating with zero octets', () => {
    for (const [pre, zeros] of [[0, 16], [3, 16], [60, 16], [10, 200]] as const) {
      const head = randomBytes(pre);
      const out = Buffer.alloc(16);
      md5.reset().update(head).updateZeros(zeros).digestInto(out);
      expect(out.toString('hex')).toBe(createHash('md5').update(head).update(Buffer.alloc(zeros)).digest('hex'));
    }
  });
});

describe('HMAC-MD5 (RFC 2104)', () => {
  it('matches the RFC 2202 §2 test cases', () => {
    expect(hmacOf(Buffer.alloc(16, 0x0b), Buffer.from('Hi There'))).toBe('9294727a3638bb1c13f48ef8158bfc9d');
    expect(hmacOf('Jefe', Buffer.from('what do ya want for nothing?'))).toBe('750c783e6ab0b503eaa86e310a5db738');
    expect(hmacOf(Buffer.alloc(16, 0xaa), Buffer.alloc(50, 0xdd))).toBe('56be34521d144c88dbb8c733f0e8b3f6');
    expect(hmacOf(Buffer.alloc(80, 0xaa), Buffer.from('Test Using Larger Than Block-Size Key - Hash Key First'))).toBe('6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd');
  });

  it('agrees with node:crypto for text secrets of every length up to 100 (UTF-8 included)', () => {
    for (let n = 0; n <= 100; n++) {
      const secret = 'ş' + randomBytes(n).toString('base64').slice(0, n);
      const data = randomBytes(Math.floor(Math.random() * 400));
      expect(hmacOf(secret, data)).toBe(createHmac('md5', secret).update(data).digest('hex'));
    }
  });
});
