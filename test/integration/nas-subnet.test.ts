import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attr, Code, RadiusCrypto, RadiusDictionary, checkFraming, decodePacket, vendorAttributeValues } from '../../radius/index.js';
import { TestNas, accessRequest } from '../radius/helpers.js';
import { call, dashed, macs, newTenant, type Running, startService, until } from '../support/fixture.js';

/**
 * Issue 24 item 5: a NAS known by its subnet (access points that each send
 * from their own address), besides by address and NAS-Identifier. The most
 * specific match wins; an address belongs to one tenant, so a subnet may not
 * overlap another tenant's address or subnet. And the reply follows the NAS
 * record's type and its own role and VLAN (migration 028).
 */
const rc = new RadiusCrypto();
const dict = RadiusDictionary.load();

describe('NAS clients by subnet', () => {
  let svc: Running;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let other: Awaited<ReturnType<typeof newTenant>>;
  let lobby = '';
  let net = '';
  let subnetNasId = '';
  const secrets = { venue: `venue-${randomBytes(8).toString('hex')}`, lobby: `lobby-${randomBytes(8).toString('hex')}`, inner: `inner-${randomBytes(8).toString('hex')}` };
  const code = `SUBNET-${randomBytes(4).toString('hex').toUpperCase()}`;
  const device = macs();
  const nases: TestNas[] = [];
  let ident = randomInt(0, 256);

  const addNas = (tenant: { apiKey: string }, hotspotId: string, body: Record<string, unknown>) =>
    call(svc.base, 'POST', `/v1/hotspots/${hotspotId}/nas-clients`, { auth: tenant.apiKey, body: { secret: 'a-secret-of-eight', ...body } });

  /** Signs `mac` in with the voucher from `ip`; the reply, verified with `secret`, or null. */
  const signIn = async (ip: string, secret: string, mac: string): Promise<Buffer | null> => {
    const nas = await TestNas.open(ip);
    nases.push(nas);
    const pkt = accessRequest({ secret, id: (ident = (ident + 1) & 255), userName: code, password: code, callingStationId: dashed(mac) });
    await nas.send(pkt, svc.service.radiusPorts.auth);
    const got = await nas.next(3000);
    if (!got) return null;
    const len = checkFraming(got.msg);
    expect(len > 0 && rc.verifyResponseAuthenticator(got.msg, len, pkt.subarray(4, 20), secret)).toBe(true);
    return got.msg;
  };
  const hotspotOf = async (mac: string): Promise<string | undefined> => {
    const r = await call(svc.base, 'GET', '/v1/sessions?status=active&limit=100', { auth: t.apiKey });
    return (r.body.data as { mac: string; hotspot_id: string }[]).find((s) => s.mac === mac)?.hotspot_id;
  };

  beforeAll(async () => {
    svc = await startService({ ACTOR_THREADS: '1', LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    t = await newTenant(svc.service, 'Campus');
    other = await newTenant(svc.service, 'Next Door');
    const h = await call(svc.base, 'POST', '/v1/hotspots', { auth: t.apiKey, body: { name: 'Lobby', timezone: 'Europe/Istanbul' } });
    lobby = h.body.id as string;
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null, bandwidth_down_mbps: 10, bandwidth_up_mbps: 2 } })).status).toBe(201);
    // A loopback /24 no other test file holds.
    for (let attempt = 0; attempt < 8 && !net; attempt++) {
      net = `127.${randomInt(16, 250)}.${randomInt(0, 256)}`;
      const r = await addNas(t, t.hotspotId, { ip: `${net}.0/24`, secret: secrets.venue, nas_type: 'aruba', reply_role: 'guest-web', reply_vlan: 42 });
      if (r.status === 409) { net = ''; continue; }
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ ip: `${net}.0/24`, nas_type: 'aruba', reply_role: 'guest-web', reply_filter_id: null, reply_vlan: 42, hotspot_id: t.hotspotId });
      expect(r.body.secret).toBeUndefined();
      subnetNasId = r.body.id as string;
    }
    expect(net, 'a free loopback /24').not.toBe('');
  });
  afterAll(async () => {
    for (const n of nases) await n.close();
    await svc?.stop();
  });

  it('an address of the subnet is served as that NAS: its secret, its hotspot, its type, role and VLAN', async () => {
    const mac = device();
    const reply = await signIn(`${net}.7`, secrets.venue, mac);
    expect(reply?.[0]).toBe(Code.ACCESS_ACCEPT);
    const p = decodePacket(reply!)!;
    expect(vendorAttributeValues(p, dict.vendorId('Aruba'), dict.attribute('Aruba-User-Role').code).map(String)).toEqual(['guest-web']);
    expect(p.attributes.find((a) => a.type === Attr.TUNNEL_PRIVATE_GROUP_ID)?.value.toString()).toBe('42');
    expect(p.attributes.find((a) => a.type === Attr.TUNNEL_TYPE)?.value.readUInt32BE(0)).toBe(13);
    // Aruba's family (WISPr in bit/s), not ChilliSpot's.
    expect(vendorAttributeValues(p, dict.vendorId('WISPr'), dict.attribute('WISPr-Bandwidth-Max-Down').code).map((v) => v.readUInt32BE(0))).toEqual([10_000_000]);
    expect(vendorAttributeValues(p, dict.vendorId('ChilliSpot'), dict.attribute('ChilliSpot-Bandwidth-Max-Down').code)).toEqual([]);
    await until(async () => (await hotspotOf(mac)) !== undefined);
    expect(await hotspotOf(mac)).toBe(t.hotspotId);
    // Each address is a NAS of its own (its sessions, its Accounting-On, its CoA), within the subnet only.
    expect(svc.service.engine.nas.get(`${subnetNasId}@${net}.7`)).toMatchObject({ ip: `${net}.7`, hotspotId: t.hotspotId, nasType: 'aruba' });
    expect(svc.service.engine.nas.get(`${subnetNasId}@127.0.0.1`)).toBeNull();
  });

  it('the most specific match wins: an exact address, then a narrower subnet, then the wider one', async () => {
    expect((await addNas(t, lobby, { ip: `${net}.9`, secret: secrets.lobby })).status).toBe(201);
    expect((await addNas(t, lobby, { ip: `${net}.16/28`, secret: secrets.inner, nas_type: 'coovachilli' })).status).toBe(201);
    await svc.service.engine.nas.refresh();
    const [exact, inner, wide] = [device(), device(), device()];
    expect((await signIn(`${net}.9`, secrets.lobby, exact))?.[0]).toBe(Code.ACCESS_ACCEPT);
    const innerReply = await signIn(`${net}.20`, secrets.inner, inner);
    expect(innerReply?.[0]).toBe(Code.ACCESS_ACCEPT);
    const ip = decodePacket(innerReply!)!;
    expect(vendorAttributeValues(ip, dict.vendorId('ChilliSpot'), dict.attribute('ChilliSpot-Bandwidth-Max-Down').code).map((v) => v.readUInt32BE(0))).toEqual([10_000]);
    expect(vendorAttributeValues(ip, dict.vendorId('Aruba'), dict.attribute('Aruba-User-Role').code)).toEqual([]);
    expect((await signIn(`${net}.40`, secrets.venue, wide))?.[0]).toBe(Code.ACCESS_ACCEPT);
    await until(async () => (await hotspotOf(exact)) !== undefined && (await hotspotOf(inner)) !== undefined && (await hotspotOf(wide)) !== undefined);
    expect([await hotspotOf(exact), await hotspotOf(inner), await hotspotOf(wide)]).toEqual([lobby, lobby, t.hotspotId]);
    // The wider subnet's secret does not open an address a narrower client holds.
    expect(await signIn(`${net}.21`, secrets.venue, device())).toBeNull();
  });

  it("another tenant cannot take an address or subnet overlapping the tenant's: 409 nas_subnet_overlap", async () => {
    for (const ip of [`${net}.77`, `${net}.128/25`, `${net.split('.').slice(0, 2).join('.')}.0.0/16`]) {
      const r = await addNas(other, other.hotspotId, { ip });
      expect([ip, r.status, r.body.error]).toEqual([ip, 409, 'nas_subnet_overlap']);
    }
    const mine = await call(svc.base, 'GET', `/v1/hotspots/${other.hotspotId}/nas-clients`, { auth: other.apiKey });
    expect(mine.body.data).toEqual([]);
  });

  it('a subnet is written with its network address and is /16 at the widest; the type is one of the known ones', async () => {
    const bad = async (body: Record<string, unknown>): Promise<string> => {
      const r = await addNas(t, t.hotspotId, body);
      expect(r.status).toBe(400);
      return r.body.message as string;
    };
    expect(await bad({ ip: `${net}.5/24` })).toMatch(/host bits set/);
    expect(await bad({ ip: '10.0.0.0/8' })).toMatch(/\/16 at the widest/);
    expect(await bad({ ip: 'fd00::/32' })).toMatch(/\/48 at the widest/);
    expect(await bad({ ip: `${net}.0/24`, nas_type: 'juniper' })).toBeTruthy();
    expect(await bad({ ip: `${net}.0/24`, reply_vlan: 4095 })).toBeTruthy();
  });

  it('two tenants racing for overlapping ranges: exactly one wins', async () => {
    for (let round = 0; round < 4; round++) {
      const block = `127.${randomInt(16, 250)}.${randomInt(0, 256)}`;
      const [a, b] = await Promise.all([
        addNas(t, t.hotspotId, { ip: `${block}.0/24` }),
        addNas(other, other.hotspotId, { ip: `${block}.${randomInt(1, 255)}` }),
      ]);
      if (a.status === 409 && b.status === 409) continue; // a block some other test file holds
      expect([a.status, b.status].sort()).toEqual([201, 409]);
    }
  });
});
