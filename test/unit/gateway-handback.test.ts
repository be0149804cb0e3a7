import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  buildHandback, chapResponse, gatewayQuery, handbackUrl, openNdsToken, papPassword, parseGatewayParams, unpackOpenNdsQuery,
} from '../../engine/index.js';

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

// The redirect openNDS 9.10.0 (Debian) sent in test/e2e/opennds-gateway.test.ts's namespaces, faspath
// "/portal?hotspot_id=hs_abc", gatewayname "hs_probe12345", FAS level 1: openNDS appends "?fas=<base64>" verbatim.
const NDS_FAS = 'aGlkPTM4YmMxYTFmYzZhOGQyMDhkYzc3ZmFiNDdjZGVjY2RkYmJlZWZhNmNjOGQ4ZmVlZGRiMTIzMGMyNDY0MjJkMmQsIGNsaWVudGlwPTE5OC4xOC40LjM0LCBjbGllbnRtYWM9MjY6Y2Q6MTE6YTY6NjU6MzMsIGNsaWVudF90eXBlPWNwZF9jYW4sIGdhdGV3YXluYW1lPWhzX3Byb2JlMTIzNDUlMjBOb2RlJTNhYWUxNWYwZDdjMTdhJTIwLCBnYXRld2F5dXJsPWh0dHAlM2ElMmYlMmYxOTguMTguNC4xLCB2ZXJzaW9uPTkuMTAuMCwgZ2F0ZXdheWFkZHJlc3M9MTk4LjE4LjQuMToyMDUwLCBnYXRld2F5bWFjPWFlMTVmMGQ3YzE3YSwgb3JpZ2ludXJsPWh0dHAlM2ElMmYlMmYxOTguMTguMy4xJTJmeCUzZnklM2QxLCBjbGllbnRpZj1sMGYzODBhMSwgdGhlbWVzcGVjPShudWxsKSwgKG51bGwpKG51bGwpKG51bGwpKG51bGwp';
const NDS_HID = '38bc1a1fc6a8d208dc77fab47cdeccddbbeefa6cc8d8feeddb1230c246422d2d';

describe('openNDS 9 FAS level 1 as it really arrives', () => {
  it('unpacks fas= into plain parameters and repairs a hotspot_id that openNDS glued ?fas= onto', () => {
    const q = unpackOpenNdsQuery(new URLSearchParams(`hotspot_id=hs_abc?fas=${NDS_FAS}`));
    expect(q.get('hotspot_id')).toBe('hs_abc');
    expect(q.get('fas')).toBeNull();
    expect(Object.fromEntries(q)).toMatchObject({
      hid: NDS_HID, clientip: '198.18.4.34', clientmac: '26:cd:11:a6:65:33', gatewayname: 'hs_probe12345 Node:ae15f0d7c17a ',
      gatewayaddress: '198.18.4.1:2050', originurl: 'http://198.18.3.1/x?y=1',
    });
    const gw = parseGatewayParams(q);
    expect(gw).toEqual({
      kind: 'opennds', level: 1, authUrl: 'http://198.18.4.1:2050/opennds_auth/', tok: '', hid: NDS_HID,
      redir: 'http://198.18.3.1/x?y=1', mac: '26:CD:11:A6:65:33', ip: '198.18.4.34', gatewayname: 'hs_probe12345 Node:ae15f0d7c17a ',
    });
    // The hand-back openNDS checks: tok = sha256(hid || faskey) in hex, longer than 8 characters (its "hid mode").
    const hb = buildHandback(gw!, { credential: null, secret: 'k3y', uamAuth: 'chap', landingUrl: null });
    expect(handbackUrl(hb!)).toBe(`http://198.18.4.1:2050/opennds_auth/?tok=${createHash('sha256').update(NDS_HID + 'k3y').digest('hex')}`
      + `&redir=${encodeURIComponent('http://198.18.3.1/x?y=1')}`);
    // What the page carries in its hidden field parses to the same gateway.
    expect(parseGatewayParams(new URLSearchParams(gatewayQuery(q)))).toEqual(gw);
  });

  it('takes the hotspot from gatewayname (without openNDS\'s " Node:<mac> ") when the URL names none', () => {
    expect(unpackOpenNdsQuery(new URLSearchParams(`fas=${NDS_FAS}`)).get('hotspot_id')).toBe('hs_probe12345');
    const named = Buffer.from('hid=ab12, gatewayname=Cafe%20Lobby%20Node%3a0200000000aa%20, gatewayaddress=10.0.0.1:2050, ').toString('base64');
    expect(unpackOpenNdsQuery(new URLSearchParams(`fas=${named}`)).get('hotspot_id')).toBeNull();
    expect(unpackOpenNdsQuery(new URLSearchParams(`hotspot_id=hs_given&fas=${NDS_FAS}`)).get('hotspot_id')).toBe('hs_given');
  });

  it('reads level 0 the same ways: authaction glued onto a faspath query, or the hotspot in gatewayname', () => {
    const tail = '&clientip=192.168.8.23&gatewayname=hs_cafe%20Node%3a0200000000aa%20&tok=770bfe05&redir=http%3A%2F%2Fexample.com%2F';
    const glued = unpackOpenNdsQuery(new URLSearchParams(`hotspot_id=hs_given?authaction=http://192.168.8.1:2050/opennds_auth/?clientip=192.168.8.23${tail}`));
    expect(glued.get('hotspot_id')).toBe('hs_given');
    expect(parseGatewayParams(glued)).toMatchObject({ kind: 'opennds', level: 0, authUrl: 'http://192.168.8.1:2050/opennds_auth/', tok: '770bfe05' });
    const named = unpackOpenNdsQuery(new URLSearchParams(`authaction=http://192.168.8.1:2050/opennds_auth/?clientip=192.168.8.23${tail}`));
    expect(named.get('hotspot_id')).toBe('hs_cafe');
  });

  it('reads a base64 "+" that arrived as a space, and leaves other queries as they are', () => {
    const text = 'hid=ab12, clientip=10.0.0.9, clientmac=02:00:00:00:00:01, gatewayname=hs_plus%20Node%3a0200000000aa%20, '
      + 'gatewayaddress=10.0.0.1:2050, originurl=http%3a%2f%2fexample.com%2faa~u, ';
    const b64 = Buffer.from(text).toString('base64');
    expect(b64).toContain('+');
    const q = unpackOpenNdsQuery(new URLSearchParams(`fas=${b64}`)); // unescaped "+" in a query is a space
    expect(q.get('originurl')).toBe('http://example.com/aa~u');
    expect(q.get('hotspot_id')).toBe('hs_plus');
    const plain = new URLSearchParams(CHILLI);
    expect(unpackOpenNdsQuery(plain)).toBe(plain);
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
