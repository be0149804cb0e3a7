import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TAG, seq, smallInt, tlv } from '../../engine/compliance/der.js';
import { loadConfig } from '../../engine/index.js';
import { readTimeStampResponse, timeStampRequest, TsaClient } from '../../engine/compliance/tsa-client.js';
import { startLocalTsa, type LocalTsa } from '../local-tsa.js';

const sha = (s: string): Buffer => createHash('sha256').update(s).digest();

describe('RFC 3161 client', () => {
  let tsa: LocalTsa;
  beforeAll(async () => { tsa = await startLocalTsa(); });
  afterAll(async () => { await tsa?.close(); });

  it('writes the TimeStampReq byte for byte as `openssl ts -query -sha256 -cert -no_nonce` does', () => {
    // openssl ts -query -digest $(printf hello | sha256sum | cut -d' ' -f1) -sha256 -cert -no_nonce | xxd -p
    const openssl = Buffer.from(
      '30390201013031300d060960864801650304020105000420'
      + '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824' + '0101ff', 'hex');
    expect(timeStampRequest(sha('hello'), null)).toEqual(openssl);
    // A nonce goes between the imprint and certReq as a positive, minimal INTEGER (RFC 3161 §2.4.1, X.690 §8.3).
    const withNonce = timeStampRequest(sha('hello'), Buffer.from('00ff01', 'hex'));
    expect(withNonce.subarray(withNonce.length - 3 - 5).toString('hex')).toBe('020300ff01' + '0101ff');
    expect(() => timeStampRequest(Buffer.alloc(20), null)).toThrow(/32 bytes/);
  });

  it('reads a rejection with its status text, and refuses what is not a TimeStampResp', () => {
    // TimeStampResp { PKIStatusInfo { rejection(2), statusString { "bad alg" }, failInfo badAlg } }
    const rejection = seq(seq(smallInt(2), seq(tlv(TAG.UTF8_STRING, Buffer.from('bad alg'))), Buffer.from('03020780', 'hex')));
    expect(readTimeStampResponse(rejection)).toEqual({ status: 2, statusText: 'bad alg', token: null });
    expect(() => readTimeStampResponse(Buffer.from('3005020100', 'hex'))).toThrow();
    expect(() => readTimeStampResponse(Buffer.concat([rejection, Buffer.from([0])]))).toThrow(/one SEQUENCE/);
  });

  it('keeps a granted token for our digest; refuses a replayed answer and an HTTP error', async () => {
    const client = new TsaClient(tsa.url);
    const t = await client.stamp(sha('day one'));
    expect(t.genTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const parsed = readTimeStampResponse(t.tsr);
    expect(parsed.status).toBe(0);
    expect(parsed.token!.imprint).toEqual(sha('day one'));
    expect(parsed.token!.hashOid).toBe('2.16.840.1.101.3.4.2.1');

    tsa.replay = true;
    try {
      // Same digest, old nonce; then another digest altogether.
      await expect(client.stamp(sha('day one'))).rejects.toMatchObject({ code: 'tsa_bad_response', message: expect.stringMatching(/nonce/) });
      await expect(client.stamp(sha('day two'))).rejects.toMatchObject({ code: 'tsa_bad_response', message: expect.stringMatching(/another digest/) });
    } finally {
      tsa.replay = false;
    }
    tsa.down = true;
    try {
      await expect(client.stamp(sha('day three'))).rejects.toMatchObject({ code: 'tsa_bad_response', message: 'Time-stamp authority answered with an unusable response: HTTP 503' });
    } finally {
      tsa.down = false;
    }
    await expect(new TsaClient('http://127.0.0.1:1/tsa').stamp(sha('x'))).rejects.toMatchObject({ code: 'tsa_unreachable' });
  });

  it('takes TSA_URL as an optional http(s) URL', () => {
    const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://127.0.0.1/x', JWT_SECRET: 'x'.repeat(32) };
    expect(loadConfig(env).tsaUrl).toBeUndefined();
    expect(loadConfig({ ...env, TSA_URL: 'https://tsa.example/tsr' }).tsaUrl).toBe('https://tsa.example/tsr');
    expect(() => loadConfig({ ...env, TSA_URL: 'ftp://tsa.example/' })).toThrow(/TSA_URL must use http: or https:, not ftp:/);
    expect(() => loadConfig({ ...env, TSA_URL: 'not a url' })).toThrow(/TSA_URL is not a URL/);
  });
});
