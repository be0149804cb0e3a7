import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, RadiusCrypto, checkFraming, decodePacket, type RadiusPacket } from '../../radius/index.js';
import { accessRequest, accountingRequest, type AccessRequestSpec, type AccountingSpec } from '../radius/helpers.js';
import { call, dashed, keys, macs, newTenant, type Running, startService, until } from '../support/fixture.js';
import { addLoopbackNas, type LoopbackNas } from '../support/loopback-nas.js';

/**
 * Issue 18, Build 5: the NAS's word over the guest's. A voucher's SSID list
 * is enforced on the Called-Station-Id of every Access-Request (RFC 3580
 * §3.20, `AA-BB-CC-DD-EE-FF:SSID`), and the session records the SSID the NAS
 * names; the portal's `ssid` is only a hint (its mismatch still refused).
 */
const rc = new RadiusCrypto();
const AP = 'AA-BB-CC-DD-EE-FF';

describe('a voucher SSID list against the NAS', () => {
  let svc: Running;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let ports: { auth: number; acct: number };
  let nas: LoopbackNas;
  const device = macs();
  const suffix = randomBytes(4).toString('hex').toUpperCase();
  const codes = { vip: `SSID-VIP-${suffix}`, any: `SSID-ANY-${suffix}` };

  beforeAll(async () => {
    svc = await startService({ ACTOR_THREADS: '1', LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    ports = svc.service.radiusPorts;
    t = await newTenant(svc.service, 'SSID Venue');
    for (const body of [{ code: codes.vip, max_uses: null, ssids: ['VIP'] }, { code: codes.any, max_uses: null }]) {
      expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body })).status).toBe(201);
    }
    nas = await addLoopbackNas(svc.base, t, { coa_port: 3799 });
  });
  afterAll(async () => {
    await nas?.radius.close();
    await svc?.stop();
  });

  async function ask(pkt: Buffer, port: number): Promise<Buffer> {
    await nas.radius.send(pkt, port);
    const endsAt = Date.now() + 5000;
    for (;;) {
      const got = await nas.radius.next(Math.max(1, endsAt - Date.now()));
      if (!got) throw new Error('no reply from the engine');
      const len = checkFraming(got.msg);
      if (len > 0 && got.msg[1] === pkt[1] && rc.verifyResponseAuthenticator(got.msg, len, pkt.subarray(4, 20), nas.secret)) return got.msg;
    }
  }
  const authorize = async (mac: string, ssid: string, spec: Partial<AccessRequestSpec> = {}): Promise<RadiusPacket> => {
    const bare = mac.replace(/:/g, '').toLowerCase();
    return decodePacket(await ask(accessRequest({
      secret: nas.secret, id: nas.nextId(), userName: bare, password: bare, callingStationId: dashed(mac), calledStationId: `${AP}:${ssid}`, ...spec,
    }), ports.auth))!;
  };
  const account = (mac: string, ssid: string, spec: Partial<AccountingSpec> = {}) => ask(accountingRequest({
    secret: nas.secret, id: nas.nextId(), status: 1, userName: mac, callingStationId: dashed(mac), calledStationId: `${AP}:${ssid}`,
    acctSessionId: `acct-${randomBytes(4).toString('hex')}`, messageAuthenticator: true, ...spec,
  }), ports.acct);
  const portal = (code: string, mac: string, ssid: string) =>
    call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code, mac, ip: '10.30.0.5', ssid } });
  const liveSsid = async (sid: string): Promise<string | null> => (await call(svc.base, 'GET', `/v1/sessions/${sid}`, { auth: t.apiKey })).body.ssid;

  it('a guest on "Guest" who tells the portal "VIP" gets a session, but the NAS asking from Guest is rejected; from VIP accepted', async () => {
    const mac = device();
    const signed = await portal(codes.vip, mac, 'VIP'); // the guest's word
    expect(signed.status).toBe(200);
    // The NAS's word: Called-Station-Id names the SSID the device is on.
    expect((await authorize(mac, 'Guest')).code).toBe(Code.ACCESS_REJECT);
    const vip = await authorize(mac, 'VIP');
    expect(vip.code).toBe(Code.ACCESS_ACCEPT);
    // Accepted on VIP says nothing of Guest: the repeat from Guest is not answered from the accept mirror.
    expect((await authorize(mac, 'VIP')).code).toBe(Code.ACCESS_ACCEPT);
    expect((await authorize(mac, 'Guest')).code).toBe(Code.ACCESS_REJECT);
    // A NAS that names no SSID is not refused for it: the portal's check stood at sign-in.
    expect((await authorize(mac, '', { calledStationId: AP })).code).toBe(Code.ACCESS_ACCEPT);
  });

  it('the portal mismatch is still refused as before: 403 voucher_ssid_not_allowed', async () => {
    const r = await portal(codes.vip, device(), 'Guest');
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: 'voucher_ssid_not_allowed' });
  });

  it('the session records the SSID the NAS names (Access-Request, then accounting), not the one the portal was told', async () => {
    const mac = device();
    const signed = await portal(codes.any, mac, 'Lobby');
    expect(signed.status).toBe(200);
    const sid: string = signed.body.session_id;
    expect((await authorize(mac, 'Guest')).code).toBe(Code.ACCESS_ACCEPT);
    const grant = keys.grant(t.tenantId, t.hotspotId, mac);
    expect(await svc.service.engine.redis.hget(grant, 'ssid')).toBe('Guest');
    expect(await liveSsid(sid)).toBe('Guest');
    const lss = await svc.service.engine.redis.hgetall(keys.liveBySsid(t.tenantId));
    expect(lss[`${t.hotspotId}|Guest`]).toBe('1');
    expect(lss[`${t.hotspotId}|Lobby`]).toBeUndefined();
    // Accounting from another SSID of the same NAS (the device moved): the session follows.
    await account(mac, 'Hall');
    await until(async () => (await svc.service.engine.redis.hget(grant, 'ssid')) === 'Hall');
    expect(await liveSsid(sid)).toBe('Hall');
  });
});
