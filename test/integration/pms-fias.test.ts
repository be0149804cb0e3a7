import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Attr, Code, RadiusCrypto, attributeValue, checkFraming, type RadiusPacket } from '../../radius/index.js';
import { accessRequest } from '../radius/helpers.js';
import { createLogger } from '../../engine/logger.js';
import { OutboundPolicy } from '../../engine/net/outbound-target.js';
import { FiasLink } from '../../engine/pms/fias/fias-link.js';
import { FiasSimulator, type SimGuest } from '../support/fias-simulator.js';
import { call, dashed, keys, macs, newTenant, startService, until, type Running, type Tenant } from '../support/fixture.js';
import { addCoaNas, type CoaNas } from '../support/loopback-nas.js';

/**
 * Room sign-in against a FIAS simulator on loopback (test/support/fias-simulator.ts):
 * the real engine holds the link, keeps the in-house list in Redis, signs
 * guests in through the portal route, and ends a checked-out reservation's
 * sessions with a Disconnect-Request at a test NAS. Before engine/pms there
 * was no /pms/verify route and no link: every test here fails on the old code.
 *
 * Timers are short (PMS_KEEPALIVE_SEC=1: dead after 3 s) so a silent PMS shows in
 * seconds; PMS_STALE_AFTER_SEC is long (600) so only the link's own state can
 * stop the list being trusted here. Every wait is for the state itself.
 */

const rc = new RadiusCrypto();
const randomMac = macs();
const text = (p: RadiusPacket, type: number) => attributeValue(p, type)?.toString();

interface Hotel { t: Tenant; sim: FiasSimulator; nas: CoaNas }

describe('room sign-in over Oracle FIAS', () => {
  let svc: Running;
  const opened: { close(): Promise<void> }[] = [];
  const suffix = randomBytes(3).toString('hex').toUpperCase();

  beforeAll(async () => {
    svc = await startService({ PMS_HOLD_LINKS: 'true', PMS_KEEPALIVE_SEC: '1', PMS_STALE_AFTER_SEC: '600', PMS_LEASE_MS: '1500', PMS_RECONNECT_MAX_SEC: '1' });
  });
  afterAll(async () => {
    await svc?.stop();
    for (const o of opened) await o.close();
  });

  /** A tenant with a hotspot, a test NAS (RADIUS client and Dynamic Authorization listener) and a FIAS simulator linked to it. */
  async function hotel(resyncAfterGapSec: number, guests: SimGuest[]): Promise<Hotel> {
    const t = await newTenant(svc.service, 'Hotel');
    const sim = await FiasSimulator.start();
    opened.push(sim);
    for (const g of guests) sim.checkIn(g);
    const nas = await addCoaNas(svc.base, t);
    opened.push(nas.radius, nas.da);
    const put = await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}/pms`, {
      auth: t.apiKey, body: { host: '127.0.0.1', port: sim.port, resync_after_gap_sec: resyncAfterGapSec },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ protocol: 'fias', host: '127.0.0.1', port: sim.port, enabled: true });
    // The first link start asks for a database resync (never synced): the list is trusted after its DE.
    await until(async () => (await link(t)).status.accepting_sign_ins === true, { what: 'first resync', seen: () => link(t) });
    expect(sim.sent('DR')).toHaveLength(1);
    return { t, sim, nas };
  }

  async function link(t: Tenant): Promise<any> {
    const r = await call(svc.base, 'GET', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey });
    expect(r.status).toBe(200);
    return r.body;
  }

  const verify = (h: Hotel, room: string, surname: string, mac: string) =>
    call(svc.base, 'POST', `/api/v1/hotspot-portal/pms/verify?hotspot_id=${h.t.hotspotId}`, { body: { room, surname, mac, ip: '10.30.0.9' } });

  const redis = () => svc.service.engine.redis;
  const guestRoom = async (h: Hotel, reservation: string): Promise<string | null> => {
    const j = await redis().hget(keys.pmsGuests(h.t.tenantId, h.t.hotspotId), reservation);
    return j ? (JSON.parse(j) as { rn: string }).rn : null;
  };

  /** An Access-Request for the device from the hotel's NAS; Accept or Reject. */
  async function authorize(h: Hotel, mac: string): Promise<number> {
    const req = accessRequest({ secret: h.nas.secret, id: h.nas.nextId(), callingStationId: dashed(mac) });
    await h.nas.radius.send(req, svc.service.radiusPorts.auth);
    const end = Date.now() + 5000;
    for (;;) {
      const got = await h.nas.radius.next(Math.max(1, end - Date.now()));
      if (!got) throw new Error('no reply to an Access-Request');
      const len = checkFraming(got.msg);
      if (len > 0 && got.msg[1] === req[1] && rc.verifyResponseAuthenticator(got.msg, len, req.subarray(4, 20), h.nas.secret)) return got.msg[0]!;
    }
  }

  const disconnectOf = (mac: string) => (r: { code: number; packet: RadiusPacket }) =>
    r.code === Code.DISCONNECT_REQUEST && text(r.packet, Attr.CALLING_STATION_ID) === dashed(mac);

  const sessionStatus = async (h: Hotel, sid: string): Promise<string> => {
    const live = await redis().zscore(keys.live(h.t.tenantId, h.t.hotspotId), sid);
    return live === null ? 'ended' : 'live';
  };

  it('check-in, sign-in with a folded surname, check-out ends the session with a Disconnect-Request within 10 s', async () => {
    const h = await hotel(3600, []);
    const mac = randomMac();
    expect((await verify(h, '101', 'Köhler', mac)).body.error).toBe('pms_guest_not_found');

    h.sim.checkIn({ reservation: `K${suffix}`, room: '101', name: 'KÖHLER, A' });
    await until(async () => (await guestRoom(h, `K${suffix}`)) === '101', { what: 'GI applied' });
    const ok = await verify(h, ' 101 ', 'Koehler', mac);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ status: 'authorized', uses_left: null });
    expect(ok.body.session_id).toMatch(/^sess_/);
    // The session and its audit record name the room, never the surname.
    const grant = await redis().hgetall(keys.grant(h.t.tenantId, h.t.hotspotId, mac));
    expect(Object.values(grant).join(' ')).not.toMatch(/k(ö|oe|o)hler/i);
    expect(Object.values(grant)).toContain('room:101');
    expect(await authorize(h, mac)).toBe(Code.ACCESS_ACCEPT);

    const from = h.nas.da.received.length;
    const t0 = Date.now();
    h.sim.checkOut(`K${suffix}`);
    const dr = await h.nas.da.waitFor(disconnectOf(mac), 10_000, from);
    expect(dr.signed).toBe(true);
    expect(Date.now() - t0).toBeLessThan(10_000);
    await until(async () => (await sessionStatus(h, ok.body.session_id)) === 'ended', { what: 'session ended' });
    expect(await authorize(h, mac)).toBe(Code.ACCESS_REJECT);
    expect((await verify(h, '101', 'Köhler', randomMac())).status).toBe(401);
  });

  it("a room sign-in's session takes its terms from the tenant's sessions.pms settings", async () => {
    const h = await hotel(3600, [{ reservation: `T${suffix}`, room: '120', name: 'ŞAHİN' }]);
    const put = await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: h.t.apiKey, body: { methods: ['voucher'], sessions: { pms: { session_minutes: 90, bandwidth_down_mbps: 5 } } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    const before = Date.now();
    const ok = await verify(h, '120', 'Sahin', randomMac());
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const until_ = Date.parse(ok.body.expires_at);
    expect(until_).toBeGreaterThanOrEqual(before + 90 * 60_000 - 1000);
    expect(until_).toBeLessThanOrEqual(Date.now() + 90 * 60_000 + 1000);
  });

  it("a share's check-out ends only its own reservation's sessions; the other guest stays online", async () => {
    const h = await hotel(3600, [
      { reservation: `S1${suffix}`, room: '202', name: 'SCHMIDT', share: true },
      { reservation: `S2${suffix}`, room: '202', name: 'Yıldız', share: true },
    ]);
    const [a, b] = [randomMac(), randomMac()];
    const sa = await verify(h, '202', 'schmidt', a);
    const sb = await verify(h, '202', 'YILDIZ', b);
    expect([sa.status, sb.status]).toEqual([200, 200]);
    expect(await authorize(h, a)).toBe(Code.ACCESS_ACCEPT);
    expect(await authorize(h, b)).toBe(Code.ACCESS_ACCEPT);

    const from = h.nas.da.received.length;
    h.sim.checkOut(`S1${suffix}`);
    await h.nas.da.waitFor(disconnectOf(a), 10_000, from);
    // Records apply in order, each check-out's ends awaited: once a later record shows, the check-out is done.
    h.sim.checkIn({ reservation: `S3${suffix}`, room: '203', name: 'Later' });
    await until(async () => (await guestRoom(h, `S3${suffix}`)) === '203', { what: 'later record applied' });
    expect(await sessionStatus(h, sb.body.session_id)).toBe('live');
    expect(h.nas.da.received.slice(from).some(disconnectOf(b))).toBe(false);
    expect(await authorize(h, b)).toBe(Code.ACCESS_ACCEPT);
    expect((await verify(h, '202', 'Schmidt', randomMac())).status).toBe(401);
    expect((await verify(h, '202', 'Yildiz', randomMac())).status).toBe(200);
  });

  it('a room move (GC with RO) moves the live sessions: the new room signs in, the old does not, the check-out still ends them', async () => {
    const h = await hotel(3600, [{ reservation: `M${suffix}`, room: '303', name: 'Işık' }]);
    const first = randomMac();
    const s1 = await verify(h, '303', 'ISIK', first);
    expect(s1.status).toBe(200);
    expect(await authorize(h, first)).toBe(Code.ACCESS_ACCEPT);

    h.sim.move(`M${suffix}`, '304');
    await until(async () => (await guestRoom(h, `M${suffix}`)) === '304', { what: 'GC applied' });
    expect(await redis().sismember(keys.pmsRoom(h.t.tenantId, h.t.hotspotId, '303'), `M${suffix}`)).toBe(0);
    expect(await sessionStatus(h, s1.body.session_id)).toBe('live');
    expect((await verify(h, '303', 'Işık', randomMac())).status).toBe(401);
    const second = randomMac();
    expect((await verify(h, '304', 'isik', second)).status).toBe(200);
    expect(await authorize(h, second)).toBe(Code.ACCESS_ACCEPT);

    const from = h.nas.da.received.length;
    h.sim.checkOut(`M${suffix}`);
    await h.nas.da.waitFor(disconnectOf(first), 10_000, from);
    await h.nas.da.waitFor(disconnectOf(second), 10_000, from);
  });

  it('a guest without a reservation number (no G#) who moves rooms is keyed by the new room: a GO naming it ends the session', async () => {
    const h = await hotel(3600, [{ reservation: `N${suffix}`, room: '101', name: 'Novak', noNumber: true }]);
    const mac = randomMac();
    const s = await verify(h, '101', 'Novak', mac);
    expect(s.status).toBe(200);
    expect(await authorize(h, mac)).toBe(Code.ACCESS_ACCEPT);

    h.sim.move(`N${suffix}`, '205');
    await until(async () => (await guestRoom(h, 'RN:205')) === '205', { what: 'GC without G# applied' });
    expect(await guestRoom(h, 'RN:101')).toBeNull();
    // The old room is free for a guest of its own, not the moved guest's key.
    h.sim.checkIn({ reservation: `P${suffix}`, room: '101', name: 'Price', noNumber: true });
    await until(async () => (await guestRoom(h, 'RN:101')) === '101', { what: 'new guest in 101' });

    const from = h.nas.da.received.length;
    h.sim.checkOut(`N${suffix}`);
    await h.nas.da.waitFor(disconnectOf(mac), 10_000, from);
    await until(async () => (await guestRoom(h, 'RN:205')) === null, { what: 'GO without G# applied' });
    expect(await guestRoom(h, 'RN:101')).toBe('101');
  });

  it('a link cut answers pms_unavailable as soon as it is seen, well inside PMS_STALE_AFTER_SEC, and recovers by itself, with no resync after a short gap', async () => {
    const h = await hotel(3600, [{ reservation: `C${suffix}`, room: '405', name: 'Demir' }]);
    expect((await verify(h, '405', 'Demir', randomMac())).status).toBe(200);
    const connsBefore = h.sim.connections;

    h.sim.cut();
    // The holder sees the connection close: not trusted from then on, though the PMS was heard far less than
    // PMS_STALE_AFTER_SEC (600 s here) ago.
    await until(async () => (await link(h.t)).status.accepting_sign_ins === false, { what: 'list no longer trusted', timeoutMs: 20_000 });
    expect((await link(h.t)).status.link).toBe('down');
    const guesser = randomMac();
    const down = await verify(h, '405', 'Nobody', guesser);
    expect(down.status).toBe(503);
    expect(down.body.error).toBe('pms_unavailable');
    // An unavailable answer spends no guess: the list was never read.
    expect(await redis().zcard(keys.pmsGuessesByDevice(h.t.tenantId, h.t.hotspotId, guesser))).toBe(0);

    h.sim.restore();
    await h.sim.waitFor(() => h.sim.linked && h.sim.connections > connsBefore, 20_000, 'reconnection');
    await until(async () => (await link(h.t)).status.accepting_sign_ins === true, { what: 'trusted again' });
    expect((await verify(h, '405', 'demir', randomMac())).status).toBe(200);
    // The gap was shorter than resync_after_gap_sec: no DR on the new connection, nor ever periodically.
    expect(h.sim.sent('DR', connsBefore)).toHaveLength(0);
    expect(h.sim.sent('DR')).toHaveLength(1);
  });

  it('a connection the PMS closes before the link is up (another still open, a lease changing hands) is no cut: linkDown is not called', async () => {
    const h = await hotel(3600, [{ reservation: `R${suffix}`, room: '406', name: 'Yildiz' }]);
    // A second FIAS client for the same PMS, as a process that has just taken the lease while the stalled
    // holder's connection is still open: the interface, one connection at a time, closes the newcomer at once.
    const said: string[] = [];
    const second = new FiasLink(
      { host: '127.0.0.1', port: h.sim.port, keepAliveMs: 60_000, deadAfterMs: 180_000, maxBackoffMs: 1000, now: Date.now },
      new OutboundPolicy({ allowPrivate: true }),
      {
        linkUp: async () => { said.push('up'); }, linkDown: async (why) => { said.push(`down ${why}`); }, alive: () => undefined,
        resyncWanted: async () => false, checkIn: async () => undefined, checkOut: async () => undefined, change: async () => undefined,
        resyncStart: async () => undefined, resyncGuest: async () => undefined, resyncEnd: async () => undefined,
      },
      createLogger('silent'),
    );
    const refused = h.sim.refused;
    second.start();
    // Refused twice: the second is its reconnection, which its close handler schedules after any linkDown.
    await h.sim.waitFor(() => h.sim.refused >= refused + 2, 20_000, 'two refused connections');
    await second.close();
    expect(said).toEqual([]);
    expect((await link(h.t)).status.accepting_sign_ins).toBe(true);
    expect((await verify(h, '406', 'Yildiz', randomMac())).status).toBe(200);
  });

  it('keeps the link alive with LS/LA, and a PMS that falls silent is declared dead and dialled again', async () => {
    const h = await hotel(3600, [{ reservation: `D${suffix}`, room: '707', name: 'Aydın' }]);
    const conn = h.sim.connections;
    // Idle for a keep-alive period: the engine probes with LS on the same connection, the PMS answers LA.
    const probes = () => h.sim.received.filter((x) => x.conn === conn && x.r.type === 'LS').length;
    const first = probes();
    await h.sim.waitFor(() => probes() >= first + 2, 15_000, 'keep-alive probes');
    expect(h.sim.connections).toBe(conn);

    // Silent but connected: no answer for three periods, the socket is closed and opened again.
    h.sim.mute = true;
    await h.sim.waitFor(() => h.sim.connections > conn, 20_000, 'reconnection after the dead-link time');
    h.sim.mute = false;
    await h.sim.waitFor(() => h.sim.linked, 20_000, 'link up again');
    await until(async () => (await link(h.t)).status.accepting_sign_ins === true, { what: 'trusted again' });
    expect((await verify(h, '707', 'AYDIN', randomMac())).status).toBe(200);
  });

  it('a stall of the engine itself (a GC pause, a machine short of CPU) is no silence of the PMS: the link stays up', async () => {
    // A service of its own with a lease longer than the stall: with this file's 1.5 s lease, another file's process
    // holding links could take the hotel over while this one does not run, which is no question of the dead-link time.
    const own = await startService({ PMS_HOLD_LINKS: 'true', PMS_KEEPALIVE_SEC: '1', PMS_STALE_AFTER_SEC: '600', PMS_LEASE_MS: '60000', PMS_RECONNECT_MAX_SEC: '1' });
    try {
      const t = await newTenant(own.service, 'Hotel');
      const sim = await FiasSimulator.start();
      opened.push(sim);
      sim.checkIn({ reservation: `W${suffix}`, room: '808', name: 'Wait' });
      const put = await call(own.base, 'PUT', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey, body: { host: '127.0.0.1', port: sim.port } });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      const accepting = async () => (await call(own.base, 'GET', `/v1/hotspots/${t.hotspotId}/pms`, { auth: t.apiKey })).body.status?.accepting_sign_ins === true;
      await until(accepting, { what: 'first resync' });
      const conn = sim.connections;
      const probes = () => sim.received.filter((x) => x.conn === conn && x.r.type === 'LS').length;
      // This process (the engine and the simulator in it) does not run for longer than the dead-link time (3 s):
      // the simulator's answers and the engine's timers all wait, as on a machine that gave neither a CPU.
      const stallEnd = Date.now() + 3_500;
      while (Date.now() < stallEnd) { /* not running */ }
      const before = probes();
      // Running again, the engine goes on probing the same connection (a link declared dead would be dialled again).
      await sim.waitFor(() => probes() >= before + 2, 15_000, 'keep-alive probes after the stall');
      expect(sim.connections).toBe(conn);
      expect(await accepting()).toBe(true);
    } finally {
      await own.stop();
    }
  });

  it('a resync after a long gap reconciles by difference: gone guests checked out, new ones added, unchanged ones untouched', async () => {
    const stay = { reservation: `R1${suffix}`, room: '501', name: 'STAYS, B' };
    const leave = { reservation: `R2${suffix}`, room: '502', name: 'LEAVES' };
    const h = await hotel(1, [stay, leave]);
    const [ms, ml] = [randomMac(), randomMac()];
    const ss = await verify(h, '501', 'Stays', ms);
    const sl = await verify(h, '502', 'Leaves', ml);
    expect([ss.status, sl.status]).toEqual([200, 200]);
    expect(await authorize(h, ms)).toBe(Code.ACCESS_ACCEPT);
    expect(await authorize(h, ml)).toBe(Code.ACCESS_ACCEPT);
    const stayJson = await redis().hget(keys.pmsGuests(h.t.tenantId, h.t.hotspotId), stay.reservation);
    const connsBefore = h.sim.connections;

    // While the link is down the PMS's list changes and nobody tells us.
    h.sim.cut();
    h.sim.guests.delete(leave.reservation);
    h.sim.guests.set(`R3${suffix}`, { reservation: `R3${suffix}`, room: '503', name: 'ARRIVES' });
    // A gap longer than resync_after_gap_sec (1 s) since the PMS was last heard.
    await until(async () => {
      const st = (await link(h.t)).status;
      return st.link === 'down' && Date.now() - Date.parse(st.last_heard_at) > 1500;
    }, { what: 'a long gap', timeoutMs: 20_000 });
    expect((await verify(h, '503', 'Arrives', randomMac())).status).not.toBe(200);

    const from = h.nas.da.received.length;
    h.sim.restore();
    // Down longer than resync_after_gap_sec (1 s): the new link start asks for a resync.
    await h.sim.waitFor(() => h.sim.sent('DR', connsBefore).length === 1, 20_000, 'DR after the gap');
    await h.nas.da.waitFor(disconnectOf(ml), 10_000, from);
    await until(async () => (await link(h.t)).status.accepting_sign_ins === true, { what: 'resync done' });
    expect(await guestRoom(h, leave.reservation)).toBeNull();
    expect(await guestRoom(h, `R3${suffix}`)).toBe('503');
    expect((await verify(h, '503', 'arrives', randomMac())).status).toBe(200);
    // The guest who stayed: record as it was, session and its tie to the reservation kept.
    expect(await redis().hget(keys.pmsGuests(h.t.tenantId, h.t.hotspotId), stay.reservation)).toBe(stayJson);
    expect(await sessionStatus(h, ss.body.session_id)).toBe('live');
    expect(await redis().smembers(keys.pmsSessions(h.t.tenantId, h.t.hotspotId, stay.reservation))).toContain(ss.body.session_id);
    expect(h.nas.da.received.slice(from).some(disconnectOf(ms))).toBe(false);
    expect(await authorize(h, ms)).toBe(Code.ACCESS_ACCEPT);
    expect((await link(h.t)).status.guests_in_house).toBe(2);
  });
});
