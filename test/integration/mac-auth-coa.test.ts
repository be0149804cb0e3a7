import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attr, Code, ErrorCause, attributeValue } from '../../radius/index.js';
import { DynamicAuthListener, type DaRequest } from '../radius/dynamic-auth-listener.js';
import { TestNas, accessRequest, sleep } from '../radius/helpers.js';
import { call, dashed, macs, newTenant, newVoucher, type Running, startService, type Tenant, type Voucher } from '../support/fixture.js';
import { addCoaNas, type CoaNas } from '../support/loopback-nas.js';

/**
 * MAC authentication has nothing to hand back to the gateway: the NAS asks
 * RADIUS by MAC. A NAS that already holds a (walled-garden) session for the
 * device would only ask at the next association, so after a portal sign-in
 * that starts a new session at a `gateway: 'mac_auth'` hotspot the engine
 * sends the hotspot's NAS a CoA-Request naming the device, with the new
 * session's Session-Timeout.
 *
 * Each test NAS listens on its own random 127.0.0.0/8 address (NAS addresses
 * are unique across the service, and other files register theirs at the same time).
 */

/** How long "no CoA" is waited for: far above a loopback round trip through the engine and its actor. */
const SILENCE_MS = 1000;
const DURATION_MIN = 60;
const randomMac = macs();

const text = (r: DaRequest, type: number) => attributeValue(r.packet, type)?.toString();
const u32 = (r: DaRequest, type: number) => attributeValue(r.packet, type)?.readUInt32BE(0);
const bare = (mac: string) => mac.replace(/:/g, '').toLowerCase();

describe('MAC authentication: a CoA to the NAS after a portal sign-in', () => {
  let svc: Running;
  let t: Tenant;
  let voucher: Voucher;
  /** A hotspot of the same tenant with no gateway set. */
  let plainHotspot: string;
  let macAuthNas: DynamicAuthListener;
  let plainNas: DynamicAuthListener;
  /** The RADIUS client side of the mac_auth hotspot's NAS, and its secret. */
  let macAuthRadius: TestNas;
  let macAuthSecret: string;
  const opened: { close(): Promise<void> }[] = [];

  /** Registers a NAS for the hotspot: a RADIUS client and (its coa_port) a Dynamic Authorization listener on its own address. */
  async function registerNas(hotspotId: string): Promise<CoaNas> {
    const nas = await addCoaNas(svc.base, { apiKey: t.apiKey, hotspotId });
    opened.push(nas.radius, nas.da);
    return nas;
  }

  async function verify(hotspotId: string, mac: string): Promise<{ session_id: string; expires_at: string }> {
    const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hotspotId}`, {
      body: { code: voucher.code, mac, ip: '10.30.0.5', ssid: 'Guest' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  }

  const coaFor = (mac: string) => (r: DaRequest) => r.code === Code.COA_REQUEST && text(r, Attr.CALLING_STATION_ID) === dashed(mac);

  beforeAll(async () => {
    svc = await startService({ LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    t = await newTenant(svc.service, 'MAC Auth Venue');
    const put = await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { portal: { gateway: 'mac_auth' } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.portal.gateway).toBe('mac_auth');
    plainHotspot = (await svc.service.engine.hotspots.create(t.tenantId, { name: 'Terrace', timezone: 'Europe/Istanbul' })).id;
    ({ da: macAuthNas, radius: macAuthRadius, secret: macAuthSecret } = await registerNas(t.hotspotId));
    plainNas = (await registerNas(plainHotspot)).da;
    voucher = await newVoucher(svc.base, t, { duration_minutes: DURATION_MIN });
  });

  afterAll(async () => {
    await Promise.all(opened.map((o) => o.close()));
    await svc?.stop();
  });

  it('a new session sends the hotspot\'s NAS a signed CoA-Request naming the device, with the session\'s Session-Timeout; a reused one sends none', async () => {
    const mac = randomMac();
    const s = await verify(t.hotspotId, mac);
    const coa = await macAuthNas.waitFor(coaFor(mac), 5000);
    expect(coa.signed).toBe(true);
    // As a MAC-authentication NAS names the device: the bare MAC as User-Name.
    expect(text(coa, Attr.USER_NAME)).toBe(bare(mac));
    const timeout = u32(coa, Attr.SESSION_TIMEOUT)!;
    expect(timeout).toBeLessThanOrEqual(DURATION_MIN * 60);
    expect(timeout).toBeGreaterThan(DURATION_MIN * 60 - 15);
    expect(Math.abs(timeout - (Date.parse(s.expires_at) - Date.now()) / 1000)).toBeLessThan(5);
    // Nothing to identify a session the NAS never reported.
    expect(attributeValue(coa.packet, Attr.ACCT_SESSION_ID)).toBeUndefined();

    // The same device again: it gets its live session back, which the NAS already knows of.
    const from = macAuthNas.received.length;
    const again = await verify(t.hotspotId, mac);
    expect(again.session_id).toBe(s.session_id);
    await sleep(SILENCE_MS);
    expect(macAuthNas.received.slice(from).filter(coaFor(mac))).toEqual([]);
  });

  it('a CoA-NAK (no such session at the NAS) is normal: the sign-in stands and nothing is retried', async () => {
    const mac = randomMac();
    macAuthNas.answer = (r) => (coaFor(mac)(r) ? { code: Code.COA_NAK, errorCause: ErrorCause.SESSION_CONTEXT_NOT_FOUND } : { code: r.code + 1 });
    try {
      const s = await verify(t.hotspotId, mac);
      await macAuthNas.waitFor(coaFor(mac), 5000);
      await sleep(SILENCE_MS);
      expect(macAuthNas.received.filter(coaFor(mac))).toHaveLength(1);
      const live = await call(svc.base, 'GET', `/v1/sessions/${s.session_id}`, { auth: t.apiKey });
      expect(live.status).toBe(200);
      expect(live.body.status).toBe('active');
    } finally {
      macAuthNas.answer = (r) => ({ code: r.code + 1 });
    }
  });

  it('a hotspot whose gateway is not mac_auth sends no CoA', async () => {
    const mac = randomMac();
    await verify(plainHotspot, mac);
    await sleep(SILENCE_MS);
    expect(plainNas.received.filter(coaFor(mac))).toEqual([]);
    expect(macAuthNas.received.filter(coaFor(mac))).toEqual([]);
  });

  it('a code the NAS itself sends in an Access-Request sends no CoA: its Access-Accept is the answer', async () => {
    const mac = randomMac();
    const req = accessRequest({ secret: macAuthSecret, id: randomInt(0, 256), userName: voucher.code, password: voucher.code, callingStationId: dashed(mac) });
    await macAuthRadius.send(req, svc.service.radiusPorts.auth);
    const reply = await macAuthRadius.next(5000);
    expect(reply?.msg[0]).toBe(Code.ACCESS_ACCEPT);
    await sleep(SILENCE_MS);
    expect(macAuthNas.received.filter(coaFor(mac))).toEqual([]);
  });
});
