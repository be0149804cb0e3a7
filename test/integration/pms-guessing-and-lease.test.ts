import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attr, Code, attributeValue } from '../../radius/index.js';
import { accessRequest } from '../radius/helpers.js';
import { FiasSimulator } from '../support/fias-simulator.js';
import { call, dashed, keys, macs, newTenant, startService, until, type Running, type Tenant } from '../support/fixture.js';
import { addCoaNas } from '../support/loopback-nas.js';

/**
 * Room sign-in's defences around the in-house list: the guessing limits per
 * device and per source address (so room and surname cannot be enumerated),
 * the link settings' outbound check, and one FIAS connection per hotel
 * across engine processes (the Redis lease), taken over when its holder goes.
 */

const randomMac = macs();
/**
 * A short lease, so hand-overs and take-overs happen within a test. The link's liveness (keep-alive, dead-link
 * time, staleness) is pms-fias.test.ts's and keeps its defaults here: no sign-in of these tests depends on a
 * keep-alive answered within a few seconds on a machine short of CPU.
 */
const ENV = { PMS_HOLD_LINKS: 'true', PMS_LEASE_MS: '1500', PMS_RECONNECT_MAX_SEC: '1', ACTOR_THREADS: '1' };

describe('room sign-in: guessing limits, outbound check, one link holder', () => {
  let a: Running;
  let b: Running;
  const sims: { close(): Promise<void> }[] = [];

  beforeAll(async () => {
    [a, b] = await Promise.all([startService(ENV), startService(ENV)]);
  });
  afterAll(async () => {
    // One of them was stopped by the lease test already.
    await Promise.allSettled([a?.stop(), b?.stop()]);
    for (const s of sims) await s.close();
  });

  async function linkedHotel(via: Running, guests: { reservation: string; room: string; name: string }[]): Promise<{ t: Tenant; sim: FiasSimulator }> {
    const t = await newTenant(via.service, 'Hotel');
    const sim = await FiasSimulator.start();
    sims.push(sim);
    for (const g of guests) sim.checkIn(g);
    const put = await call(via.base, 'PUT', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey, body: { host: '127.0.0.1', port: sim.port } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await until(async () => (await call(via.base, 'GET', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey })).body.status?.accepting_sign_ins === true,
      { what: 'link synced' });
    return { t, sim };
  }

  const verify = (via: Running, t: Tenant, body: Record<string, unknown>) =>
    call(via.base, 'POST', `/api/v1/hotspot-portal/pms/verify?hotspot_id=${t.hotspotId}`, { body });

  it('a device gets 10 misses, then 429 too_many_attempts even with the right surname; matches spend nothing', async () => {
    const { t } = await linkedHotel(a, [{ reservation: 'G1', room: '110', name: 'AKSOY' }]);
    // Matches give their place back: one device signs in again and again.
    const regular = randomMac();
    for (let i = 0; i < 12; i++) expect((await verify(a, t, { room: '110', surname: 'Aksoy', mac: regular })).status).toBe(200);

    const device = randomMac();
    for (let i = 0; i < 10; i++) {
      const miss = await verify(a, t, { room: String(100 + i), surname: 'Aksoy', mac: device, ip: `10.9.0.${i + 1}` });
      expect(miss.status, JSON.stringify(miss.body)).toBe(401);
      expect(miss.body.error).toBe('pms_guest_not_found');
    }
    const limited = await verify(a, t, { room: '110', surname: 'Aksoy', mac: device });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ error: 'too_many_attempts', retry_after: expect.any(Number) });
    expect(limited.headers.get('retry-after')).toBe(String(limited.body.retry_after));
    expect(await a.service.engine.redis.exists(keys.grant(t.tenantId, t.hotspotId, device))).toBe(0);
    expect((await verify(a, t, { room: '110', surname: 'Aksoy', mac: randomMac() })).status).toBe(200);
  });

  it("the source address is limited across devices (the socket's peer, never the body's ip)", async () => {
    const { t } = await linkedHotel(a, [{ reservation: 'G2', room: '220', name: 'POLAT' }]);
    const s = await call(a.base, 'PUT', '/v1/settings/sign-in', { auth: t.apiKey, body: { methods: ['voucher'], guessing: { per_device: 100, per_address: 4 } } });
    expect(s.status, JSON.stringify(s.body)).toBe(200);
    await until(async () => {
      // The settings are cached briefly; wait until the new limit is the one applied.
      const r = await verify(a, t, { room: '999', surname: 'X', mac: randomMac(), ip: '10.8.0.1' });
      return r.status === 429;
    }, { what: 'the address limit applied' });
    const refused = await verify(a, t, { room: '220', surname: 'Polat', mac: randomMac(), ip: '10.8.0.200' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('too_many_attempts');
  });

  it('a room sign-in right after the link is saved answers 503 pms_unavailable until it is synced, never 403', async () => {
    const t = await newTenant(a.service, 'Hotel');
    // Nothing listens there: the link is saved and enabled, and never comes up.
    const put = await call(a.base, 'PUT', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey, body: { host: '127.0.0.1', port: 9 } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const r = await verify(a, t, { room: '101', surname: 'Kaya', mac: randomMac() });
    expect([r.status, r.body.error]).toEqual([503, 'pms_unavailable']);
  });

  it('refuses a private PMS host without ALLOW_PRIVATE_TARGETS and a metadata address always (400 target_not_allowed)', async () => {
    const t = await newTenant(a.service, 'Hotel');
    const meta = await call(a.base, 'PUT', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey, body: { host: '169.254.169.254', port: 5010 } });
    expect(meta.status).toBe(400);
    expect(meta.body.error).toBe('target_not_allowed');
    const strict = await startService({ ...ENV, ALLOW_PRIVATE_TARGETS: 'false' });
    try {
      const t2 = await newTenant(strict.service, 'Hotel');
      const r = await call(strict.base, 'PUT', `/v1/hotspots/${t2.hotspotId}/pms`, { auth: t2.apiKey, body: { host: '10.1.2.3', port: 5010 } });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('target_not_allowed');
      expect((await call(strict.base, 'GET', `/v1/hotspots/${t2.hotspotId}/pms`, { auth: t2.apiKey })).status).toBe(404);
    } finally {
      await strict.stop();
    }
  });

  it("a held link's lease is renewed while Postgres keeps the holder's scans waiting: no other process connects", async () => {
    const { t, sim } = await linkedHotel(a, [{ reservation: 'S1', room: '330', name: 'ŞAHİN' }]);
    const lease = keys.pmsLease(t.tenantId, t.hotspotId);
    const holderId = await a.service.engine.redis.get(lease);
    const holder = [a, b].find((x) => x.service.engine.config.nodeId === holderId)!;
    expect(holder).toBeDefined();
    const connections = sim.connections;
    // Postgres answers the holder's reads of the links only after two lease periods (a slow or stalled database).
    const pool = holder.service.engine.pool as unknown as { query: (text: unknown, ...rest: unknown[]) => Promise<unknown> };
    const query = pool.query.bind(pool);
    let answer!: () => void;
    const stalled = new Promise<void>((resolve) => { answer = resolve; });
    pool.query = (text, ...rest) => (typeof text === 'string' && text.includes('FROM pms_links') ? stalled.then(() => query(text, ...rest)) : query(text, ...rest));
    try {
      await sleep(2 * Number(ENV.PMS_LEASE_MS));
      expect(await a.service.engine.redis.get(lease)).toBe(holderId);
      expect([sim.connections, sim.refused, sim.linked]).toEqual([connections, 0, true]);
    } finally {
      pool.query = query;
      answer();
    }
  });

  it("a check-out applied by a process that does not own the hotspot's sessions still ends them (forwarded to the owner, else the end queue)", async () => {
    const { t, sim } = await linkedHotel(a, [{ reservation: 'Q1', room: '440', name: 'ÖZTÜRK' }]);
    // The sessions' owner is a process that holds no links, so it never asks for this one: the link stays with its
    // holder whenever the check-out comes (an owner that holds links would take it over within a scan, a race).
    const owner = await startService({ ...ENV, PMS_HOLD_LINKS: 'false' });
    try {
      const { secret, radius, da } = await addCoaNas(owner.base, t);
      sims.push(radius, da);
      const mac = randomMac();
      expect((await verify(owner, t, { room: '440', surname: 'Ozturk', mac })).status).toBe(200);
      const req = accessRequest({ secret, id: 7, callingStationId: dashed(mac) });
      await radius.send(req, owner.service.radiusPorts.auth);
      const reply = await radius.next(5000);
      expect(reply?.msg[0]).toBe(Code.ACCESS_ACCEPT);
      const ownerId = owner.service.engine.config.nodeId;
      // The sign-in wakes the hotspot's actor there; it takes the lease as it starts (not before the answer).
      await until(async () => (await a.service.engine.redis.get(keys.lease(t.tenantId, t.hotspotId))) === ownerId, { what: 'the owner holds the hotspot' });
      const holder = await a.service.engine.redis.get(keys.pmsLease(t.tenantId, t.hotspotId));
      expect(holder).not.toBe(ownerId);

      // Counted from here: the owner, new, may own other files' hotspots too (it woke those with live sessions).
      const handed = (): number => owner.service.engine.metrics.value('actor_messages_received_total', 'disconnect')
        + [a, b].reduce((n, x) => n + x.service.engine.metrics.value('pms_checkout_ends_total', 'queued'), 0);
      const handedBefore = handed();
      sim.checkOut('Q1');
      const dr = await da.waitFor((r) => r.code === Code.DISCONNECT_REQUEST && attributeValue(r.packet, Attr.CALLING_STATION_ID)?.toString() === dashed(mac), 10_000);
      expect(dr.signed).toBe(true);
      // When this file's a or b held the link, it handed the end to the owner: its disconnect forwarded to the owner's
      // actor (docs/scale.md, "Forwarding"; the owner counts it received before its actor sends the Disconnect-Request),
      // or, when that failed, the hotel's end queue the owner drains (counted by the holder once queued: waited for).
      // A foreign holder does the same, unseen.
      if ([a, b].some((x) => x.service.engine.config.nodeId === holder)) {
        await until(async () => handed() > handedBefore, { what: 'the end handed to the owner' });
      }
    } finally {
      await owner.stop();
    }
  });

  it('a holder that lets the link go on purpose (a stop, a hand-over) leaves the list trusted: sign-ins go on while the next one links', async () => {
    // A process of its own saves the link and so takes it at once (the other processes leave a link just saved to its saver).
    const h = await startService(ENV);
    let stopped = false;
    try {
      const { t } = await linkedHotel(h, [{ reservation: 'S1', room: '550', name: 'ŞAHİN' }]);
      expect(await a.service.engine.redis.get(keys.pmsLease(t.tenantId, t.hotspotId))).toBe(h.service.engine.config.nodeId);
      await h.stop(); // LE sent, lease given back: no cut
      stopped = true;
      expect(await a.service.engine.redis.hget(keys.pmsState(t.tenantId, t.hotspotId), 'up')).toBe('1');
      expect((await verify(a, t, { room: '550', surname: 'Sahin', mac: randomMac() })).status).toBe(200);
    } finally {
      if (!stopped) await h.stop();
    }
  });

  it('one process holds a hotel link (lease), the one owning the hotspot once it has sessions; another takes over when it stops', async () => {
    const { t, sim } = await linkedHotel(a, [{ reservation: 'G3', room: '330', name: 'KAYA' }]);
    const redis = a.service.engine.redis;
    const pmsLease = keys.pmsLease(t.tenantId, t.hotspotId);
    // Any process may hold it so far (this file's or another's: they share Redis and Postgres).
    expect(await redis.get(pmsLease)).toBeTruthy();

    // A sign-in through b wakes the hotspot's actor there: b owns the sessions, and the link follows it.
    expect((await verify(b, t, { room: '330', surname: 'Kaya', mac: randomMac() })).status).toBe(200);
    const bId = b.service.engine.config.nodeId;
    await until(async () => (await redis.get(keys.lease(t.tenantId, t.hotspotId))) === bId, { what: 'b owns the hotspot' });
    await until(async () => (await redis.get(pmsLease)) === bId && sim.linked, { what: 'the link handed to b', timeoutMs: 20_000 });
    const connections = sim.connections;

    await b.stop(); // LE sent, lease given back
    expect(sim.sent('LE').length).toBeGreaterThanOrEqual(1);
    await sim.waitFor(() => sim.linked && sim.connections > connections, 20_000, 'takeover');
    const holder = await redis.get(pmsLease);
    expect(holder).toBeTruthy();
    expect(holder).not.toBe(bId);
    expect((await verify(a, t, { room: '330', surname: 'Kaya', mac: randomMac() })).status).toBe(200);
  });
});
