import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/config.js';
import { AppError } from '../../engine/errors.js';
import { classifyAddress, OutboundPolicy, TargetNotAllowedError, urlHost, type AddressClass, type Resolver } from '../../engine/net/outbound-target.js';

/**
 * The outbound-target policy, address by address: which addresses a tenant's
 * URL may lead the service to, with ALLOW_PRIVATE_TARGETS off and on. Before
 * this module a regex (`^https?://[^\s/]+`) was the only check, so every
 * refused row here was reachable.
 */

// [address, class, allowed when ALLOW_PRIVATE_TARGETS=false, allowed when true]
const TABLE: [string, AddressClass, boolean, boolean][] = [
  // IPv4 public
  ['8.8.8.8', 'public', true, true],
  ['1.1.1.1', 'public', true, true],
  ['93.184.216.34', 'public', true, true],
  ['185.60.216.35', 'public', true, true],
  ['172.32.0.1', 'public', true, true], // just above 172.16/12
  ['100.128.0.1', 'public', true, true], // just above 100.64/10
  ['11.0.0.1', 'public', true, true],
  // IPv4 private, loopback, link-local, CGNAT
  ['127.0.0.1', 'private', false, true],
  ['127.255.255.254', 'private', false, true],
  ['10.0.0.1', 'private', false, true],
  ['172.16.5.4', 'private', false, true],
  ['172.31.255.255', 'private', false, true],
  ['192.168.1.1', 'private', false, true],
  ['169.254.1.1', 'private', false, true],
  ['100.64.0.1', 'private', false, true],
  ['100.127.255.254', 'private', false, true],
  // IPv4 metadata: never
  ['169.254.169.254', 'metadata', false, false],
  ['169.254.170.2', 'metadata', false, false],
  ['100.100.100.200', 'metadata', false, false],
  ['168.63.129.16', 'metadata', false, false],
  // IPv4 reserved, multicast, unspecified, broadcast, documentation, benchmarking
  ['0.0.0.0', 'reserved', false, false],
  ['0.1.2.3', 'reserved', false, false],
  ['192.0.0.8', 'reserved', false, false],
  ['192.0.2.10', 'reserved', false, false],
  ['198.18.0.1', 'reserved', false, false],
  ['198.19.255.1', 'reserved', false, false],
  ['198.51.100.7', 'reserved', false, false],
  ['203.0.113.9', 'reserved', false, false],
  ['224.0.0.1', 'reserved', false, false],
  ['239.255.255.250', 'reserved', false, false],
  ['240.0.0.1', 'reserved', false, false],
  ['255.255.255.255', 'reserved', false, false],
  // IPv6 public
  ['2606:4700:4700::1111', 'public', true, true],
  ['2001:4860:4860::8888', 'public', true, true],
  ['2a00:1450:4001:82b::200e', 'public', true, true],
  // IPv6 private: loopback, ULA, link-local
  ['::1', 'private', false, true],
  ['fc00::1', 'private', false, true],
  ['fd12:3456:789a::1', 'private', false, true],
  ['fe80::1', 'private', false, true],
  ['febf::1', 'private', false, true],
  // IPv6 metadata (inside ULA, still never), also written the long way
  ['fd00:ec2::254', 'metadata', false, false],
  ['fd00:ec2:0:0:0:0:0:254', 'metadata', false, false],
  // IPv6 reserved: unspecified, multicast, NAT64, 6to4, Teredo, documentation, site-local, IPv4-compatible, discard
  ['::', 'reserved', false, false],
  ['ff02::1', 'reserved', false, false],
  ['ff05::2', 'reserved', false, false],
  ['64:ff9b::7f00:1', 'reserved', false, false],
  ['64:ff9b::808:808', 'reserved', false, false],
  ['64:ff9b:1::1', 'reserved', false, false],
  ['2002:7f00:1::1', 'reserved', false, false],
  ['2002:808:808::1', 'reserved', false, false],
  ['2001::1', 'reserved', false, false],
  ['2001:0:4136:e378::1', 'reserved', false, false],
  ['2001:db8::1', 'reserved', false, false],
  ['fec0::1', 'reserved', false, false],
  ['::127.0.0.1', 'reserved', false, false],
  ['100::1', 'reserved', false, false],
  // IPv4-mapped: judged by the IPv4 address inside
  ['::ffff:127.0.0.1', 'private', false, true],
  ['::ffff:7f00:1', 'private', false, true],
  ['::ffff:10.1.2.3', 'private', false, true],
  ['::ffff:169.254.169.254', 'metadata', false, false],
  ['::ffff:a9fe:a9fe', 'metadata', false, false],
  ['::ffff:8.8.8.8', 'public', true, true],
  ['::ffff:0.0.0.0', 'reserved', false, false],
  // Not an address at all
  ['not-an-ip', 'reserved', false, false],
  ['0x7f.1', 'reserved', false, false],
];

const strict = new OutboundPolicy({ allowPrivate: false });
const open = new OutboundPolicy({ allowPrivate: true });

describe('outbound target policy: the address table', () => {
  it('has at least 40 rows, IPv4 and IPv6, each class', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(40);
    expect(new Set(TABLE.map(([, c]) => c))).toEqual(new Set(['public', 'private', 'reserved', 'metadata']));
  });

  it.each(TABLE)('%s is %s (allowed: strict %s, ALLOW_PRIVATE_TARGETS %s)', (address, cls, strictOk, openOk) => {
    expect(classifyAddress(address)).toBe(cls);
    expect(strict.refusal(address) === null).toBe(strictOk);
    expect(open.refusal(address) === null).toBe(openOk);
  });
});

describe('outbound target policy: URLs and names', () => {
  // Numeric tricks: WHATWG URL turns them into the dotted quad before anything connects.
  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['http://[::1]:8080/x', '::1'],
    ['smtp://2130706433:25', '127.0.0.1'],
    ['smtps://user:pw@0x7f.0.0.1:465', '127.0.0.1'],
    ['smtp://Mail.Example.COM', 'mail.example.com'],
  ])('%s connects to host %s', (url, host) => {
    expect(urlHost(url)).toBe(host);
  });

  const resolver = (table: Record<string, string[]>): Resolver => async (host) => {
    const a = table[host];
    if (!a) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return a.map((address) => ({ address, family: address.includes(':') ? 6 as const : 4 as const }));
  };
  const names = resolver({
    'carrier.example': ['93.184.216.34', '2606:2800:220:1::1'],
    'mixed.example': ['93.184.216.34', '10.0.0.7'],
    'meta.example': ['169.254.169.254'],
    'lan.example': ['192.168.10.5'],
  });

  it('checks every address a name resolves to at save: one private answer among public ones refuses the URL', async () => {
    const p = new OutboundPolicy({ allowPrivate: false, resolve: names });
    await expect(p.checkUrl('sms.base_url', 'https://carrier.example/api', ['https:', 'http:'])).resolves.toBeUndefined();
    for (const url of ['https://mixed.example/', 'https://lan.example/', 'https://meta.example/', 'http://2130706433/', 'http://0x7f.1/',
      'https://[::1]/', 'https://nowhere.example/', 'http://metadata.google.internal/computeMetadata/v1/']) {
      const err = await p.checkUrl('sms.base_url', url, ['https:', 'http:']).catch((e: unknown) => e);
      expect(err, url).toBeInstanceOf(AppError);
      expect((err as AppError).toBody(), url).toMatchObject({ error: 'target_not_allowed' });
      expect((err as AppError).status).toBe(400);
    }
  });

  it('refuses a scheme it was not asked for, and the message never says what a name resolved to', async () => {
    const p = new OutboundPolicy({ allowPrivate: false, resolve: names });
    const wrong = await p.checkUrl('sms.base_url', 'ftp://carrier.example/', ['https:', 'http:']).catch((e: AppError) => e);
    expect(wrong).toMatchObject({ code: 'target_not_allowed', status: 400 });
    const lan = await p.checkUrl('sms.base_url', 'https://lan.example/', ['https:']).catch((e: AppError) => e);
    const missing = await p.checkUrl('sms.base_url', 'https://nowhere.example/', ['https:']).catch((e: AppError) => e);
    expect((lan as AppError).message).toBe((missing as AppError).message);
    expect((lan as AppError).message).not.toContain('192.168');
  });

  it('with ALLOW_PRIVATE_TARGETS private names pass, metadata names and addresses still do not', async () => {
    const p = new OutboundPolicy({ allowPrivate: true, resolve: names });
    expect(await p.resolve('lan.example')).toEqual([{ address: '192.168.10.5', family: 4 }]);
    expect(await p.resolve('127.0.0.1')).toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(p.resolve('meta.example')).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(p.resolve('169.254.169.254')).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(p.resolve('metadata.google.internal')).rejects.toBeInstanceOf(TargetNotAllowedError);
    await expect(p.checkUrl('x', 'http://169.254.169.254/latest/meta-data/', ['http:'])).rejects.toMatchObject({ code: 'target_not_allowed' });
  });

  it('the lookup handed to net.connect answers only checked addresses, in the form node asks for', async () => {
    const p = new OutboundPolicy({ allowPrivate: false, resolve: names });
    const ask = (host: string, all: boolean): Promise<unknown> => new Promise((resolve, reject) => {
      p.lookup(host, { all, family: 0 } as never, ((err: Error | null, a: unknown, f?: number) => (err ? reject(err) : resolve(all ? a : [a, f]))) as never);
    });
    expect(await ask('carrier.example', true)).toEqual([{ address: '93.184.216.34', family: 4 }, { address: '2606:2800:220:1::1', family: 6 }]);
    expect(await ask('carrier.example', false)).toEqual(['93.184.216.34', 4]);
    await expect(ask('mixed.example', true)).rejects.toMatchObject({ name: 'TargetNotAllowedError', code: 'ETARGETNOTALLOWED' });
  });
});

describe('ALLOW_PRIVATE_TARGETS', () => {
  const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32) };
  it('is off unless set, true/false or 1/0, anything else a start-up error naming it', () => {
    expect(loadConfig(env).allowPrivateTargets).toBe(false);
    expect(loadConfig({ ...env, ALLOW_PRIVATE_TARGETS: 'true' }).allowPrivateTargets).toBe(true);
    expect(loadConfig({ ...env, ALLOW_PRIVATE_TARGETS: '0' }).allowPrivateTargets).toBe(false);
    expect(() => loadConfig({ ...env, ALLOW_PRIVATE_TARGETS: 'yes please' })).toThrow(/ALLOW_PRIVATE_TARGETS=.* must be true or false/);
  });
});
