import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';
import { canonicalAddress, ClientAddress, formatAddress, guestAddress } from '../../http/client-address.js';

const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32) };
const proxies = (list: string) => new ClientAddress(loadConfig({ ...env, TRUSTED_PROXIES: list }).trustedProxies);

/** Issue 18, Build 4: the source address is the peer, or a trusted proxy's word, never the client's. */
describe('the source address', () => {
  it('is the socket peer when no proxy is trusted, whatever X-Forwarded-For says', () => {
    const none = proxies('');
    expect(none.resolve('198.51.100.7', '203.0.113.9')).toBe('198.51.100.7');
    expect(none.trusts('127.0.0.1')).toBe(false);
  });

  it('ignores X-Forwarded-For from a peer outside TRUSTED_PROXIES (a spoofed header)', () => {
    const c = proxies('10.0.0.0/8');
    expect(c.resolve('198.51.100.7', '203.0.113.9')).toBe('198.51.100.7');
    expect(c.resolve('2001:db8::5', '203.0.113.9')).toBe('2001:db8::5');
  });

  it('is the right-most untrusted hop behind trusted proxies; what the client wrote to its left is ignored', () => {
    const c = proxies('10.0.0.0/8, 192.168.1.1');
    expect(c.resolve('10.0.0.2', '203.0.113.9')).toBe('203.0.113.9');
    // client-written 6.6.6.6, the real client 203.0.113.9, then two proxies of ours
    expect(c.resolve('10.0.0.2', '6.6.6.6, 203.0.113.9, 192.168.1.1, 10.1.2.3')).toBe('203.0.113.9');
    // every hop trusted: the left-most is as far as we can see
    expect(c.resolve('10.0.0.2', '10.9.9.9,10.0.0.3')).toBe('10.9.9.9');
    // several header lines, joined in order by the router
    expect(c.resolve('10.0.0.2', '6.6.6.6,203.0.113.10,10.0.0.9')).toBe('203.0.113.10');
    // no header: the proxy itself
    expect(c.resolve('10.0.0.2', '')).toBe('10.0.0.2');
  });

  it('stops at a hop that is not an address: the last address a trusted proxy vouched for', () => {
    const c = proxies('10.0.0.0/8');
    expect(c.resolve('10.0.0.2', '203.0.113.9, unknown')).toBe('10.0.0.2');
    expect(c.resolve('10.0.0.2', '=1+1, 10.0.0.7')).toBe('10.0.0.7');
    expect(c.resolve('10.0.0.2', 'x, 198.51.100.1')).toBe('198.51.100.1');
  });

  it('handles IPv6 proxies and clients, ports, and one spelling per address', () => {
    const c = proxies('fd00::/8,::1');
    expect(c.resolve('::1', '2001:DB8:0:0::1')).toBe('2001:db8::1');
    expect(c.resolve('fd12::3', '[2001:db8::2]:4711, fd00::1')).toBe('2001:db8::2');
    expect(c.resolve('fd12::3', '203.0.113.5:8080')).toBe('203.0.113.5');
    expect(c.resolve('fd12::3', '::ffff:203.0.113.6')).toBe('203.0.113.6');
    expect(c.resolve('2001:db8::9', '203.0.113.5')).toBe('2001:db8::9');
  });

  it('formats uWS peer octets: IPv4, IPv4-mapped as dotted, IPv6 in RFC 5952 form', () => {
    expect(formatAddress(new Uint8Array([127, 0, 0, 1]))).toBe('127.0.0.1');
    expect(formatAddress(new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 1, 2, 3]))).toBe('10.1.2.3');
    expect(formatAddress(new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]))).toBe('::1');
    expect(formatAddress(new Uint8Array([0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1]))).toBe('2001:db8::1:0:0:1');
    expect(formatAddress(new Uint8Array([0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))).toBe('2001:db8:1::');
    expect(formatAddress(new Uint8Array(0))).toBe('');
  });

  it('reads a gateway-reported address or refuses it', () => {
    expect(canonicalAddress('10.0.0.5')).toBe('10.0.0.5');
    expect(canonicalAddress('2001:0DB8::0001')).toBe('2001:db8::1');
    for (const bad of ['=1+1', '10.0.0.256', 'fe80::1%eth0', '', 'localhost', '1.2.3']) expect(canonicalAddress(bad), bad).toBeNull();
    expect(guestAddress('2001:DB8::1', '198.51.100.7')).toBe('2001:db8::1');
    expect(guestAddress('', '198.51.100.7')).toBe('198.51.100.7');
    expect(guestAddress(undefined, '198.51.100.7')).toBe('198.51.100.7');
  });

  it('TRUSTED_PROXIES takes IPv4 and IPv6 CIDRs and bare addresses, and names each bad entry', () => {
    expect(loadConfig(env).trustedProxies).toEqual([]);
    expect(loadConfig({ ...env, TRUSTED_PROXIES: ' 10.0.0.0/8 , fd00::/8,192.0.2.1' }).trustedProxies).toEqual([
      { address: '10.0.0.0', prefix: 8, family: 'ipv4' }, { address: 'fd00::', prefix: 8, family: 'ipv6' },
      { address: '192.0.2.1', prefix: 32, family: 'ipv4' },
    ]);
    expect(() => loadConfig({ ...env, TRUSTED_PROXIES: '10.0.0.0/33' })).toThrow(/TRUSTED_PROXIES: "10.0.0.0\/33" is not an IPv4 or IPv6 CIDR/);
    expect(() => loadConfig({ ...env, TRUSTED_PROXIES: 'proxy.local, ::1/129' })).toThrow(/"proxy.local"[\s\S]*"::1\/129"/);
  });
});
