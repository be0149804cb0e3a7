import { describe, expect, it } from 'vitest';
import { chapMatches } from '../../engine/signin/chap.js';

// Vectors computed with Python's hashlib, independently of the code under test.
describe('CHAP responses (RFC 1994 §4.1 over RADIUS, RFC 2865 §2.2)', () => {
  it('accepts MD5(ident || secret || challenge) and refuses any other secret, ident or challenge', () => {
    const chap = { ident: 0, response: Buffer.from('80f4082912be840c3ede4d28e9dcdd39', 'hex'), challenge: Buffer.from([...Array(16).keys()]) };
    expect(chapMatches(chap, 'ABCD-2345')).toBe(true);
    expect(chapMatches(chap, 'ABCD-2346')).toBe(false);
    expect(chapMatches({ ...chap, ident: 1 }, 'ABCD-2345')).toBe(false);
    expect(chapMatches({ ...chap, challenge: Buffer.alloc(16) }, 'ABCD-2345')).toBe(false);
    expect(chapMatches({ ...chap, response: chap.response.subarray(0, 15) }, 'ABCD-2345')).toBe(false);
  });

  it('checks a CoovaChilli UAM login: the challenge the NAS sends is MD5(portal challenge || UAM secret)', () => {
    // The portal got challenge 0123...ef; chilli sends CHAP-Challenge = MD5(challenge || "uamsecret").
    const challenge = Buffer.from('90d173fa87d61bef7cab3dd3281c29fb', 'hex');
    const chap = { ident: 0, response: Buffer.from('a6cd74f0dcea33ace09958fe62ab3097', 'hex'), challenge };
    expect(chapMatches(chap, 'otp-pass-1')).toBe(true);
    expect(chapMatches(chap, 'otp-pass-2')).toBe(false);
  });
});
