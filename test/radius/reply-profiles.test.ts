import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NAS_REPLY_PROFILES, NAS_TYPES, projectPath, type AccessDecision, type NasRecord } from '../../engine/index.js';
import { AccessReplyEncoder, Attr, Code, PacketWriter, RadiusCrypto, RadiusDictionary, decodePacket } from '../../radius/index.js';
import { ACCEPT, accessRequest, nasRecord } from './helpers.js';

/**
 * Issue 24 item 5: the attributes of an Access-Accept follow the NAS's type
 * (engine/hotspots/nas-profiles.ts, data), with the NAS record's own role, filter
 * and VLAN, where they were fixed in code for every NAS alike.
 */
const dict = RadiusDictionary.load();
const encoder = new AccessReplyEncoder(dict);
const writer = new PacketWriter(new RadiusCrypto());

/** The reply's attributes by dictionary name (standard ones by their RFC names), values as numbers or text. */
function replyTo(nas: NasRecord, decision: AccessDecision = ACCEPT): Map<string, (number | string)[]> {
  const req = accessRequest({ secret: nas.secret, userName: 'guest', password: 'CODE' });
  const reply = Buffer.from(encoder.encode(writer, req, req.length, decision, nas));
  const p = decodePacket(reply)!;
  expect(p.code).toBe(decision.accept ? Code.ACCESS_ACCEPT : Code.ACCESS_REJECT);
  const out = new Map<string, (number | string)[]>();
  const put = (name: string, v: number | string) => out.set(name, [...(out.get(name) ?? []), v]);
  const std: Record<number, [string, 'integer' | 'string']> = {
    [Attr.SESSION_TIMEOUT]: ['Session-Timeout', 'integer'], [Attr.IDLE_TIMEOUT]: ['Idle-Timeout', 'integer'],
    [Attr.CLASS]: ['Class', 'string'], [Attr.FILTER_ID]: ['Filter-Id', 'string'], [Attr.REPLY_MESSAGE]: ['Reply-Message', 'string'],
    [Attr.TUNNEL_TYPE]: ['Tunnel-Type', 'integer'], [Attr.TUNNEL_MEDIUM_TYPE]: ['Tunnel-Medium-Type', 'integer'],
    [Attr.TUNNEL_PRIVATE_GROUP_ID]: ['Tunnel-Private-Group-Id', 'string'],
  };
  for (const a of p.attributes) {
    if (a.type === Attr.MESSAGE_AUTHENTICATOR) continue;
    if (a.type === Attr.VENDOR_SPECIFIC) {
      const vendor = a.value.readUInt32BE(0);
      const def = dict.attributeByCode(vendor, a.value[4]!);
      expect(def, `vendor ${vendor} attribute ${a.value[4]}`).toBeDefined();
      const v = a.value.subarray(6, 4 + a.value[5]!);
      put(def!.name, def!.type === 'integer' ? v.readUInt32BE(0) : v.toString('utf8'));
      continue;
    }
    const s = std[a.type];
    expect(s, `attribute ${a.type}`).toBeDefined();
    put(s![0], s![1] === 'integer' ? a.value.readUInt32BE(0) : a.value.toString('utf8'));
  }
  return out;
}

const ours = (f: string): string => readFileSync(projectPath('radius', 'dictionaries', f), 'utf8');
const names = (m: Map<string, unknown>) => [...m.keys()].sort();
const TIMEOUTS = { 'Session-Timeout': [3600], 'Idle-Timeout': [600], Class: ['ses_test0000000001'] };
const QUOTA_LOW = 1234;

describe('Access-Accept attributes by NAS type', () => {
  it('generic (a record with no type, and every record before migration 028): every family at once, as before', () => {
    for (const nas of [nasRecord(), nasRecord({ nasType: 'generic' })]) {
      expect(Object.fromEntries(replyTo(nas))).toEqual({
        ...TIMEOUTS,
        'WISPr-Bandwidth-Max-Down': [10_000_000], 'WISPr-Bandwidth-Max-Up': [2_000_000],
        'ChilliSpot-Bandwidth-Max-Down': [10_000], 'ChilliSpot-Bandwidth-Max-Up': [2_000],
        'Mikrotik-Rate-Limit': ['2000k/10000k'],
        'ChilliSpot-Max-Total-Octets': [QUOTA_LOW], 'ChilliSpot-Max-Total-Gigawords': [5],
        'Mikrotik-Total-Limit': [QUOTA_LOW], 'Mikrotik-Total-Limit-Gigawords': [5],
      });
    }
  });

  it('aruba: WISPr bandwidth, the role as Aruba-User-Role, the VLAN through the RFC 3580 tunnel attributes; no other vendor', () => {
    const nas = nasRecord({ nasType: 'aruba', reply: { role: 'guest-internet', filterId: null, vlan: 42 } });
    expect(Object.fromEntries(replyTo(nas))).toEqual({
      ...TIMEOUTS,
      'WISPr-Bandwidth-Max-Down': [10_000_000], 'WISPr-Bandwidth-Max-Up': [2_000_000],
      'Aruba-User-Role': ['guest-internet'],
      'Tunnel-Type': [13], 'Tunnel-Medium-Type': [6], 'Tunnel-Private-Group-Id': ['42'],
    });
  });

  it('the tunnel attributes are written with tag 0 (RFC 2868 §3.1): Tunnel-Type is 40 06 00 00 00 0d', () => {
    const nas = nasRecord({ nasType: 'unifi', reply: { role: null, filterId: null, vlan: 3001 } });
    const req = accessRequest({ secret: nas.secret, userName: 'guest', password: 'CODE' });
    const reply = Buffer.from(encoder.encode(writer, req, req.length, ACCEPT, nas));
    expect(reply.includes(Buffer.from([64, 6, 0, 0, 0, 13]))).toBe(true);
    expect(reply.includes(Buffer.from([65, 6, 0, 0, 0, 6]))).toBe(true);
    expect(reply.includes(Buffer.from([81, 6, ...Buffer.from('3001')]))).toBe(true);
  });

  it('mikrotik: the rate string, the byte quota and the role as Mikrotik-Group (a hotspot user profile), Filter-Id', () => {
    const nas = nasRecord({ nasType: 'mikrotik', reply: { role: 'guests', filterId: 'guest-filter', vlan: 7 } });
    expect(Object.fromEntries(replyTo(nas))).toEqual({
      ...TIMEOUTS,
      'Mikrotik-Rate-Limit': ['2000k/10000k'], 'Mikrotik-Total-Limit': [QUOTA_LOW], 'Mikrotik-Total-Limit-Gigawords': [5],
      'Mikrotik-Group': ['guests'], 'Filter-Id': ['guest-filter'],
    });
  });

  it('cisco: Airespace bandwidth contracts in kbit/s, the ACL as Filter-Id, the VLAN', () => {
    const nas = nasRecord({ nasType: 'cisco', reply: { role: 'ignored', filterId: 'GUEST-ACL', vlan: 100 } });
    expect(Object.fromEntries(replyTo(nas))).toEqual({
      ...TIMEOUTS,
      'Airespace-Data-Bandwidth-Average-Contract': [10_000], 'Airespace-Data-Bandwidth-Average-Contract-Upstream': [2_000],
      'Filter-Id': ['GUEST-ACL'], 'Tunnel-Type': [13], 'Tunnel-Medium-Type': [6], 'Tunnel-Private-Group-Id': ['100'],
    });
  });

  it('coovachilli and ruckus send only their own families', () => {
    expect(names(replyTo(nasRecord({ nasType: 'coovachilli' })))).toEqual([
      'ChilliSpot-Bandwidth-Max-Down', 'ChilliSpot-Bandwidth-Max-Up', 'ChilliSpot-Max-Total-Gigawords', 'ChilliSpot-Max-Total-Octets', 'Class', 'Idle-Timeout', 'Session-Timeout',
    ]);
    expect(names(replyTo(nasRecord({ nasType: 'ruckus', reply: { role: 'vip', filterId: null, vlan: null } })))).toEqual([
      'Class', 'Idle-Timeout', 'Ruckus-User-Groups', 'Session-Timeout', 'WISPr-Bandwidth-Max-Down', 'WISPr-Bandwidth-Max-Up',
    ]);
  });

  it('absent values stay out: no idle time-out, no limits, no quota, no role, filter or VLAN; Session-Timeout always, at least 1 s', () => {
    const bare: AccessDecision = { accept: true, sessionId: 'ses_x', sessionTimeout: 0, idleTimeout: 0, downKbps: 0, upKbps: 0, quotaBytes: null };
    for (const type of NAS_TYPES) {
      expect(Object.fromEntries(replyTo(nasRecord({ nasType: type }), bare)), type).toEqual({ 'Session-Timeout': [1], Class: ['ses_x'] });
    }
    // An exhausted quota is 1 octet, never 0 (0 is "no limit" to CoovaChilli and RouterOS).
    expect(replyTo(nasRecord({ nasType: 'coovachilli' }), { ...bare, quotaBytes: 0 }).get('ChilliSpot-Max-Total-Octets')).toEqual([1]);
  });

  it('an unknown type (a row written by a newer release) falls back to generic; a reject is the same for every type', () => {
    expect(names(replyTo(nasRecord({ nasType: 'from-the-future' })))).toEqual(names(replyTo(nasRecord())));
    for (const type of NAS_TYPES) {
      expect(Object.fromEntries(replyTo(nasRecord({ nasType: type }), { accept: false, reason: 'Voucher used up' }))).toEqual({ 'Reply-Message': ['Voucher used up'] });
    }
  });

  it('every profile is compiled at start against the dictionaries: a missing or mistyped attribute stops it', () => {
    expect(Object.keys(NAS_REPLY_PROFILES).sort()).toEqual([...NAS_TYPES].sort());
    const noAruba = RadiusDictionary.parse(
      ['wispr', 'chillispot', 'mikrotik', 'airespace', 'ruckus'].map((v) => `$INCLUDE dictionary.${v}`).join('\n'),
      'dictionary', ours,
    );
    expect(() => new AccessReplyEncoder(noAruba)).toThrow(/Aruba-User-Role/);
    const mistyped = RadiusDictionary.parse(
      ['wispr', 'chillispot', 'mikrotik', 'airespace', 'aruba', 'ruckus'].map((v) => `$INCLUDE dictionary.${v}`).join('\n')
        .replace('$INCLUDE dictionary.aruba', 'VENDOR Aruba 14823\nBEGIN-VENDOR Aruba\nATTRIBUTE Aruba-User-Role 1 integer\nEND-VENDOR Aruba'),
      'dictionary', ours,
    );
    expect(() => new AccessReplyEncoder(mistyped)).toThrow(/reply profile aruba, Aruba-User-Role: the dictionary says integer, which cannot carry role/);
  });
});
