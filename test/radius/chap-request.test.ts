import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { readAccessRequest } from '../../radius/access-request.js';
import { Attr, Code } from '../../radius/attributes.js';
import { PacketWriter } from '../../radius/packet-writer.js';
import { RadiusCrypto } from '../../radius/radius-crypto.js';
import { chapMatches } from '../../engine/signin/chap.js';
import { nasRecord } from './helpers.js';

const secret = 'nas-secret';
const nas = nasRecord({ secret });
const crypto = new RadiusCrypto();

/** An Access-Request carrying CHAP as CoovaChilli sends a UAM login: CHAP-Password and CHAP-Challenge. */
function chapRequest(o: { password: string; challenge?: Buffer; ident?: number; chapLength?: number; alsoPap?: boolean }): Buffer {
  const authenticator = randomBytes(16);
  const challenge = o.challenge ?? authenticator;
  const ident = o.ident ?? 0;
  const response = createHash('md5').update(Buffer.of(ident)).update(o.password).update(challenge).digest();
  const w = new PacketWriter().begin(Code.ACCESS_REQUEST, 7, authenticator);
  w.messageAuthenticator();
  w.string(Attr.USER_NAME, 'uam-user');
  w.bytes(Attr.CHAP_PASSWORD, Buffer.concat([Buffer.of(ident), response]).subarray(0, (o.chapLength ?? 19) - 2));
  if (o.challenge) w.bytes(Attr.CHAP_CHALLENGE, o.challenge);
  if (o.alsoPap) w.userPassword('x', secret);
  w.string(Attr.CALLING_STATION_ID, '02-11-22-33-44-55');
  return w.finishAccessRequest(secret);
}

describe('CHAP in Access-Request (RFC 2865 §2.2, §5.3, §5.40)', () => {
  it('carries CHAP-Password and CHAP-Challenge to the engine, which checks them against the secret', () => {
    const challenge = randomBytes(16);
    const pkt = chapRequest({ password: 'one-time-pass', challenge, ident: 3 });
    const m = readAccessRequest(pkt, pkt.length, nas, crypto)!;
    expect(m.password).toBeUndefined();
    expect(m.chap!.ident).toBe(3);
    expect(m.chap!.challenge.equals(challenge)).toBe(true);
    expect(chapMatches(m.chap!, 'one-time-pass')).toBe(true);
    expect(chapMatches(m.chap!, 'another-pass')).toBe(false);
  });

  it('takes the Request Authenticator as the challenge when there is no CHAP-Challenge', () => {
    const pkt = chapRequest({ password: 'CODE1234' });
    const m = readAccessRequest(pkt, pkt.length, nas, crypto)!;
    expect(m.chap!.challenge.equals(pkt.subarray(4, 20))).toBe(true);
    expect(chapMatches(m.chap!, 'CODE1234')).toBe(true);
  });

  it('drops a CHAP-Password of the wrong length, and a request with both CHAP and PAP', () => {
    const short = chapRequest({ password: 'p', chapLength: 18 });
    expect(readAccessRequest(short, short.length, nas, crypto)).toBeNull();
    const both = chapRequest({ password: 'p', alsoPap: true });
    expect(readAccessRequest(both, both.length, nas, crypto)).toBeNull();
  });
});
