import { createHash, createHmac, randomBytes, randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  Attr, Code, PacketWriter, RadiusCrypto, attributeValue, checkFraming, decodePacket, findAttribute,
  readIPv4, readString, readUint32,
} from '../../radius/index.js';
import { mulberry32 } from '../support/seeded-random.js';
import { accountingRequest } from './helpers.js';

const rc = new RadiusCrypto();

/** The `radius` npm package, used only as an independent oracle. */
const radiusPkg = createRequire(import.meta.url)('radius') as {
  decode(args: { packet: Buffer; secret: string }): { code: string; attributes: Record<string, unknown> };
  verify_response(args: { request: Buffer; response: Buffer; secret: string }): boolean;
};

const hex = (s: string) => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const md5 = (...parts: (Buffer | string)[]) => { const h = createHash('md5'); for (const p of parts) h.update(p); return h.digest(); };

// RFC 2865 §7.1: PAP login from NAS 192.168.1.16, port 3; secret "xyzzy5461".
const RFC2865_7_1_REQUEST = hex(`
  01 00 00 38 0f 40 3f 94 73 97 80 57 bd 83 d5 cb
  98 f4 22 7a 01 06 6e 65 6d 6f 02 12 0d be 70 8d
  93 d4 13 ce 31 96 e4 3f 78 2a 0a ee 04 06 c0 a8
  01 10 05 06 00 00 00 03`);
const RFC2865_7_1_ACCEPT = hex(`
  02 00 00 26 86 fe 22 0e 76 24 ba 2a 10 05 f6 bf
  9b 55 e0 b2 06 06 00 00 00 01 0f 06 00 00 00 00
  0e 06 c0 a8 01 03`);
// RFC 2865 §7.2: CHAP framed user, and its Access-Accept (Framed-Compression
// octet corrected to 1, as the RFC's text says; the printed dump has a typo).
const RFC2865_7_2_REQUEST = hex(`
  01 01 00 47 2a ee 86 f0 8d 0d 55 96 9c a5 97 8e
  0d 33 67 a2 01 08 66 6c 6f 70 73 79 03 13 16 e9
  75 57 c3 16 18 58 95 f2 93 ff 63 44 07 72 75 04
  06 c0 a8 01 10 05 06 00 00 00 14 06 06 00 00 00
  02 07 06 00 00 00 01`);
const RFC2865_7_2_ACCEPT = hex(`
  02 01 00 38 15 ef bc 7d ab 26 cf a3 dc 34 d9 c0
  3c 86 01 a4 06 06 00 00 00 02 07 06 00 00 00 01
  08 06 ff ff ff fe 0a 06 00 00 00 00 0d 06 00 00
  00 01 0c 06 00 00 05 dc`);
// RFC 5997 §6.1: Status-Server with Message-Authenticator, secret "xyzzy5461".
const RFC5997_STATUS_SERVER = hex(`
  0c da 00 26 8a 54 f4 68 6f b3 94 c5 28 66 e3 02
  18 5d 06 23 50 12 5a 66 5e 2e 1e 84 11 f3 e2 43
  82 20 97 c8 4f a3`);
const SECRET = 'xyzzy5461';

describe('RFC 2865 §7 byte vectors', () => {
  it('§7.1: decodes the PAP Access-Request and recovers the password "arctangent"', () => {
    const len = checkFraming(RFC2865_7_1_REQUEST);
    expect(len).toBe(56);
    const p = decodePacket(RFC2865_7_1_REQUEST)!;
    expect(p.code).toBe(Code.ACCESS_REQUEST);
    expect(p.identifier).toBe(0);
    expect(readString(RFC2865_7_1_REQUEST, findAttribute(RFC2865_7_1_REQUEST, len, Attr.USER_NAME))).toBe('nemo');
    expect(readIPv4(RFC2865_7_1_REQUEST, findAttribute(RFC2865_7_1_REQUEST, len, Attr.NAS_IP_ADDRESS))).toBe('192.168.1.16');
    expect(readUint32(RFC2865_7_1_REQUEST, findAttribute(RFC2865_7_1_REQUEST, len, Attr.NAS_PORT))).toBe(3);
    const pw = findAttribute(RFC2865_7_1_REQUEST, len, Attr.USER_PASSWORD);
    expect(rc.decryptUserPassword(RFC2865_7_1_REQUEST, pw, SECRET, p.authenticator)).toBe('arctangent');
    expect(rc.decryptUserPassword(RFC2865_7_1_REQUEST, pw, 'wrong-secret', p.authenticator)).not.toBe('arctangent');
  });

  it('§7.1: encodes the Access-Accept octet for octet, Response Authenticator included', () => {
    const reply = new PacketWriter().begin(Code.ACCESS_ACCEPT, 0)
      .uint32(Attr.SERVICE_TYPE, 1)
      .uint32(Attr.LOGIN_SERVICE, 0)
      .ipv4(Attr.LOGIN_IP_HOST, '192.168.1.3')
      .finishReply(RFC2865_7_1_REQUEST.subarray(4, 20), SECRET);
    expect(reply.toString('hex')).toBe(RFC2865_7_1_ACCEPT.toString('hex'));
    expect(reply.subarray(4, 20).toString('hex')).toBe('86fe220e7624ba2a1005f6bf9b55e0b2');
  });

  it('§7.1: the RFC reply verifies against its request, and fails with another secret or request', () => {
    expect(rc.verifyResponseAuthenticator(RFC2865_7_1_ACCEPT, 38, RFC2865_7_1_REQUEST.subarray(4, 20), SECRET)).toBe(true);
    expect(rc.verifyResponseAuthenticator(RFC2865_7_1_ACCEPT, 38, RFC2865_7_1_REQUEST.subarray(4, 20), 'xyzzy5462')).toBe(false);
    expect(rc.verifyResponseAuthenticator(RFC2865_7_1_ACCEPT, 38, RFC2865_7_2_REQUEST.subarray(4, 20), SECRET)).toBe(false);
  });

  it('§7.2: decodes the CHAP request and its Access-Accept', () => {
    // The Response Authenticator printed in §7.2 does not verify with either
    // Framed-Compression value (layeh/radius only parses it too), so only the
    // attributes are checked here.
    const req = decodePacket(RFC2865_7_2_REQUEST)!;
    expect(req.identifier).toBe(1);
    expect(attributeValue(req, Attr.USER_NAME)!.toString()).toBe('flopsy');
    expect(attributeValue(req, 3 /* CHAP-Password */)!.length).toBe(17);
    const acc = decodePacket(RFC2865_7_2_ACCEPT)!;
    expect(acc.code).toBe(Code.ACCESS_ACCEPT);
    expect(readIPv4(RFC2865_7_2_ACCEPT, findAttribute(RFC2865_7_2_ACCEPT, 56, Attr.FRAMED_IP_ADDRESS))).toBe('255.255.255.254');
    expect(readUint32(RFC2865_7_2_ACCEPT, findAttribute(RFC2865_7_2_ACCEPT, 56, 12 /* Framed-MTU */))).toBe(1500);
  });

  it('RFC 5997 §6.1: verifies the Message-Authenticator of the Status-Server example', () => {
    const len = checkFraming(RFC5997_STATUS_SERVER);
    const ma = findAttribute(RFC5997_STATUS_SERVER, len, Attr.MESSAGE_AUTHENTICATOR);
    expect(ma).toBe(20);
    expect(rc.verifyMessageAuthenticator(RFC5997_STATUS_SERVER, len, ma, SECRET, null)).toBe(true);
    expect(rc.verifyMessageAuthenticator(RFC5997_STATUS_SERVER, len, ma, 'xyzzy5460', null)).toBe(false);
    const tampered = Buffer.from(RFC5997_STATUS_SERVER);
    tampered[10]! ^= 1; // inside the Request Authenticator, which the HMAC covers
    expect(rc.verifyMessageAuthenticator(tampered, len, ma, SECRET, null)).toBe(false);
  });
});

describe('authenticators', () => {
  it('Access-Accept: Message-Authenticator first, HMAC-MD5 with the Request Authenticator (RFC 3579 §3.2), accepted by the radius package', () => {
    const request = RFC2865_7_1_REQUEST;
    const reply = new PacketWriter().begin(Code.ACCESS_ACCEPT, 0).messageAuthenticator()
      .uint32(Attr.SESSION_TIMEOUT, 60).string(Attr.CLASS, 'ses_1').finishReply(request.subarray(4, 20), SECRET);
    expect(reply[20]).toBe(Attr.MESSAGE_AUTHENTICATOR);
    // Independent computation: zero the MA, put the request's authenticator in the header.
    const copy = Buffer.from(reply);
    request.copy(copy, 4, 4, 20);
    copy.fill(0, 22, 38);
    expect(createHmac('md5', SECRET).update(copy).digest().equals(reply.subarray(22, 38))).toBe(true);
    copy.set(reply.subarray(22, 38), 22);
    expect(md5(copy, SECRET).equals(reply.subarray(4, 20))).toBe(true);
    expect(rc.verifyMessageAuthenticator(reply, reply.length, 20, SECRET, request.subarray(4, 20))).toBe(true);
    expect(radiusPkg.verify_response({ request: Buffer.from(request), response: Buffer.from(reply), secret: SECRET })).toBe(true);
  });

  it('Accounting-Request: Request Authenticator = MD5(Code+ID+Length+16 zeros+Attributes+Secret) (RFC 2866 §3)', () => {
    const pkt = accountingRequest({ secret: SECRET, id: 7, acctSessionId: 'abc', inputOctets: 5 });
    const zeroed = Buffer.from(pkt);
    zeroed.fill(0, 4, 20);
    expect(md5(zeroed, SECRET).equals(pkt.subarray(4, 20))).toBe(true);
    expect(rc.verifyRequestAuthenticator(pkt, pkt.length, SECRET)).toBe(true);
    expect(rc.verifyRequestAuthenticator(pkt, pkt.length, 'other')).toBe(false);
    const tampered = Buffer.from(pkt);
    tampered[tampered.length - 1]! ^= 1;
    expect(rc.verifyRequestAuthenticator(tampered, tampered.length, SECRET)).toBe(false);
    // The radius package checks the same authenticator on decode and throws on a mismatch.
    expect(radiusPkg.decode({ packet: Buffer.from(pkt), secret: SECRET }).code).toBe('Accounting-Request');
    expect(() => radiusPkg.decode({ packet: Buffer.from(pkt), secret: 'other' })).toThrow(/authenticator mismatch/);
  });

  it('Disconnect-Request: Message-Authenticator over a zero authenticator, then the Request Authenticator (RFC 5176 §2.3, §3.4)', () => {
    const pkt = new PacketWriter().begin(Code.DISCONNECT_REQUEST, 9).messageAuthenticator()
      .string(Attr.USER_NAME, 'guest').string(Attr.ACCT_SESSION_ID, 'S1').finishSignedRequest(SECRET);
    const zeroed = Buffer.from(pkt);
    zeroed.fill(0, 4, 20);
    expect(md5(zeroed, SECRET).equals(pkt.subarray(4, 20))).toBe(true);
    const forMac = Buffer.from(zeroed);
    forMac.fill(0, 22, 38);
    expect(createHmac('md5', SECRET).update(forMac).digest().equals(pkt.subarray(22, 38))).toBe(true);
    expect(rc.verifyMessageAuthenticator(pkt, pkt.length, 20, SECRET, Buffer.alloc(16))).toBe(true);
  });

  it('Accounting-Response: Response Authenticator over the request authenticator, no attributes', () => {
    const req = accountingRequest({ secret: SECRET, id: 3 });
    const resp = new PacketWriter().begin(Code.ACCOUNTING_RESPONSE, 3).finishReply(req.subarray(4, 20), SECRET);
    expect(resp.length).toBe(20);
    expect(md5(Buffer.from([5, 3, 0, 20]), req.subarray(4, 20), SECRET).equals(resp.subarray(4, 20))).toBe(true);
  });
});

describe('User-Password (RFC 2865 §5.2)', () => {
  it('round-trips passwords of 0 to 128 octets, multi-byte text included', () => {
    for (const pw of ['', 'a', 'x'.repeat(15), 'y'.repeat(16), 'z'.repeat(17), 'p'.repeat(100), 'q'.repeat(128), 'şifre-ğüİ']) {
      const ra = randomBytes(16);
      const pkt = new PacketWriter().begin(Code.ACCESS_REQUEST, 1, ra).userPassword(pw, 's3cret').finishAccessRequest('s3cret');
      const at = findAttribute(pkt, pkt.length, Attr.USER_PASSWORD);
      expect((pkt[at + 1]! - 2) % 16).toBe(0);
      expect(rc.decryptUserPassword(pkt, at, 's3cret', ra)).toBe(pw);
    }
    expect(() => rc.encryptUserPassword('w'.repeat(129), 's', randomBytes(16))).toThrow(RangeError);
  });

  it('refuses hidden values that are not 16..128 octets in steps of 16', () => {
    for (const n of [0, 1, 15, 17, 31, 144]) {
      const buf = Buffer.concat([Buffer.alloc(20), Buffer.from([Attr.USER_PASSWORD, n + 2]), Buffer.alloc(n)]);
      expect(rc.decryptUserPassword(buf, 20, 's', Buffer.alloc(16))).toBeNull();
    }
  });
});

describe('framing (RFC 2865 §3)', () => {
  const header = (code: number, len: number, total = len) => {
    const b = Buffer.alloc(total);
    b[0] = code;
    b.writeUInt16BE(len, 2);
    return b;
  };

  it('rejects short datagrams, bad Length fields and bad attribute lengths', () => {
    expect(checkFraming(Buffer.alloc(0))).toBe(-1);
    expect(checkFraming(Buffer.alloc(19))).toBe(-1);
    expect(checkFraming(header(1, 19, 20))).toBe(-1); // Length < 20
    expect(checkFraming(header(1, 4097, 4097))).toBe(-1); // Length > 4096
    expect(checkFraming(header(1, 30, 25))).toBe(-1); // Length beyond the datagram
    const attr = (bytes: number[]) => { const b = header(1, 20 + bytes.length); Buffer.from(bytes).copy(b, 20); return b; };
    expect(checkFraming(attr([1, 0]))).toBe(-1); // attribute length 0
    expect(checkFraming(attr([1, 1, 0]))).toBe(-1); // attribute length 1
    expect(checkFraming(attr([1, 6, 0x61]))).toBe(-1); // runs past the end
    expect(checkFraming(attr([1]))).toBe(-1); // truncated attribute header
    expect(checkFraming(attr([1, 3, 0x61]))).toBe(23);
  });

  it('treats octets after Length as padding', () => {
    const b = Buffer.concat([RFC2865_7_1_REQUEST, Buffer.from([0xff, 0xff, 0xff])]);
    expect(checkFraming(b)).toBe(56);
    expect(attributeValue(decodePacket(b)!, Attr.USER_NAME)!.toString()).toBe('nemo');
  });

  it('never throws on 20,000 random or mutated datagrams', () => {
    // Seeded, so a failure can be replayed: CODEC_FUZZ_SEED=<seed> npx vitest run test/radius/codec.test.ts
    const seed = process.env.CODEC_FUZZ_SEED ? Number(process.env.CODEC_FUZZ_SEED) : randomInt(2 ** 32);
    console.info(`codec fuzz seed ${seed} (replay: CODEC_FUZZ_SEED=${seed} npx vitest run test/radius/codec.test.ts)`);
    const random = mulberry32(seed);
    const randomOctets = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256)));
    const base = [RFC2865_7_1_REQUEST, RFC2865_7_2_REQUEST, RFC5997_STATUS_SERVER];
    for (let i = 0; i < 20_000; i++) {
      let b: Buffer;
      if (i % 2) {
        b = randomOctets(Math.floor(random() * 80));
        if (b.length >= 4 && i % 3 === 0) b.writeUInt16BE(Math.min(b.length, 20 + (b[0]! % 60)), 2);
      } else {
        b = Buffer.from(base[i % 3]!);
        for (let k = 0; k < 1 + (i % 4); k++) b[Math.floor(random() * b.length)] = Math.floor(random() * 256);
        if (i % 5 === 0) b = b.subarray(0, Math.floor(random() * b.length));
      }
      const at = `seed ${seed}, datagram ${i}: ${b.toString('hex')}`;
      let len = -1;
      let p: unknown = null;
      expect(() => { len = checkFraming(b); p = decodePacket(b); }, at).not.toThrow();
      expect(p === null, at).toBe(len < 0);
      if (len >= 0) {
        const pw = findAttribute(b, len, Attr.USER_PASSWORD);
        if (pw >= 0) expect(() => rc.decryptUserPassword(b, pw, 's', b.subarray(4, 20)), at).not.toThrow();
        const ma = findAttribute(b, len, Attr.MESSAGE_AUTHENTICATOR);
        if (ma >= 0) expect(rc.verifyMessageAuthenticator(b, len, ma, 's', null), at).toBe(false);
      }
    }
  });
});

describe('PacketWriter', () => {
  it('cuts text to 253 octets on a character boundary', () => {
    const pkt = new PacketWriter().begin(Code.ACCESS_REJECT, 1).string(Attr.REPLY_MESSAGE, 'ğ'.repeat(200)).finishReply(Buffer.alloc(16), 's');
    const at = findAttribute(pkt, pkt.length, Attr.REPLY_MESSAGE);
    expect(pkt[at + 1]).toBe(2 + 252);
    expect(readString(pkt, at)).toBe('ğ'.repeat(126));
  });

  it('refuses to build a packet over 4096 octets, with a catalogued error', () => {
    const w = new PacketWriter().begin(Code.ACCESS_ACCEPT, 1);
    expect(() => { for (let i = 0; i < 20; i++) w.string(Attr.REPLY_MESSAGE, 'x'.repeat(253)); }).toThrow(
      expect.objectContaining({ code: 'radius_packet_too_large' }),
    );
  });

  it('clamps integers to 32 bits and refuses negative or non-finite values', () => {
    const pkt = new PacketWriter().begin(Code.ACCESS_ACCEPT, 1).uint32(Attr.SESSION_TIMEOUT, 2 ** 40).finishReply(Buffer.alloc(16), 's');
    expect(readUint32(pkt, 20)).toBe(0xffffffff);
    expect(() => new PacketWriter().begin(1, 1).uint32(Attr.SESSION_TIMEOUT, -1)).toThrow(expect.objectContaining({ code: 'radius_bad_value' }));
    expect(() => new PacketWriter().begin(1, 1).uint32(Attr.SESSION_TIMEOUT, NaN)).toThrow(expect.objectContaining({ code: 'radius_bad_value' }));
  });
});
