import { randomBytes, randomInt } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  AcctStatusType, Attr, Code, ErrorCause, RadiusCrypto, RadiusDictionary, TERMINATE_CAUSES, VendorAttr,
  attributeValue, decodePacket, findAttribute, vendorAttributeValues, type RadiusPacket,
} from '../../radius/index.js';
import { localDay, threadIndex } from '../../engine/index.js';
import { type DaRequest } from '../radius/dynamic-auth-listener.js';
import { TestNas, accessRequest, accountingRequest, sleep, type AccessRequestSpec, type AccountingSpec } from '../radius/helpers.js';
import { call, dashed, keys, macs, newTenant, type Running, startService, until, clearOfMidnight } from '../support/fixture.js';
import { addCoaNas, type CoaNas, signedReplyTo, strangerLoopback } from '../support/loopback-nas.js';

/**
 * The session engine driven by real RADIUS datagrams: a test NAS on its own
 * loopback address sends Access-Requests and Accounting-Requests to the
 * service's UDP ports and answers the Disconnect-/CoA-Requests the engine
 * sends to its coa_port, against the real Redis and Postgres.
 *
 * Every test NAS has its own random 127.0.0.0/8 address: a NAS is known by
 * its source address, NAS addresses are unique across the service, and other
 * test files register theirs in the same Postgres at the same time.
 */

const rc = new RadiusCrypto();
const dict = RadiusDictionary.load();
const MIB = 1_048_576;
const TWO_32 = 2 ** 32;
/** How long "no reply" is waited for: far above a loopback round trip through the engine. */
const SILENCE_MS = 500;

/** A test NAS: its RADIUS client socket and its Dynamic Authorization listener, both on its own address. */
type Nas = CoaNas;

/** A device no other test of this file has used. */
const randomMac = macs();

const u32 = (p: RadiusPacket, type: number) => attributeValue(p, type)?.readUInt32BE(0);
const text = (p: RadiusPacket, type: number) => attributeValue(p, type)?.toString();
const vsa = (p: RadiusPacket, name: string): Buffer[] => {
  const a = dict.attribute(name);
  return vendorAttributeValues(p, a.vendorId, a.code);
};
const vsaU32 = (p: RadiusPacket, name: string) => vsa(p, name).map((b) => b.readUInt32BE(0));

describe('RADIUS over UDP against the real engine', () => {
  let svc: Running;
  let db: pg.Client;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let ports: { auth: number; acct: number };
  /** Requires Message-Authenticator (the default); the hotspot's first NAS. */
  let nasA: Nas;
  /** Same hotspot, require_message_authenticator false. */
  let nasB: Nas;
  const opened: { close(): Promise<void> }[] = [];
  const suffix = randomBytes(4).toString('hex').toUpperCase();
  const codes = { mac: `RAD-MAC-${suffix}`, quota: `RAD-QUOTA-${suffix}`, squota: `RAD-SQUOTA-${suffix}`, pap: `RAD-PAP-${suffix}`, short: `RAD-SHORT-${suffix}` };

  async function registerNas(requireMessageAuthenticator: boolean): Promise<Nas> {
    const nas = await addCoaNas(svc.base, t, { require_message_authenticator: requireMessageAuthenticator });
    opened.push(nas.radius, nas.da);
    return nas;
  }

  const access = (nas: Nas, spec: Partial<AccessRequestSpec> = {}) => accessRequest({ secret: nas.secret, id: nas.nextId(), ...spec });
  const accounting = (nas: Nas, spec: Partial<AccountingSpec> = {}) => accountingRequest({ secret: nas.secret, id: nas.nextId(), ...spec });

  /**
   * Sends `pkt` from the NAS and returns the reply to it: same Identifier and
   * a Response Authenticator computed over this request's authenticator with
   * the NAS's secret. Other datagrams are skipped. null when none comes in `ms`.
   */
  async function ask(nas: Nas, pkt: Buffer, port: number, ms = 3000): Promise<Buffer | null> {
    await nas.radius.send(pkt, port);
    return signedReplyTo(nas, pkt, ms);
  }

  /** An Access-Request's reply, checked as every reply must be: signed, Message-Authenticator first and valid. */
  async function authorize(nas: Nas, spec: Partial<AccessRequestSpec>): Promise<RadiusPacket> {
    const req = access(nas, spec);
    const reply = await ask(nas, req, ports.auth);
    expect(reply, 'an Access-Request must be answered').not.toBeNull();
    expect([Code.ACCESS_ACCEPT, Code.ACCESS_REJECT]).toContain(reply![0]);
    expect(reply![20]).toBe(Attr.MESSAGE_AUTHENTICATOR); // first attribute (Blast-RADIUS, CVE-2024-3596)
    expect(rc.verifyMessageAuthenticator(reply!, reply!.length, 20, nas.secret, req.subarray(4, 20))).toBe(true);
    return decodePacket(reply!)!;
  }

  /** Sends an Accounting-Request and insists on its Accounting-Response. */
  async function account(nas: Nas, spec: Partial<AccountingSpec>): Promise<Buffer> {
    const req = accounting(nas, spec);
    const reply = await ask(nas, req, ports.acct);
    expect(reply, 'every Accounting-Request must get its Accounting-Response').not.toBeNull();
    expect(reply![0]).toBe(Code.ACCOUNTING_RESPONSE);
    return req;
  }

  async function signIn(code: string, mac: string): Promise<{ session_id: string; expires_at: string }> {
    const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code, mac, ip: '10.20.0.5', ssid: 'Guest' } });
    expect(r.status).toBe(200);
    return r.body;
  }

  const session = async (sid: string) => {
    const r = await call(svc.base, 'GET', `/v1/sessions/${sid}`, { auth: t.apiKey });
    expect(r.status).toBe(200);
    return r.body;
  };

  /** Waits for the session's end in Postgres with this reason, and returns its row. */
  async function endedInPostgres(sid: string, reason: string): Promise<{ status: string; end_reason: string; bytes_in: string; bytes_out: string }> {
    const row = async () => (await db.query('SELECT status, end_reason, bytes_in, bytes_out FROM sessions WHERE id = $1', [sid])).rows[0];
    try {
      await until(async () => (await row())?.end_reason === reason);
    } catch {
      expect.fail(`session ${sid} did not end with ${reason}: ${JSON.stringify(await row())}, live: ${JSON.stringify((await call(svc.base, 'GET', `/v1/sessions/${sid}`, { auth: t.apiKey })).body)}`);
    }
    return row();
  }

  /** The session's end audit record (exactly one), once the sink has written it. */
  async function endRecord(sid: string): Promise<{ reason: string; bytes_in: number; bytes_out: number }> {
    const q = () => db.query("SELECT details FROM audit_records WHERE tenant_id = $1 AND session_id = $2 AND event_type = 'session_end'", [t.tenantId, sid]);
    await until(async () => (await q()).rows.length > 0);
    const { rows } = await q();
    expect(rows).toHaveLength(1);
    return rows[0].details;
  }

  const coaResults = async (outcome: string): Promise<number> => {
    const m = new RegExp(`^guestwifi_radius_coa_results_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(await svc.service.engine.metrics.render());
    return m ? Number(m[1]) : 0;
  };
  const serverStats = () => svc.service.radius!.stats();

  beforeAll(async () => {
    svc = await startService({ ACTOR_THREADS: '2', LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    ports = svc.service.radiusPorts;
    expect(ports.auth).toBeGreaterThan(0);
    expect(ports.acct).toBeGreaterThan(0);
    t = await newTenant(svc.service, 'Radius Venue');
    db = new pg.Client(inject('databaseUrl'));
    await db.connect();
    for (const body of [
      { code: codes.mac, max_uses: null, duration_minutes: 120, bandwidth_down_mbps: 10, bandwidth_up_mbps: 2 },
      { code: codes.quota, max_uses: null, duration_minutes: 60, daily_quota_mb: 1 },
      { code: codes.squota, max_uses: null, duration_minutes: 60, session_quota_mb: 1 },
      { code: codes.pap, max_uses: 1, duration_minutes: 30, bandwidth_down_mbps: 5, bandwidth_up_mbps: 1 },
      { code: codes.short, max_uses: null, duration_minutes: 10, bandwidth_down_mbps: 1, bandwidth_up_mbps: 1 },
    ]) {
      const v = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body });
      expect(v.status).toBe(201);
    }
    nasA = await registerNas(true);
    nasB = await registerNas(false);
  });
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await db?.end();
    await svc?.stop();
  });

  describe('Access-Request: MAC authorisation', () => {
    it('accepts a MAC with a live portal session: Message-Authenticator first, remaining Session-Timeout, Idle-Timeout, bandwidth for every vendor', async () => {
      const mac = randomMac();
      const s = await signIn(codes.mac, mac);
      // A MAC-authentication NAS: User-Name and password are the MAC, Calling-Station-Id too.
      const bare = mac.replace(/:/g, '').toLowerCase();
      const p = await authorize(nasA, { userName: bare, password: bare, callingStationId: dashed(mac), calledStationId: '00-11-22-33-44-55:Guest', framedIp: '10.20.0.5' });
      expect(p.code).toBe(Code.ACCESS_ACCEPT);
      expect(p.attributes[0]!.type).toBe(Attr.MESSAGE_AUTHENTICATOR);
      const timeout = u32(p, Attr.SESSION_TIMEOUT)!;
      const remaining = (Date.parse(s.expires_at) - Date.now()) / 1000;
      expect(timeout).toBeLessThanOrEqual(120 * 60);
      expect(timeout).toBeGreaterThan(120 * 60 - 15);
      expect(Math.abs(timeout - remaining)).toBeLessThan(3);
      expect(u32(p, Attr.IDLE_TIMEOUT)).toBe(900); // DEFAULT_IDLE_TIMEOUT_SEC
      expect(text(p, Attr.CLASS)).toBe(s.session_id);
      expect(vsaU32(p, VendorAttr.WISPR_BANDWIDTH_MAX_DOWN)).toEqual([10_000_000]); // bit/s
      expect(vsaU32(p, VendorAttr.WISPR_BANDWIDTH_MAX_UP)).toEqual([2_000_000]);
      expect(vsaU32(p, VendorAttr.CHILLISPOT_BANDWIDTH_MAX_DOWN)).toEqual([10_000]); // kbit/s
      expect(vsaU32(p, VendorAttr.CHILLISPOT_BANDWIDTH_MAX_UP)).toEqual([2_000]);
      expect(vsa(p, VendorAttr.MIKROTIK_RATE_LIMIT).map(String)).toEqual(['2000k/10000k']);
      // No daily quota on this voucher: no quota attributes.
      expect(vsa(p, VendorAttr.CHILLISPOT_MAX_TOTAL_OCTETS)).toEqual([]);
      expect(vsa(p, VendorAttr.MIKROTIK_TOTAL_LIMIT)).toEqual([]);

      // The MAC in User-Name alone is enough.
      const byUserName = await authorize(nasA, { userName: mac });
      expect(byUserName.code).toBe(Code.ACCESS_ACCEPT);
      expect(text(byUserName, Attr.CLASS)).toBe(s.session_id);
    });

    it('sends the data left of a daily quota (ChilliSpot and MikroTik), and it shrinks with accounting', async () => {
      const mac = randomMac();
      await signIn(codes.quota, mac);
      const first = await authorize(nasA, { callingStationId: dashed(mac), userName: 'guest' });
      expect(first.code).toBe(Code.ACCESS_ACCEPT);
      expect(vsaU32(first, VendorAttr.CHILLISPOT_MAX_TOTAL_OCTETS)).toEqual([MIB]);
      expect(vsaU32(first, VendorAttr.MIKROTIK_TOTAL_LIMIT)).toEqual([MIB]);
      expect(vsa(first, VendorAttr.CHILLISPOT_MAX_TOTAL_GIGAWORDS)).toEqual([]);
      expect(u32(first, Attr.SESSION_TIMEOUT)).toBeGreaterThan(60 * 60 - 15);

      await account(nasA, { status: AcctStatusType.START, callingStationId: dashed(mac), acctSessionId: `q-${mac}` });
      await account(nasA, { status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac), acctSessionId: `q-${mac}`, inputOctets: 100_000, outputOctets: 200_000, sessionTime: 30 });
      const later = await authorize(nasA, { callingStationId: dashed(mac) });
      expect(later.code).toBe(Code.ACCESS_ACCEPT);
      expect(vsaU32(later, VendorAttr.CHILLISPOT_MAX_TOTAL_OCTETS)).toEqual([MIB - 300_000]);
      expect(vsaU32(later, VendorAttr.MIKROTIK_TOTAL_LIMIT)).toEqual([MIB - 300_000]);
    });

    it("answers a device's next Access-Requests on the main thread from its actor's accept, and never once that answer changed", async () => {
      const pool = svc.service.engine.actors!;
      const mac = randomMac();
      const s = await signIn(codes.mac, mac);
      const ask = async (nas: Nas) => {
        const before = pool.mirrorHits;
        const p = await authorize(nas, { callingStationId: dashed(mac), userName: 'guest' });
        return { p, mirrored: pool.mirrorHits - before };
      };
      // The first goes to the actor, which publishes its accept; the next is answered from that.
      const first = await ask(nasA);
      expect(first).toMatchObject({ mirrored: 0 });
      expect(first.p.code).toBe(Code.ACCESS_ACCEPT);
      const second = await ask(nasA);
      expect(second.mirrored).toBe(1);
      expect(second.p.code).toBe(Code.ACCESS_ACCEPT);
      expect(text(second.p, Attr.CLASS)).toBe(s.session_id);
      expect(Math.abs(u32(second.p, Attr.SESSION_TIMEOUT)! - u32(first.p, Attr.SESSION_TIMEOUT)!)).toBeLessThanOrEqual(2);
      expect(vsaU32(second.p, VendorAttr.WISPR_BANDWIDTH_MAX_DOWN)).toEqual([10_000_000]);
      expect(u32(second.p, Attr.IDLE_TIMEOUT)).toBe(900);

      // Another NAS of the hotspot is news for the actor (where a Disconnect must go): not answered from the mirror.
      expect(await ask(nasB)).toMatchObject({ mirrored: 0 });
      expect((await ask(nasB)).mirrored).toBe(1);

      // Extended: the next answer carries the new end.
      expect((await call(svc.base, 'POST', `/v1/sessions/${s.session_id}/extend`, { auth: t.apiKey, body: { preset: '1h' } })).status).toBe(200);
      const extended = await ask(nasB);
      expect(extended.mirrored).toBe(0);
      expect(u32(extended.p, Attr.SESSION_TIMEOUT)).toBeGreaterThan(u32(second.p, Attr.SESSION_TIMEOUT)! + 3_500);
      expect((await ask(nasB)).mirrored).toBe(1);

      // Disconnected by an operator: rejected at once, not accepted from what was published before.
      expect((await call(svc.base, 'DELETE', `/v1/sessions/${s.session_id}`, { auth: t.apiKey })).status).toBe(200);
      const after = await ask(nasB);
      expect(after.p.code).toBe(Code.ACCESS_REJECT);
      expect(after.mirrored).toBe(0);
    });

    it('a mirrored answer never overtakes a sign-in or an accounting report of the device still on its way to the actor', async () => {
      // Asked the moment after, in the same process (as a NAS asks right after the portal answered):
      // the answer must already be the actor's new one, not what it published before.
      const e = svc.service.engine;
      const nas = e.nas.get(nasA.id)!;
      const mac = randomMac();
      const req = { nas, mac, userName: 'guest' };
      const s1 = await signIn(codes.mac, mac);
      await e.radius.authorize(req);
      expect(await e.radius.authorize(req)).toMatchObject({ accept: true, sessionId: s1.session_id }); // mirrored
      // Signing in again with another code replaces the session; the NAS asks at once.
      const s2 = await e.signIn.voucher({ hotspotId: t.hotspotId, code: codes.short, mac, ip: '10.20.0.5', ssid: 'Guest' });
      const replaced = await e.radius.authorize(req);
      expect(replaced).toMatchObject({ accept: true, sessionId: s2.session_id, downKbps: 1000 });
      expect((replaced as { sessionTimeout: number }).sessionTimeout).toBeLessThanOrEqual(600);

      // An Accounting-Stop ends the session: an Access-Request right behind it is refused.
      await e.radius.authorize(req);
      await e.radius.account({ nas, status: 'start', mac, userName: 'guest', acctSessionId: `m-${mac}`, inputOctets: 0, outputOctets: 0, sessionTime: 0, delayTime: 0 });
      await e.radius.authorize(req);
      const stopping = e.radius.account({ nas, status: 'stop', mac, userName: 'guest', acctSessionId: `m-${mac}`, inputOctets: 10, outputOctets: 10, sessionTime: 5, delayTime: 0, endReason: 'user_request' });
      expect(await e.radius.authorize(req)).toMatchObject({ accept: false });
      await stopping;

      // An Interim-Update past the daily quota: likewise.
      const q = randomMac();
      const qreq = { nas, mac: q, userName: 'guest' };
      await signIn(codes.quota, q);
      await e.radius.authorize(qreq);
      await e.radius.account({ nas, status: 'start', mac: q, userName: 'guest', acctSessionId: `q-${q}`, inputOctets: 0, outputOctets: 0, sessionTime: 0, delayTime: 0 });
      await e.radius.authorize(qreq);
      const over = e.radius.account({ nas, status: 'interim', mac: q, userName: 'guest', acctSessionId: `q-${q}`, inputOctets: 2 * MIB, outputOctets: 0, sessionTime: 30, delayTime: 0 });
      expect(await e.radius.authorize(qreq)).toMatchObject({ accept: false });
      await over;
    });

    it('rejects a MAC without a live session, and a request without any MAC, with a Reply-Message', async () => {
      const unknown = await authorize(nasA, { callingStationId: dashed(randomMac()), userName: 'someone' });
      expect(unknown.code).toBe(Code.ACCESS_REJECT);
      expect(text(unknown, Attr.REPLY_MESSAGE)).toMatch(/sign in/i);
      expect(attributeValue(unknown, Attr.SESSION_TIMEOUT)).toBeUndefined();

      const noMac = await authorize(nasA, { userName: 'someone' });
      expect(noMac.code).toBe(Code.ACCESS_REJECT);
      expect(text(noMac, Attr.REPLY_MESSAGE)).toBeTruthy();
    });

    it('rejects a blocked MAC: the block ends the session (Disconnect-Request to the NAS) and later requests get Access-Reject', async () => {
      const mac = randomMac();
      const s = await signIn(codes.mac, mac);
      expect((await authorize(nasA, { callingStationId: dashed(mac) })).code).toBe(Code.ACCESS_ACCEPT);
      const from = nasA.da.received.length;
      const blk = await call(svc.base, 'POST', `/v1/sessions/${s.session_id}/block`, { auth: t.apiKey, body: { duration: '24h' } });
      expect(blk.status).toBe(200);
      const dr = await nasA.da.waitFor((r) => r.code === Code.DISCONNECT_REQUEST && text(r.packet, Attr.CALLING_STATION_ID) === dashed(mac), 5000, from);
      expect(dr.signed).toBe(true);

      const again = await authorize(nasA, { callingStationId: dashed(mac) });
      expect(again.code).toBe(Code.ACCESS_REJECT);
      expect(text(again, Attr.REPLY_MESSAGE)).toBeTruthy();
      // Nor can it sign in again through RADIUS PAP with a valid code.
      const pap = await authorize(nasA, { userName: codes.mac, password: codes.mac, callingStationId: dashed(mac) });
      expect(pap.code).toBe(Code.ACCESS_REJECT);
      expect(text(pap, Attr.REPLY_MESSAGE)).toMatch(/block/i);
      expect((await endedInPostgres(s.session_id, 'blocked')).status).toBe('disconnected');
    });
  });

  describe('Access-Request: PAP with a voucher code', () => {
    it('drops a request whose Proxy-State leaves no room for a reply, before redeeming anything', async () => {
      const v = await call(svc.base, 'POST', '/v1/vouchers', {
        auth: t.apiKey, body: { code: `${codes.pap}-PS`, max_uses: 1, bandwidth_down_mbps: 10, bandwidth_up_mbps: 2, daily_quota_mb: 100 },
      });
      expect(v.status).toBe(201);
      const mac = randomMac();
      const before = serverStats().dropped.invalid_attribute;
      // Proxy-State filling the request to 4,096 octets: the Accept, echoing it beside this voucher's
      // limits (165 octets of our own), would not fit.
      const spec = { userName: v.body.code, password: v.body.code, callingStationId: dashed(mac) };
      const proxyStates = Array.from({ length: 16 }, (_, i) => Buffer.alloc(240, i));
      proxyStates.push(Buffer.alloc(4096 - access(nasB, { ...spec, proxyStates }).length - 2, 16));
      const req = access(nasB, { ...spec, proxyStates });
      expect(req.length).toBe(4096);
      expect(await ask(nasB, req, ports.auth, 700)).toBeNull();
      expect(await ask(nasB, req, ports.auth, 700)).toBeNull(); // the retransmission too
      expect(serverStats().dropped.invalid_attribute - before).toBe(2);
      expect((await call(svc.base, 'GET', `/v1/vouchers/${v.body.id}`, { auth: t.apiKey })).body.current_uses).toBe(0);
      // With room to echo them, the same code is redeemed and every Proxy-State comes back.
      const fits = access(nasB, { ...spec, proxyStates: proxyStates.slice(0, 8) });
      const reply = await ask(nasB, fits, ports.auth);
      expect(reply?.[0]).toBe(Code.ACCESS_ACCEPT);
      expect(decodePacket(reply!)!.attributes.filter((a) => a.type === Attr.PROXY_STATE)).toHaveLength(8);
    });

    it('redeems the code atomically like the portal: one use per device, retransmissions and repeats count nothing, exhausted → Access-Reject', async () => {
      const mac = randomMac();
      const req = access(nasA, { userName: codes.pap, password: codes.pap, callingStationId: dashed(mac), framedIp: '10.20.0.9' });
      const reply = await ask(nasA, req, ports.auth);
      expect(reply![0]).toBe(Code.ACCESS_ACCEPT);
      const p = decodePacket(reply!)!;
      const sid = text(p, Attr.CLASS)!;
      expect(sid).toMatch(/^sess_[a-z0-9]{16}$/);
      expect(u32(p, Attr.SESSION_TIMEOUT)).toBeGreaterThan(30 * 60 - 15);
      expect(u32(p, Attr.SESSION_TIMEOUT)).toBeLessThanOrEqual(30 * 60);
      expect(vsaU32(p, VendorAttr.WISPR_BANDWIDTH_MAX_DOWN)).toEqual([5_000_000]);

      // The NAS retransmits (same octets): the cached reply, octet for octet; no second redemption.
      const dup = await ask(nasA, req, ports.auth);
      expect(dup!.equals(reply!)).toBe(true);
      // The device asks again (a new request): its live session back, no use counted.
      const repeat = await authorize(nasA, { userName: codes.pap, password: codes.pap, callingStationId: dashed(mac) });
      expect(repeat.code).toBe(Code.ACCESS_ACCEPT);
      expect(text(repeat, Attr.CLASS)).toBe(sid);

      const one = await session(sid);
      expect(one).toMatchObject({ mac, auth_method: 'voucher', username: codes.pap, status: 'active', ip: '10.20.0.9' });
      const v = await call(svc.base, 'GET', `/v1/vouchers?limit=100`, { auth: t.apiKey });
      const voucher = v.body.data.find((x: { code: string }) => x.code === codes.pap);
      expect(voucher).toMatchObject({ max_uses: 1, current_uses: 1 });
      await until(async () => (await db.query('SELECT count(*)::int AS n FROM voucher_uses WHERE voucher_id = $1', [voucher.id])).rows[0].n === 1);

      // max_uses 1: another device is refused.
      const other = await authorize(nasA, { userName: codes.pap, password: codes.pap, callingStationId: dashed(randomMac()) });
      expect(other.code).toBe(Code.ACCESS_REJECT);
      expect(text(other, Attr.REPLY_MESSAGE)).toMatch(/used up/i);
      const unknown = await authorize(nasA, { userName: `NOPE-${suffix}`, password: 'x', callingStationId: dashed(randomMac()) });
      expect(unknown.code).toBe(Code.ACCESS_REJECT);
      expect(text(unknown, Attr.REPLY_MESSAGE)).toMatch(/unknown/i);

      await sleep(300); // let any stray second redemption reach Postgres before counting
      expect((await db.query('SELECT count(*)::int AS n FROM voucher_uses WHERE voucher_id = $1', [voucher.id])).rows[0].n).toBe(1);
      expect((await call(svc.base, 'GET', `/v1/vouchers/${voucher.id}`, { auth: t.apiKey })).body.current_uses).toBe(1);
    });

    it('accepts CHAP as CoovaChilli sends a UAM login: the code proves itself as the secret; a wrong response is refused and uses nothing', async () => {
      const code = `${codes.pap}-CHAP`;
      expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: 2, duration_minutes: 20 } })).status).toBe(201);
      // chilli's CHAP-Challenge is MD5(the portal's challenge || the UAM secret): 16 octets of its own.
      const challenge = randomBytes(16);
      const wrong = await authorize(nasA, { userName: code, chap: { secret: 'not-the-code', challenge }, callingStationId: dashed(randomMac()) });
      expect(wrong.code).toBe(Code.ACCESS_REJECT);
      expect((await call(svc.base, 'GET', `/v1/vouchers?limit=200`, { auth: t.apiKey })).body.data.find((x: { code: string }) => x.code === code).current_uses).toBe(0);

      const mac = randomMac();
      const ok = await authorize(nasA, { userName: code, chap: { secret: code, challenge, ident: 7 }, callingStationId: dashed(mac) });
      expect(ok.code).toBe(Code.ACCESS_ACCEPT);
      expect(u32(ok, Attr.SESSION_TIMEOUT)).toBeLessThanOrEqual(20 * 60);
      // Without CHAP-Challenge the Request Authenticator is the challenge (RFC 2865 §2.2).
      const plain = await authorize(nasA, { userName: code, chap: { secret: code }, callingStationId: dashed(randomMac()) });
      expect(plain.code).toBe(Code.ACCESS_ACCEPT);
      expect(await session(text(ok, Attr.CLASS)!)).toMatchObject({ mac, auth_method: 'voucher', username: code });
    });

    it('redeems a code that also reads as a MAC (12 digits) when the device\'s MAC is in Calling-Station-Id', async () => {
      // Numeric codes of length 12 (console format {charset: numeric, length: 12}) parse as a MAC;
      // a MAC-authentication NAS sends the device's own MAC as User-Name, which this is not.
      const code = String(randomInt(100_000_000_000, 999_999_999_999));
      expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: 1, duration_minutes: 45 } })).status).toBe(201);
      const mac = randomMac();
      const p = await authorize(nasA, { userName: code, password: code, callingStationId: dashed(mac) });
      expect(p.code).toBe(Code.ACCESS_ACCEPT);
      expect(u32(p, Attr.SESSION_TIMEOUT)).toBeGreaterThan(45 * 60 - 15);
      const sid = text(p, Attr.CLASS)!;
      expect(await session(sid)).toMatchObject({ mac, auth_method: 'voucher', status: 'active' });
      // (The API masks the middle digits of digit-only user names as phone numbers: read the stored one.)
      await until(async () => (await db.query('SELECT username FROM sessions WHERE id = $1', [sid])).rows[0]?.username === code);
      const v = await call(svc.base, 'GET', `/v1/vouchers?limit=100`, { auth: t.apiKey });
      expect(v.body.data.find((x: { code: string }) => x.code === code)).toMatchObject({ current_uses: 1 });
    });
  });

  describe('accounting', () => {
    it('Start, Interim-Update, a retransmitted Interim-Update (new Acct-Delay-Time), Gigawords, Stop with a cause: bytes from the guest side, end reason and audit record', async () => {
      const mac = randomMac();
      const s = await signIn(codes.mac, mac);
      const base = { callingStationId: dashed(mac), userName: codes.mac, acctSessionId: `acct-${mac}` };
      await account(nasA, { ...base, status: AcctStatusType.START, sessionTime: 0 });

      const interim = { ...base, status: AcctStatusType.INTERIM_UPDATE, inputOctets: 1_000, outputOctets: 5_000, sessionTime: 60 };
      const first = await account(nasA, interim);
      // bytes_in is what the guest downloaded: Acct-Output-Octets (RFC 2866 counts at the NAS port).
      expect(await session(s.session_id)).toMatchObject({ bytes_in: 5_000, bytes_out: 1_000, status: 'active' });

      // The same event retransmitted later: only Acct-Delay-Time changes, so the authenticator
      // changes too and the duplicate cache cannot catch it; the engine must not count it twice.
      const retransmit = await account(nasA, { ...interim, delayTime: 7 });
      expect(retransmit.subarray(4, 20).equals(first.subarray(4, 20))).toBe(false);
      expect(await session(s.session_id)).toMatchObject({ bytes_in: 5_000, bytes_out: 1_000 });

      // Counters past 4 GiB: Gigawords (RFC 2869 §5.1/§5.2).
      await account(nasA, { ...base, status: AcctStatusType.INTERIM_UPDATE, inputOctets: 3_000, outputOctets: 7_000, outputGigawords: 1, sessionTime: 120 });
      expect(await session(s.session_id)).toMatchObject({ bytes_in: TWO_32 + 7_000, bytes_out: 3_000 });

      const stop = { ...base, status: AcctStatusType.STOP, inputOctets: 4_000, outputOctets: 9_000, outputGigawords: 1, inputGigawords: 0, sessionTime: 300, terminateCause: 2 /* Lost-Carrier */ };
      expect(TERMINATE_CAUSES[2]).toBe('lost-carrier');
      await account(nasA, stop);
      const row = await endedInPostgres(s.session_id, 'lost_carrier');
      expect(row.status).toBe('ended');
      expect(Number(row.bytes_in)).toBe(TWO_32 + 9_000);
      expect(Number(row.bytes_out)).toBe(4_000);
      expect(await endRecord(s.session_id)).toMatchObject({ reason: 'lost_carrier', bytes_in: TWO_32 + 9_000, bytes_out: 4_000 });
      expect(await session(s.session_id)).toMatchObject({ status: 'ended', end_reason: 'lost_carrier', bytes_in: TWO_32 + 9_000, bytes_out: 4_000 });

      // The Stop retransmitted (new Acct-Delay-Time): answered, and nothing ends twice.
      await account(nasA, { ...stop, delayTime: 3 });
      await sleep(300);
      await endRecord(s.session_id);
      // The device is off the network: MAC authorisation now fails.
      expect((await authorize(nasA, { callingStationId: dashed(mac) })).code).toBe(Code.ACCESS_REJECT);
    });

    it("a device that roams to another NAS keeps its session: the old NAS's late Stop counts its bytes once and ends nothing", async () => {
      const mac = randomMac();
      const s = await signIn(codes.mac, mac);
      const on = (nas: Nas, status: number, id: string, outputOctets: number, extra: Partial<AccountingSpec> = {}) =>
        account(nas, { status, callingStationId: dashed(mac), acctSessionId: `${id}-${mac}`, outputOctets, ...extra });
      await on(nasA, AcctStatusType.START, 'roam1', 0);
      await on(nasA, AcctStatusType.INTERIM_UPDATE, 'roam1', 1_000);
      await on(nasB, AcctStatusType.START, 'roam2', 0);
      await on(nasA, AcctStatusType.STOP, 'roam1', 1_500, { terminateCause: 2 });
      await on(nasA, AcctStatusType.STOP, 'roam1', 1_500, { terminateCause: 2, delayTime: 3 }); // its retransmission
      await on(nasB, AcctStatusType.INTERIM_UPDATE, 'roam2', 300);
      const live = await session(s.session_id);
      expect(live).toMatchObject({ status: 'active', bytes_in: 1_800 });
      expect((await authorize(nasB, { callingStationId: dashed(mac) })).code).toBe(Code.ACCESS_ACCEPT);

      // The current NAS's Stop ends it, at the time the NAS saw it end (Acct-Delay-Time before now).
      const started = Date.parse(live.started_at);
      await new Promise((r) => setTimeout(r, Math.max(0, started + 2_500 - Date.now())));
      const sent = Date.now();
      await on(nasB, AcctStatusType.STOP, 'roam2', 400, { terminateCause: 2, delayTime: 2 });
      const row = await endedInPostgres(s.session_id, 'lost_carrier');
      expect(Number(row.bytes_in)).toBe(1_900);
      const ended = async () => (await db.query('SELECT ended_at FROM sessions WHERE id = $1', [s.session_id])).rows[0].ended_at.getTime();
      expect(Math.abs((await ended()) - (sent - 2_000))).toBeLessThan(500);

      // A delay that would put the end before the start (a NAS's nonsense) ends it at its start.
      const other = await signIn(codes.mac, randomMac());
      const otherMac = (await session(other.session_id)).mac;
      await account(nasB, { status: AcctStatusType.STOP, callingStationId: dashed(otherMac), acctSessionId: `late-${otherMac}`, delayTime: 3_600 });
      await endedInPostgres(other.session_id, 'user_request');
      const r2 = (await db.query('SELECT started_at, ended_at FROM sessions WHERE id = $1', [other.session_id])).rows[0];
      expect(r2.ended_at.getTime()).toBe(r2.started_at.getTime());
    });

    it("a timed-out session waits briefly for its NAS's Stop and its last bytes; without one it ends at its time all the same", async () => {
      const redis = svc.service.engine.redis;
      // The device's daily counter is read back by the hotspot's day (Istanbul's here): clear of its midnight.
      await clearOfMidnight(20_000, 'Europe/Istanbul');
      // One after the other: two waits on one NAS socket would take each other's replies.
      const devices = [];
      for (const mac of [randomMac(), randomMac()]) devices.push(await (async () => {
        const s = await signIn(codes.mac, mac);
        await account(nasA, { status: AcctStatusType.START, callingStationId: dashed(mac), acctSessionId: `to-${mac}` });
        await account(nasA, { status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac), acctSessionId: `to-${mac}`, outputOctets: 1_000 });
        // Its time runs out in a second: as if the voucher had been that short.
        const endsAt = Date.now() + 1_000;
        await redis.hset(keys.grant(t.tenantId, t.hotspotId, mac), 'until', endsAt);
        await redis.zadd(keys.live(t.tenantId, t.hotspotId), endsAt, s.session_id);
        await svc.service.engine.actors!.request({ t: 'started', tenant: t.tenantId, hs: t.hotspotId, tz: 'Europe/Istanbul', sid: s.session_id, mac, replaced: '' });
        return { mac, sid: s.session_id, until: endsAt };
      })());
      await new Promise((r) => setTimeout(r, 2_000));
      const [withStop, without] = devices as [typeof devices[0], typeof devices[0]];
      // Past its time: no access, though its end waits for the NAS.
      expect((await authorize(nasA, { callingStationId: dashed(withStop.mac) })).code).toBe(Code.ACCESS_REJECT);
      expect((await session(withStop.sid)).status).toBe('active');
      await account(nasA, { status: AcctStatusType.STOP, callingStationId: dashed(withStop.mac), acctSessionId: `to-${withStop.mac}`, outputOctets: 5_000, terminateCause: 5 });
      const row = await endedInPostgres(withStop.sid, 'session_timeout');
      expect(Number(row.bytes_in)).toBe(5_000);
      expect(await redis.get(keys.dailyUsage(t.tenantId, withStop.mac, localDay('Europe/Istanbul', Date.now())))).toBe('5000');
      // The other's NAS never says: it ends after the grace, at its own time.
      const at = async (sid: string) => (await db.query('SELECT ended_at FROM sessions WHERE id = $1', [sid])).rows[0].ended_at?.getTime();
      expect(await at(withStop.sid)).toBe(withStop.until);
      await until(async () => (await at(without.sid)) !== undefined, { timeoutMs: 20_000 });
      expect(await at(without.sid)).toBe(without.until);
    });

    it('a Stop without a Start closes the session, with the Acct-Terminate-Cause mapped to our reason', async () => {
      const cases: [number | undefined, string][] = [
        [1, 'user_request'], [4, 'idle_timeout'], [5, 'session_timeout'], [undefined, 'user_request'],
      ];
      const sessions = [];
      for (const [cause, reason] of cases) {
        const mac = randomMac();
        sessions.push({ cause, reason, mac, sid: (await signIn(codes.mac, mac)).session_id });
      }
      for (const c of sessions) {
        await account(nasA, {
          status: AcctStatusType.STOP, callingStationId: dashed(c.mac), acctSessionId: `stop-${c.mac}`,
          inputOctets: 10, outputOctets: 20, sessionTime: 42, terminateCause: c.cause,
        });
      }
      for (const c of sessions) {
        const row = await endedInPostgres(c.sid, c.reason);
        expect(row).toMatchObject({ status: 'ended', end_reason: c.reason });
        expect(Number(row.bytes_in)).toBe(20);
        expect(Number(row.bytes_out)).toBe(10);
        expect((await endRecord(c.sid)).reason).toBe(c.reason);
      }
    });

    it('Accounting-On ends the sessions that NAS carried (nas_reboot), and only those', async () => {
      // Two sessions the rebooting NAS (B) carried: one it authorised, one it only reported in accounting.
      const authed = randomMac();
      const reported = randomMac();
      const elsewhere = randomMac();
      const sAuthed = await signIn(codes.mac, authed);
      const sReported = await signIn(codes.mac, reported);
      const sElsewhere = await signIn(codes.mac, elsewhere);
      expect((await authorize(nasB, { callingStationId: dashed(authed) })).code).toBe(Code.ACCESS_ACCEPT);
      await account(nasB, { status: AcctStatusType.START, callingStationId: dashed(reported), acctSessionId: `on-${reported}` });
      // A session on the other NAS of the same hotspot.
      await account(nasA, { status: AcctStatusType.START, callingStationId: dashed(elsewhere), acctSessionId: `on-${elsewhere}` });

      await account(nasB, { status: AcctStatusType.ACCOUNTING_ON, acctSessionId: '0', nasIdentifier: 'nas-b' });
      expect((await endedInPostgres(sAuthed.session_id, 'nas_reboot')).status).toBe('ended');
      expect((await endedInPostgres(sReported.session_id, 'nas_reboot')).status).toBe('ended');
      expect((await endRecord(sReported.session_id)).reason).toBe('nas_reboot');
      expect((await session(sElsewhere.session_id)).status).toBe('active');
      expect((await authorize(nasA, { callingStationId: dashed(elsewhere) })).code).toBe(Code.ACCESS_ACCEPT);
      expect((await authorize(nasB, { callingStationId: dashed(authed) })).code).toBe(Code.ACCESS_REJECT);
    });

    it('Accounting-Off/On still finds the sessions a NAS reported only in accounting after the actor reloaded from Redis', async () => {
      // Redis is the truth: an actor thread that dies reloads its sessions from Redis. Which NAS
      // carries a session must survive that, or a NAS reboot leaves its sessions live.
      const reported = randomMac();
      const s = await signIn(codes.mac, reported);
      await account(nasB, { status: AcctStatusType.START, callingStationId: dashed(reported), acctSessionId: `reload-${reported}` });
      await svc.service.engine.actors!.killThread(threadIndex(t.tenantId, t.hotspotId, 2));
      await until(async () => (await call(svc.base, 'GET', `/v1/sessions/${s.session_id}`, { auth: t.apiKey })).status === 200);
      await account(nasB, { status: AcctStatusType.ACCOUNTING_OFF, acctSessionId: '0' });
      expect((await endedInPostgres(s.session_id, 'nas_reboot')).status).toBe('ended');
    });

    it('answers every Accounting-Request of a burst exactly once, and counts each device\'s traffic once', async () => {
      const macs = Array.from({ length: 25 }, randomMac);
      const sids: string[] = [];
      for (const mac of macs) sids.push((await signIn(codes.mac, mac)).session_id);
      const requests: Buffer[] = [];
      for (const [i, mac] of macs.entries()) {
        const base = { callingStationId: dashed(mac), acctSessionId: `burst-${mac}` };
        requests.push(accounting(nasA, { ...base, status: AcctStatusType.START }));
        for (let k = 1; k <= 3; k++) {
          requests.push(accounting(nasA, { ...base, status: AcctStatusType.INTERIM_UPDATE, inputOctets: 100 * k + i, outputOctets: 1000 * k + i, sessionTime: 60 * k }));
        }
      }
      expect(requests.length).toBeLessThanOrEqual(256); // Identifiers stay unique within the burst
      for (const r of requests) await nasA.radius.send(r, ports.acct);

      const answered = new Map<number, number>();
      const endsAt = Date.now() + 10_000;
      while (answered.size < requests.length && Date.now() < endsAt) {
        const got = await nasA.radius.next(endsAt - Date.now());
        if (!got) break;
        const req = requests.find((r) => r[1] === got.msg[1]);
        if (!req || got.msg[0] !== Code.ACCOUNTING_RESPONSE) continue;
        expect(rc.verifyResponseAuthenticator(got.msg, got.msg.length, req.subarray(4, 20), nasA.secret)).toBe(true);
        answered.set(got.msg[1]!, (answered.get(got.msg[1]!) ?? 0) + 1);
      }
      expect(answered.size).toBe(requests.length);
      expect([...answered.values()].every((n) => n === 1)).toBe(true);
      for (const [i, sid] of sids.entries()) {
        expect(await session(sid)).toMatchObject({ bytes_in: 3000 + i, bytes_out: 300 + i });
      }
    });
  });

  describe('quota', () => {
    it('an Interim-Update past a 1 MB daily quota ends the session (daily_quota) and sends a Disconnect-Request, retransmitted until the NAS ACKs it', async () => {
      const mac = randomMac();
      const s = await signIn(codes.quota, mac);
      expect((await authorize(nasA, { callingStationId: dashed(mac), userName: codes.quota, framedIp: '10.20.0.77' })).code).toBe(Code.ACCESS_ACCEPT);
      const acctSessionId = `quota-${mac}`;
      await account(nasA, { status: AcctStatusType.START, callingStationId: dashed(mac), userName: codes.quota, acctSessionId });

      // The NAS stays silent at first, so the engine's retransmission shows.
      const isOurs = (r: DaRequest) => r.code === Code.DISCONNECT_REQUEST && text(r.packet, Attr.CALLING_STATION_ID) === dashed(mac);
      let ackAfter = 1;
      nasA.da.answer = (r) => (isOurs(r) && ackAfter-- > 0 ? null : { code: r.code + 1 });
      const acks = await coaResults('ack');
      const from = nasA.da.received.length;
      try {
        await account(nasA, { status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac), userName: codes.quota, acctSessionId, inputOctets: 48_576, outputOctets: MIB - 48_576 + 1, sessionTime: 60 });
        const dr = await nasA.da.waitFor(isOurs, 5000, from);
        expect(dr.signed).toBe(true);
        expect(dr.packet.attributes[0]!.type).toBe(Attr.MESSAGE_AUTHENTICATOR);
        expect(text(dr.packet, Attr.USER_NAME)).toBe(codes.quota);
        expect(text(dr.packet, Attr.ACCT_SESSION_ID)).toBe(acctSessionId);
        // RFC 5176 retransmission: same octets (Identifier, authenticator) about 2 s later.
        const again = await nasA.da.waitFor((r) => r !== dr && r.msg.equals(dr.msg), 5000, from);
        expect(again.at - dr.at).toBeGreaterThan(1500);
        // That one was ACKed with a correct Response Authenticator: the client takes it.
        await until(async () => await coaResults('ack') === acks + 1, { timeoutMs: 3000 });
      } finally {
        nasA.da.answer = (r) => ({ code: r.code + 1 });
      }

      const row = await endedInPostgres(s.session_id, 'daily_quota');
      expect(row.status).toBe('ended');
      expect(Number(row.bytes_in) + Number(row.bytes_out)).toBe(MIB + 1);
      expect((await endRecord(s.session_id)).reason).toBe('daily_quota');
      const reject = await authorize(nasA, { callingStationId: dashed(mac) });
      expect(reject.code).toBe(Code.ACCESS_REJECT);

      // Signing in again does not reset a daily quota: the NAS still gets Access-Reject.
      await signIn(codes.quota, mac);
      const still = await authorize(nasA, { callingStationId: dashed(mac) });
      expect(still.code).toBe(Code.ACCESS_REJECT);
      expect(text(still, Attr.REPLY_MESSAGE)).toMatch(/quota/i);
    });

    it('session_quota_mb 1 (set through the API): the session ends (session_quota) and is disconnected at 1 MiB in and out together; the next session starts a fresh quota', async () => {
      const mac = randomMac();
      const s = await signIn(codes.squota, mac);
      // The NAS is told the data left, as for a daily quota, so it can end the session on time itself.
      const first = await authorize(nasA, { callingStationId: dashed(mac) });
      expect(first.code).toBe(Code.ACCESS_ACCEPT);
      expect(vsaU32(first, VendorAttr.CHILLISPOT_MAX_TOTAL_OCTETS)).toEqual([MIB]);
      expect(vsaU32(first, VendorAttr.MIKROTIK_TOTAL_LIMIT)).toEqual([MIB]);
      const acctSessionId = `squota-${mac}`;
      await account(nasA, { status: AcctStatusType.START, callingStationId: dashed(mac), acctSessionId });
      const isOurs = (r: DaRequest) => r.code === Code.DISCONNECT_REQUEST && text(r.packet, Attr.CALLING_STATION_ID) === dashed(mac);
      const from = nasA.da.received.length;

      // One byte short, counting both directions: the session goes on. The Accounting-Response
      // comes after the actor has handled the update, so a quota end would already show.
      await account(nasA, { status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac), acctSessionId, inputOctets: MIB - 1025, outputOctets: 1024, sessionTime: 20 });
      expect((await session(s.session_id)).status).toBe('active');
      const nearly = await authorize(nasA, { callingStationId: dashed(mac) });
      expect(nearly.code).toBe(Code.ACCESS_ACCEPT);
      expect(vsaU32(nearly, VendorAttr.CHILLISPOT_MAX_TOTAL_OCTETS)).toEqual([1]);

      await account(nasA, { status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac), acctSessionId, inputOctets: MIB - 1024, outputOctets: 1024, sessionTime: 30 });
      await nasA.da.waitFor(isOurs, 5000, from);
      const row = await endedInPostgres(s.session_id, 'session_quota');
      expect(row.status).toBe('ended');
      expect(Number(row.bytes_in) + Number(row.bytes_out)).toBe(MIB);
      expect((await endRecord(s.session_id)).reason).toBe('session_quota');
      expect((await authorize(nasA, { callingStationId: dashed(mac) })).code).toBe(Code.ACCESS_REJECT);

      // Unlike a daily quota, a session quota is per session: signing in again gives a new
      // session with its own full megabyte.
      const again = await signIn(codes.squota, mac);
      expect(again.session_id).not.toBe(s.session_id);
      expect((await authorize(nasA, { callingStationId: dashed(mac) })).code).toBe(Code.ACCESS_ACCEPT);
      const second = `squota2-${mac}`;
      await account(nasA, { status: AcctStatusType.START, callingStationId: dashed(mac), acctSessionId: second });
      await account(nasA, { status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac), acctSessionId: second, inputOctets: MIB - 1, outputOctets: 0, sessionTime: 10 });
      expect((await session(again.session_id)).status).toBe('active');
      expect((await authorize(nasA, { callingStationId: dashed(mac) })).code).toBe(Code.ACCESS_ACCEPT);
    });
  });

  describe('extension', () => {
    it('POST /extend sends the NAS a CoA-Request with the new Session-Timeout; a CoA-NAK with Error-Cause 503 is not retried and breaks nothing', async () => {
      const mac = randomMac();
      const s = await signIn(codes.mac, mac);
      // A MAC-authentication NAS names the session by the bare MAC: the CoA must carry that User-Name, not the code.
      const bare = mac.replace(/:/g, '').toLowerCase();
      expect((await authorize(nasA, { callingStationId: dashed(mac), userName: bare, password: bare, framedIp: '10.20.0.33' })).code).toBe(Code.ACCESS_ACCEPT);
      const acctSessionId = `ext-${mac}`;
      await account(nasA, { status: AcctStatusType.START, callingStationId: dashed(mac), userName: bare, acctSessionId });

      const isOurs = (r: DaRequest) => r.code === Code.COA_REQUEST && text(r.packet, Attr.CALLING_STATION_ID) === dashed(mac);
      nasA.da.answer = (r) => (isOurs(r) ? { code: Code.COA_NAK, errorCause: ErrorCause.SESSION_CONTEXT_NOT_FOUND } : { code: r.code + 1 });
      const naks = await coaResults('nak');
      const from = nasA.da.received.length;
      try {
        const ext = await call(svc.base, 'POST', `/v1/sessions/${s.session_id}/extend`, { auth: t.apiKey, body: { preset: '1h' } });
        expect(ext.status).toBe(200);
        const newEnd = Date.parse(ext.body.expires_at);
        expect(newEnd - Date.parse(s.expires_at)).toBe(3_600_000);

        const coa = await nasA.da.waitFor(isOurs, 5000, from);
        expect(coa.signed).toBe(true);
        expect(coa.packet.attributes[0]!.type).toBe(Attr.MESSAGE_AUTHENTICATOR);
        const timeout = u32(coa.packet, Attr.SESSION_TIMEOUT)!;
        expect(Math.abs(timeout - (newEnd - coa.at) / 1000)).toBeLessThan(3);
        expect(timeout).toBeGreaterThan(180 * 60 - 15);
        expect(text(coa.packet, Attr.ACCT_SESSION_ID)).toBe(acctSessionId);
        expect(text(coa.packet, Attr.USER_NAME)).toBe(bare);

        await until(async () => await coaResults('nak') === naks + 1, { timeoutMs: 3000 });
        // 503 means the NAS has no such session: no retransmission (one would come 2 s after the first send).
        await sleep(3000);
        expect(nasA.da.received.slice(from).filter((r) => r.msg.equals(coa.msg))).toHaveLength(1);
      } finally {
        nasA.da.answer = (r) => ({ code: r.code + 1 });
      }

      // Nothing broke: the session is live with its new end, and the NAS is told so on its next request.
      expect(await session(s.session_id)).toMatchObject({ status: 'active' });
      const again = await authorize(nasA, { callingStationId: dashed(mac) });
      expect(again.code).toBe(Code.ACCESS_ACCEPT);
      expect(u32(again, Attr.SESSION_TIMEOUT)).toBeGreaterThan(180 * 60 - 15);
      await until(async () => (await db.query("SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND session_id = $2 AND event_type = 'session_extend'", [t.tenantId, s.session_id])).rows[0].n === 1);
      // And a later extension still reaches the NAS (ACKed this time).
      const acks = await coaResults('ack');
      const from2 = nasA.da.received.length;
      expect((await call(svc.base, 'POST', `/v1/sessions/${s.session_id}/extend`, { auth: t.apiKey, body: { minutes: 15 } })).status).toBe(200);
      await nasA.da.waitFor(isOurs, 5000, from2);
      await until(async () => await coaResults('ack') === acks + 1, { timeoutMs: 3000 });
    });
  });

  describe('security', () => {
    it('drops requests from an address that is not a registered NAS (no reply)', async () => {
      const stranger = await TestNas.open(strangerLoopback());
      const before = serverStats().dropped.unknown_nas;
      try {
        const mac = randomMac();
        await signIn(codes.mac, mac);
        // Signed with a real NAS's secret: the source address alone decides.
        const req = accessRequest({ secret: nasA.secret, id: 7, callingStationId: dashed(mac) });
        await stranger.send(req, ports.auth);
        await stranger.send(accountingRequest({ secret: nasA.secret, id: 8, status: AcctStatusType.START, callingStationId: dashed(mac) }), ports.acct);
        expect(await stranger.next(SILENCE_MS)).toBeNull();
        expect(serverStats().dropped.unknown_nas - before).toBe(2);
        // The same Access-Request from the registered NAS is answered.
        expect(await ask(nasA, req, ports.auth)).not.toBeNull();
      } finally {
        await stranger.close();
      }
    });

    it('drops an Access-Request without Message-Authenticator from a NAS that requires one; answers it from a NAS that does not', async () => {
      const mac = randomMac();
      await signIn(codes.mac, mac);
      const before = serverStats().dropped.missing_message_authenticator;
      const bare = access(nasA, { callingStationId: dashed(mac), messageAuthenticator: 'none' });
      expect(findAttribute(bare, bare.length, Attr.MESSAGE_AUTHENTICATOR)).toBe(-1);
      expect(await ask(nasA, bare, ports.auth, SILENCE_MS)).toBeNull();
      expect(serverStats().dropped.missing_message_authenticator - before).toBe(1);
      // With one it is answered; and NAS B (require_message_authenticator false) is answered without.
      expect((await authorize(nasA, { callingStationId: dashed(mac) })).code).toBe(Code.ACCESS_ACCEPT);
      const fromB = await ask(nasB, access(nasB, { callingStationId: dashed(mac), messageAuthenticator: 'none' }), ports.auth);
      expect(fromB![0]).toBe(Code.ACCESS_ACCEPT);
      expect(fromB![20]).toBe(Attr.MESSAGE_AUTHENTICATOR);
      // A request signed with another secret is dropped too.
      expect(await ask(nasB, accessRequest({ secret: 'not-the-secret', id: nasB.nextId(), callingStationId: dashed(mac) }), ports.auth, SILENCE_MS)).toBeNull();
      expect(await ask(nasA, accountingRequest({ secret: 'not-the-secret', id: nasA.nextId(), callingStationId: dashed(mac) }), ports.acct, SILENCE_MS)).toBeNull();
    });

    it('answers duplicates octet for octet (RFC 5080 §2.2.2): Access-Request and Accounting-Request', async () => {
      const mac = randomMac();
      const s = await signIn(codes.mac, mac);
      const dupes = serverStats().duplicatesAnswered;
      const req = access(nasA, { callingStationId: dashed(mac) });
      const first = await ask(nasA, req, ports.auth);
      expect(first![0]).toBe(Code.ACCESS_ACCEPT);
      await sleep(1100); // a second decision would carry another Session-Timeout
      const second = await ask(nasA, req, ports.auth);
      expect(second!.equals(first!)).toBe(true);

      const acct = accounting(nasA, { status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac), acctSessionId: `dup-${mac}`, inputOctets: 111, outputOctets: 222 });
      const r1 = await ask(nasA, acct, ports.acct);
      const r2 = await ask(nasA, acct, ports.acct);
      expect(r1).not.toBeNull();
      expect(r2!.equals(r1!)).toBe(true);
      expect(serverStats().duplicatesAnswered - dupes).toBe(2);
      expect(await session(s.session_id)).toMatchObject({ bytes_in: 222, bytes_out: 111 });
    });
  });
});
