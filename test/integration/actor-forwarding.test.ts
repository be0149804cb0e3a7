import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AcctStatusType, Attr, Code, attributeValue, decodePacket } from '../../radius/index.js';
import { type DaRequest } from '../radius/dynamic-auth-listener.js';
import { TestNas, accessRequest, accountingRequest } from '../radius/helpers.js';
import { call, dashed, keys, macs, newTenant, newVoucher, startService, until, type Running, type Tenant, type Voucher } from '../support/fixture.js';
import { addCoaNas, type CoaNas } from '../support/loopback-nas.js';

/**
 * Issue 23 item 2: what the API or the portal asks of a hotspot's actor
 * through a process that does not hold the hotspot's lease reaches the
 * process that does (ActorForwarder, docs/scale.md "Forwarding"). Two
 * engine services in this process with distinct NODE_IDs on the shared
 * Redis and Postgres (the forwarding is between NODE_IDs over Redis, as
 * between machines); A owns the hotspots, B only serves the portal and API.
 * Before it: B's `started` was refused and lost (the owner kept answering
 * the replaced session, no CoA on a mac_auth gateway), and an operator's
 * disconnect or extend through B answered 503 hotspot_owned_elsewhere.
 */

const randomMac = macs();
const ids = { a: `fwd-a-${randomBytes(3).toString('hex')}`, b: `fwd-b-${randomBytes(3).toString('hex')}` };

type Nas = CoaNas;

describe('actor messages forwarded to the hotspot\'s owner', () => {
  let a: Running;
  let b: Running;
  let redis: Redis;
  let t: Tenant;
  let long: Voucher;
  let short: Voucher;
  let nas: Nas;
  const opened: { close(): Promise<void> }[] = [];

  async function registerNas(hotspotId: string): Promise<Nas> {
    const nas = await addCoaNas(a.base, { apiKey: t.apiKey, hotspotId });
    opened.push(nas.radius, nas.da);
    return nas;
  }

  /** `to`'s answer to an Access-Request for the device (MAC authentication: Calling-Station-Id only): its code, Session-Timeout and source port; null: none within `ms`. */
  async function authorizeAt(to: Running, n: Nas, mac: string, ms = 5_000): Promise<{ code: number; timeout: number | undefined; port: number } | null> {
    const req = accessRequest({ secret: n.secret, id: n.nextId(), callingStationId: dashed(mac) });
    await n.radius.send(req, to.service.radiusPorts.auth);
    const endsAt = Date.now() + ms;
    for (;;) {
      const left = endsAt - Date.now();
      const got = left > 0 ? await n.radius.next(left) : null;
      if (!got) return null;
      const p = decodePacket(got.msg);
      if (!p || p.identifier !== req[1]) continue;
      return { code: p.code, timeout: attributeValue(p, Attr.SESSION_TIMEOUT)?.readUInt32BE(0), port: got.rinfo.port };
    }
  }

  /** The owner's answer to an Access-Request for the device. */
  async function authorizeAtA(n: Nas, mac: string): Promise<{ code: number; timeout: number | undefined }> {
    const r = await authorizeAt(a, n, mac);
    if (!r) throw new Error(`no answer from A to the Access-Request for ${mac}`);
    return r;
  }

  async function verify(via: Running, hotspotId: string, v: Voucher, mac: string): Promise<{ session_id: string; expires_at: string }> {
    const r = await call(via.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hotspotId}`, { body: { code: v.code, mac, ip: '10.50.0.5' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  }

  /** A signs a first device in at the hotspot: its actor wakes there and takes the lease. */
  async function ownedByA(hotspotId: string): Promise<void> {
    await verify(a, hotspotId, long, randomMac());
    await until(async () => (await redis.get(keys.lease(t.tenantId, hotspotId))) === ids.a, { what: 'A holding the hotspot\'s lease' });
  }

  beforeAll(async () => {
    a = await startService({ NODE_ID: ids.a, LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    b = await startService({ NODE_ID: ids.b, LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    redis = new Redis(inject('redisUrl'));
    t = await newTenant(a.service, 'Forwarding Venue');
    long = await newVoucher(a.base, t, { duration_minutes: 120 });
    short = await newVoucher(a.base, t, { duration_minutes: 10 });
    nas = await registerNas(t.hotspotId);
    await ownedByA(t.hotspotId);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(opened.map((o) => o.close()));
    redis?.disconnect();
    await b?.stop();
    await a?.stop();
  });

  it('a sign-in through B that replaces a live session: A\'s Access-Request answer is the new session\'s at once', async () => {
    const mac = randomMac();
    const first = await verify(a, t.hotspotId, long, mac);
    const before = await authorizeAtA(nas, mac);
    expect(before.code).toBe(Code.ACCESS_ACCEPT);
    expect(before.timeout).toBeGreaterThan(110 * 60); // the 120-minute session (A now answers it from its mirror)
    expect((await authorizeAtA(nas, mac)).timeout).toBeGreaterThan(110 * 60);

    const second = await verify(b, t.hotspotId, short, mac);
    const signedInAt = Date.now();
    expect(second.session_id).not.toBe(first.session_id);
    expect(await redis.get(keys.lease(t.tenantId, t.hotspotId))).toBe(ids.a); // B served the sign-in, A still owns the hotspot

    let seen: { code: number; timeout: number | undefined } | null = null;
    await until(async () => {
      seen = await authorizeAtA(nas, mac);
      return seen.code === Code.ACCESS_ACCEPT && (seen.timeout ?? Infinity) <= 10 * 60;
    }, { what: 'A answering with the 10-minute session that replaced the 120-minute one', timeoutMs: 10_000, seen: () => seen });
    console.info(`actor-forwarding: A answered the new session ${Date.now() - signedInAt} ms after B's sign-in returned`);
    // The replaced session is ended: its API view says so, through either process.
    for (const p of [a, b]) {
      await until(async () => (await call(p.base, 'GET', `/v1/sessions/${first.session_id}`, { auth: t.apiKey })).body.status !== 'active',
        { what: 'the replaced session ended' });
    }
  });

  it('a sign-in through B at a mac_auth hotspot A owns: A sends the NAS its CoA', async () => {
    const hs = (await a.service.engine.hotspots.create(t.tenantId, { name: 'Garden', timezone: 'UTC' })).id;
    const put = await call(a.base, 'PUT', `/v1/hotspots/${hs}`, { auth: t.apiKey, body: { portal: { gateway: 'mac_auth' } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const garden = await registerNas(hs);
    await ownedByA(hs);
    const mac = randomMac();
    const s = await verify(b, hs, short, mac);
    const coa = await garden.da.waitFor((r: DaRequest) =>
      r.code === Code.COA_REQUEST && attributeValue(r.packet, Attr.CALLING_STATION_ID)?.toString() === dashed(mac), 5_000);
    expect(coa.signed).toBe(true);
    const timeout = attributeValue(coa.packet, Attr.SESSION_TIMEOUT)!.readUInt32BE(0);
    expect(Math.abs(timeout - (Date.parse(s.expires_at) - Date.now()) / 1000)).toBeLessThan(5);
    expect(await redis.get(keys.lease(t.tenantId, hs))).toBe(ids.a);
  });

  it('an operator\'s extend and disconnect through B reach A\'s actor: answered, applied once, the NAS told', async () => {
    const mac = randomMac();
    const s = await verify(a, t.hotspotId, long, mac);
    expect((await authorizeAtA(nas, mac)).code).toBe(Code.ACCESS_ACCEPT);

    const ext = await call(b.base, 'POST', `/v1/sessions/${s.session_id}/extend`, { auth: t.apiKey, body: { minutes: 30 } });
    expect(ext.status, JSON.stringify(ext.body)).toBe(200);
    // Once: 30 minutes past the old end, not 60.
    expect(Date.parse(ext.body.expires_at) - Date.parse(s.expires_at)).toBe(30 * 60_000);
    expect((await call(a.base, 'GET', `/v1/sessions/${s.session_id}`, { auth: t.apiKey })).body.expires_at).toBe(ext.body.expires_at);

    const from = nas.da.received.length;
    const del = await call(b.base, 'DELETE', `/v1/sessions/${s.session_id}`, { auth: t.apiKey });
    expect(del.status, JSON.stringify(del.body)).toBe(200);
    expect(del.body.status).toBe('disconnected');
    // The owner's actor ended it: its Disconnect-Request reached the NAS, and A refuses the device now.
    await nas.da.waitFor((r) => r.code === Code.DISCONNECT_REQUEST && attributeValue(r.packet, Attr.CALLING_STATION_ID)?.toString() === dashed(mac), 5_000, from);
    expect((await authorizeAtA(nas, mac)).code).toBe(Code.ACCESS_REJECT);
    // Again through B: the session is no longer active (the owner's answer, carried back).
    const again = await call(b.base, 'DELETE', `/v1/sessions/${s.session_id}`, { auth: t.apiKey });
    expect(again.status).toBe(409);
  });

  it('RADIUS sent to B for A\'s hotspot: answered from B\'s port with A\'s actor\'s answer; the lease stays with A', async () => {
    const mac = randomMac();
    const s = await verify(a, t.hotspotId, long, mac);
    // The NAS talks to A too, so A keeps the lease (a holder no NAS packet reached for a lease time yields to B, next in line).
    expect((await authorizeAtA(nas, mac)).code).toBe(Code.ACCESS_ACCEPT);
    // B learns of the NAS (registered through A) at its registry's next refresh: until then it drops the NAS's packets.
    let viaB: Awaited<ReturnType<typeof authorizeAt>> = null;
    await until(async () => (viaB = await authorizeAt(b, nas, mac, 1_000)) !== null, { what: 'B answering the NAS', timeoutMs: 20_000 });
    expect(viaB!.code).toBe(Code.ACCESS_ACCEPT);
    expect(viaB!.port).toBe(b.service.radiusPorts.auth); // RFC 5080: from the address and port the request went to
    expect(Math.abs(viaB!.timeout! - (Date.parse(s.expires_at) - Date.now()) / 1000)).toBeLessThan(5);
    // Accounting through B reaches A's actor: the Interim-Update's counters are the session's.
    const acct = accountingRequest({ secret: nas.secret, id: nas.nextId(), status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac),
      acctSessionId: `acct-${randomBytes(4).toString('hex')}`, inputOctets: 123_456, outputOctets: 654_321 });
    await nas.radius.send(acct, b.service.radiusPorts.acct);
    let answered = null as Awaited<ReturnType<TestNas['next']>>;
    while ((answered = await nas.radius.next(5_000)) && decodePacket(answered.msg)?.identifier !== acct[1]);
    expect(answered && decodePacket(answered.msg)?.code).toBe(Code.ACCOUNTING_RESPONSE);
    expect(answered!.rinfo.port).toBe(b.service.radiusPorts.acct);
    const live = await call(b.base, 'GET', `/v1/sessions/${s.session_id}`, { auth: t.apiKey });
    expect({ in: live.body.bytes_in + live.body.bytes_out }).toEqual({ in: 123_456 + 654_321 });
    expect(await redis.get(keys.lease(t.tenantId, t.hotspotId))).toBe(ids.a);

    // The added latency, sequential requests on loopback (busy machine: the ratio, not the figures).
    const times = async (to: Running): Promise<number[]> => {
      const out: number[] = [];
      for (let i = 0; i < 40; i++) {
        const at = process.hrtime.bigint();
        expect((await authorizeAt(to, nas, mac))?.code).toBe(Code.ACCESS_ACCEPT);
        out.push(Number(process.hrtime.bigint() - at) / 1e6);
      }
      return out.sort((x, y) => x - y);
    };
    const direct = await times(a);
    const forwarded = await times(b);
    const q = (xs: number[], f: number) => xs[Math.min(xs.length - 1, Math.floor(xs.length * f))]!.toFixed(2);
    console.info(`actor-forwarding: Access-Request round trip, owner A p50 ${q(direct, 0.5)} p90 ${q(direct, 0.9)} ms; through B p50 ${q(forwarded, 0.5)} p90 ${q(forwarded, 0.9)} ms`);
  });
});
