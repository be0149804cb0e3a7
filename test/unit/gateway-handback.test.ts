import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildHandback, chapResponse, gatewayQuery, handbackUrl, openNdsToken, papPassword, parseGatewayParams } from '../../engine/index.js';

const md5 = (...parts: Buffer[]): Buffer => parts.reduce((h, p) => h.update(p), createHash('md5')).digest();

// A chilli redirect as seen in an access log of a real OpenWrt CoovaChilli (challenge, mac and userurl kept).
const CHILLI = 'res=notyet&uamip=192.168.182.1&uamport=3660&challenge=5b1d296db7826a655411dcd83ee25154'
  + '&called=94-83-C4-01-42-27&mac=5C-1D-D9-20-A0-C1&ip=192.168.182.64&nasid=fonlo&sessionid=5e6792ce00000006'
  + '&userurl=http%3a%2f%2fcaptive.apple.com%2fhotspot-detect.html';

describe('gateway parameters', () => {
  it('reads a CoovaChilli UAM redirect', () => {
    const gw = parseGatewayParams(new URLSearchParams(CHILLI));
    expect(gw).toEqual({
      kind: 'uam', uamip: '192.168.182.1', uamport: 3660, challenge: '5b1d296db7826a655411dcd83ee25154',
      mac: '5C:1D:D9:20:A0:C1', ip: '192.168.182.64', called: '94-83-C4-01-42-27', nasid: 'fonlo',
      userurl: 'http://captive.apple.com/hotspot-detect.html',
    });
  });

  it('reads a MikroTik login redirect', () => {
    const gw = parseGatewayParams({ 'link-login-only': 'http://10.5.50.1/login', 'link-orig': 'http://example.com/', mac: '02:11:22:33:44:55', ip: '10.5.50.9' });
    expect(gw).toEqual({ kind: 'mikrotik', loginUrl: 'http://10.5.50.1/login', origUrl: 'http://example.com/', mac: '02:11:22:33:44:55', ip: '10.5.50.9' });
  });

  it('reads openNDS FAS level 0 (authaction) and level 1 (hid, gatewayaddress)', () => {
    const l0 = parseGatewayParams(new URLSearchParams(
      'authaction=http://192.168.8.1:2050/opennds_auth/?clientip=192.168.8.23&gatewayname=Cafe&tok=770bfe05&redir=http%3A%2F%2Fexample.com%2F&clientmac=04:15:52:6a:e4:ad'));
    expect(l0).toMatchObject({ kind: 'opennds', level: 0, authUrl: 'http://192.168.8.1:2050/opennds_auth/', tok: '770bfe05', mac: '04:15:52:6A:E4:AD', gatewayname: 'Cafe' });
    const l1 = parseGatewayParams({ hid: 'abc123', gatewayaddress: '192.168.8.1:2050', clientip: '192.168.8.23', redir: 'http://example.com/' });
    expect(l1).toMatchObject({ kind: 'opennds', level: 1, authUrl: 'http://192.168.8.1:2050/opennds_auth/', hid: 'abc123' });
  });

  it('is null without gateway parameters (MAC authentication) and refuses unusable ones', () => {
    expect(parseGatewayParams(new URLSearchParams('hotspot_id=hs_1&mac=02:00:00:00:00:01'))).toBeNull();
    expect(() => parseGatewayParams({ uamip: 'evil.example', challenge: '5b1d296db7826a655411dcd83ee25154' })).toThrow(/uamip/);
    expect(() => parseGatewayParams({ uamip: '10.1.0.1', challenge: 'zz' })).toThrow(/challenge/);
    expect(() => parseGatewayParams({ 'link-login-only': 'javascript:alert(1)' })).toThrow(/link-login-only/);
    expect(() => parseGatewayParams({ tok: 'abc', authaction: 'data:text/html,x' })).toThrow(/authaction/);
  });

  it('keeps only known names when carried along as one query string', () => {
    expect(gatewayQuery(new URLSearchParams(CHILLI + '&evil=1&hotspot_id=x'))).not.toMatch(/evil|hotspot_id/);
    expect(parseGatewayParams(new URLSearchParams(gatewayQuery(new URLSearchParams(CHILLI))))).toEqual(parseGatewayParams(new URLSearchParams(CHILLI)));
  });
});

describe('hand-back', () => {
  const challenge = '5b1d296db7826a655411dcd83ee25154';

  it('computes the CHAP response as CoovaChilli does, with and without a UAM secret', () => {
    const c = Buffer.from(challenge, 'hex');
    // Independently from the documented formula: challenge' = MD5(challenge || uamsecret); response = MD5(0x00 || password || challenge').
    const withSecret = md5(Buffer.from([0]), Buffer.from('s3cret-pass'), md5(c, Buffer.from('uamsecret'))).toString('hex');
    expect(chapResponse(challenge, 's3cret-pass', 'uamsecret')).toBe(withSecret);
    const without = md5(Buffer.from([0]), Buffer.from('s3cret-pass'), c).toString('hex');
    expect(chapResponse(challenge, 's3cret-pass', null)).toBe(without);
    expect(withSecret).not.toBe(without);
    // A fixed vector, computed outside Node (Python hashlib, same formula), guards against both sides changing together.
    expect(chapResponse('00112233445566778899aabbccddeeff', 'password', 'secret')).toBe('cab1285366950f0925b964c2faa27d2b');
  });

  it('computes the PAP form as password XOR challenge\' over the password length', () => {
    const cp = md5(Buffer.from(challenge, 'hex'), Buffer.from('k'));
    const pw = 'a-password-longer-than-16';
    const expected = Buffer.from([...Buffer.from(pw)].map((b, i) => b ^ cp[i % 16]!)).toString('hex');
    expect(papPassword(challenge, pw, 'k')).toBe(expected);
    expect(expected).toHaveLength(pw.length * 2);
  });

  it('builds each family\'s hand-back', () => {
    const credential = { username: 'gabc', password: 'pw' };
    const uam = buildHandback(parseGatewayParams(new URLSearchParams(CHILLI))!, { credential, secret: 'sec', uamAuth: 'chap', landingUrl: null });
    expect(uam).toEqual({ method: 'GET', url: 'http://192.168.182.1:3660/logon', fields: {
      username: 'gabc', response: chapResponse(challenge, 'pw', 'sec'), userurl: 'http://captive.apple.com/hotspot-detect.html' } });
    expect(handbackUrl(uam!)).toMatch(/^http:\/\/192\.168\.182\.1:3660\/logon\?username=gabc&response=[0-9a-f]{32}&userurl=http/);
    const pap = buildHandback(parseGatewayParams(new URLSearchParams(CHILLI))!, { credential, secret: null, uamAuth: 'pap', landingUrl: 'https://venue.example/' });
    expect(pap!.fields).toEqual({ username: 'gabc', password: papPassword(challenge, 'pw', null), userurl: 'https://venue.example/' });

    const mt = buildHandback(parseGatewayParams({ 'link-login-only': 'http://10.5.50.1/login', 'link-orig': 'http://example.com/' })!,
      { credential, secret: null, uamAuth: 'chap', landingUrl: null });
    expect(mt).toEqual({ method: 'POST', url: 'http://10.5.50.1/login', fields: { username: 'gabc', password: 'pw', dst: 'http://example.com/' } });

    const nds0 = buildHandback(parseGatewayParams({ tok: '770bfe05', gatewayaddress: '192.168.8.1:2050', redir: 'http://example.com/' })!,
      { credential: null, secret: null, uamAuth: 'chap', landingUrl: null });
    expect(nds0).toEqual({ method: 'GET', url: 'http://192.168.8.1:2050/opennds_auth/', fields: { tok: '770bfe05', redir: 'http://example.com/' } });
    const nds1 = buildHandback(parseGatewayParams({ hid: 'abc123', gatewayaddress: '192.168.8.1:2050' })!,
      { credential: null, secret: 'faskey', uamAuth: 'chap', landingUrl: null });
    expect(nds1!.fields.tok).toBe(createHash('sha256').update('abc123faskey').digest('hex'));
    expect(openNdsToken('abc123', 'faskey')).toBe(nds1!.fields.tok);
    // Level 1 without a faskey, UAM without a credential: nothing can be handed back.
    expect(buildHandback(parseGatewayParams({ hid: 'abc123', gatewayaddress: '192.168.8.1:2050' })!, { credential: null, secret: null, uamAuth: 'chap', landingUrl: null })).toBeNull();
    expect(buildHandback(parseGatewayParams(new URLSearchParams(CHILLI))!, { credential: null, secret: null, uamAuth: 'chap', landingUrl: null })).toBeNull();
  });
});
