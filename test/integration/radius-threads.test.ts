import { randomBytes, randomInt } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { threadIndex, type MirroredAnswers } from '../../engine/index.js';
import { keys } from '../../engine/redis/keys.js';
import { Code, RadiusCrypto, checkFraming } from '../../radius/index.js';
import { TestNas, accessRequest } from '../radius/helpers.js';
import { call, dashed, macs, newTenant, type Running, startService, until } from '../support/fixture.js';
import { registerOnFreeLoopback } from '../support/loopback-nas.js';

/**
 * Issue 22 item 1: RADIUS_THREADS > 0 puts the UDP ports on several threads
 * (SO_REUSEPORT), each doing the per-packet work; the engine decides on the
 * main thread (docs/radius.md "Threads"). What the split could break: a
 * retransmission answered differently (RFC 5080), a request for a hotspot
 * whose actor lives on another thread, a NAS added after start, a thread's
 * crash losing the port, a stop leaving it bound.
 */
const rc = new RadiusCrypto();
const THREADS = 2;

describe('RADIUS on threads (RADIUS_THREADS=2)', () => {
  let svc: Running;
  let stopped = false;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let net = '';
  const secret = `thr-${randomBytes(10).toString('hex')}`;
  const code = `THREADS-${randomBytes(4).toString('hex').toUpperCase()}`;
  const device = macs();
  const nases: TestNas[] = [];
  let ident = randomInt(0, 256);
  const threads = () => svc.service.radiusThreads!;
  const authPort = () => svc.service.radiusPorts.auth;

  const addNas = (hotspotId: string, body: Record<string, unknown>) =>
    call(svc.base, 'POST', `/v1/hotspots/${hotspotId}/nas-clients`, { auth: t.apiKey, body: { secret, ...body } });
  const open = async (ip: string): Promise<TestNas> => {
    const n = await TestNas.open(ip);
    nases.push(n);
    return n;
  };
  /** A voucher sign-in (PAP, the code as user name and password) for a fresh device. */
  const signInPacket = (mac = device()) => accessRequest({ secret, id: (ident = (ident + 1) & 255), userName: code, password: code, callingStationId: dashed(mac) });
  /** The reply to `pkt`, its Response Authenticator checked. */
  const reply = async (nas: TestNas, pkt: Buffer): Promise<Buffer> => {
    const got = await nas.next(5000);
    expect(got, 'a reply').not.toBeNull();
    const len = checkFraming(got!.msg);
    expect(len > 0 && rc.verifyResponseAuthenticator(got!.msg, len, pkt.subarray(4, 20), secret)).toBe(true);
    expect(got!.msg[1]).toBe(pkt[1]);
    return got!.msg;
  };
  const sessionsOf = async (): Promise<{ mac: string; hotspot_id: string }[]> =>
    (await call(svc.base, 'GET', '/v1/sessions?status=active&limit=100', { auth: t.apiKey })).body.data;

  beforeAll(async () => {
    svc = await startService({ RADIUS_THREADS: String(THREADS), ACTOR_THREADS: '2', LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    t = await newTenant(svc.service, 'Threaded Venue');
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null, duration_minutes: 120 } })).status).toBe(201);
    // Added after the threads started: each thread's copy of the registry must learn of it.
    for (let attempt = 0; attempt < 8 && !net; attempt++) {
      net = `127.${randomInt(16, 250)}.${randomInt(0, 256)}`;
      const r = await addNas(t.hotspotId, { ip: `${net}.0/24` });
      if (r.status === 409) { net = ''; continue; }
      expect(r.status).toBe(201);
    }
    expect(net, 'a free loopback /24').not.toBe('');
  });
  afterAll(async () => {
    for (const n of nases) await n.close();
    if (!stopped) await svc?.stop();
  });

  it('binds the ports on every thread, and the main thread binds none', async () => {
    expect(threads().size).toBe(THREADS);
    expect(threads().listening).toBe(THREADS);
    expect(authPort()).toBeGreaterThan(0);
    expect(svc.service.radius!.ports).toEqual({ auth: 0, acct: 0 });
  });

  it('a retransmission is answered byte for byte as the first time, from many NAS sources spread over the threads', async () => {
    const sources = await Promise.all(Array.from({ length: 24 }, (_, i) => open(`${net}.${i + 2}`)));
    const firsts: Buffer[] = [];
    const packets = sources.map(() => signInPacket());
    await Promise.all(sources.map((n, i) => n.send(packets[i]!, authPort())));
    for (const [i, n] of sources.entries()) firsts.push(await reply(n, packets[i]!));
    for (const f of firsts) expect(f[0]).toBe(Code.ACCESS_ACCEPT);
    const before = threads().stats().duplicatesAnswered;
    // The same datagram again from the same source: the kernel hashes it to the same thread, whose cache answers it.
    await Promise.all(sources.map((n, i) => n.send(packets[i]!, authPort())));
    for (const [i, n] of sources.entries()) expect((await reply(n, packets[i]!)).equals(firsts[i]!)).toBe(true);
    await until(() => threads().stats().duplicatesAnswered - before === sources.length, {
      what: 'every retransmission answered from a duplicate cache', seen: () => threads().stats(),
    });
    // 24 source ports over 2 threads: all on one would be a 1 in 2^23 chance.
    const busy = threads().threadStats().filter((s) => (s?.received.auth ?? 0) > 0).length;
    expect(busy).toBe(THREADS);
  });

  it('an Access-Request for a hotspot whose actor is on either actor thread is answered, and the session is that hotspot\'s', async () => {
    // Hotspots until both actor threads own one.
    const byThread = new Map<number, string>([[threadIndex(t.tenantId, t.hotspotId, 2), t.hotspotId]]);
    while (byThread.size < 2) {
      const h = await call(svc.base, 'POST', '/v1/hotspots', { auth: t.apiKey, body: { name: `Hall ${byThread.size}-${randomInt(1e6)}`, timezone: 'UTC' } });
      expect(h.status).toBe(201);
      byThread.set(threadIndex(t.tenantId, h.body.id as string, 2), h.body.id as string);
    }
    for (const hotspotId of byThread.values()) {
      const { ip } = await registerOnFreeLoopback(svc.base, t.apiKey, hotspotId, (at) => ({ ip: at, secret }));
      const nas = await open(ip);
      const mac = device();
      const pkt = signInPacket(mac);
      await nas.send(pkt, authPort());
      expect((await reply(nas, pkt))[0]).toBe(Code.ACCESS_ACCEPT);
      const hotspotOf = async () => (await sessionsOf()).find((s) => s.mac === mac)?.hotspot_id;
      await until(async () => (await hotspotOf()) === hotspotId, { what: `the session at ${hotspotId}`, seen: hotspotOf });
      // Asked again (MAC authentication, a new request): the actor's (or its mirror's) answer, through a thread.
      const again = accessRequest({ secret, id: (ident = (ident + 1) & 255), userName: dashed(mac), password: dashed(mac), callingStationId: dashed(mac) });
      await nas.send(again, authPort());
      expect((await reply(nas, again))[0]).toBe(Code.ACCESS_ACCEPT);
    }
  });

  it('/metrics sums the threads\' RADIUS counters and histograms under their usual names', async () => {
    const scrape = async (): Promise<string> => (await fetch(`${svc.base}/metrics`)).text();
    const value = (text: string, series: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(series + ' '));
      return line ? Number(line.slice(series.length + 1)) : 0;
    };
    const accepts = 'guestwifi_radius_replies_total{kind="access_accept"}';
    const timed = 'guestwifi_radius_request_duration_seconds_count{port="auth",result="accept"}';
    // Both threads answered accepts (the test before): the sum is more than either thread's own.
    await until(async () => {
      const text = await scrape();
      const perThread = threads().threadStats().map((x) => x?.accepts ?? 0);
      return value(text, accepts) === threads().stats().accepts && value(text, accepts) > Math.max(...perThread) && value(text, timed) >= value(text, accepts);
    }, { what: 'the summed accepts on /metrics', seen: async () => [value(await scrape(), accepts), threads().threadStats().map((x) => x?.accepts)] });
  });

  it('a device\'s re-check is answered on its RADIUS thread from the mirror; the main thread counts it and sees the port', async () => {
    const { ip, answer } = await registerOnFreeLoopback(svc.base, t.apiKey, t.hotspotId, (at) => ({ ip: at, secret }));
    const nasId = answer.body.id as string;
    const nas = await open(ip);
    const mac = device();
    const pkt = signInPacket(mac);
    await nas.send(pkt, authPort());
    expect((await reply(nas, pkt))[0]).toBe(Code.ACCESS_ACCEPT);
    const recheck = async (): Promise<number> => {
      const again = accessRequest({ secret, id: (ident = (ident + 1) & 255), userName: dashed(mac), password: dashed(mac), callingStationId: dashed(mac), nasPortId: 'Gi1/0/7' });
      await nas.send(again, authPort());
      return (await reply(nas, again))[0]!;
    };
    // The first asks the actor (the accept it published named the voucher code as User-Name); it publishes the new one.
    expect(await recheck()).toBe(Code.ACCESS_ACCEPT);

    const gateway = svc.service.engine.radius;
    const reported: MirroredAnswers[] = [];
    const heard = gateway.answeredFromMirror.bind(gateway);
    gateway.answeredFromMirror = (answers) => {
      reported.push(...answers);
      heard(answers);
    };
    const scrape = async (): Promise<string> => (await fetch(`${svc.base}/metrics`)).text();
    const decided = async (): Promise<number> =>
      Number((await scrape()).split('\n').find((l) => l.startsWith('guestwifi_signin_decisions_total{method="mac_auth",outcome="accept",reason=""} '))?.split(' ')[1] ?? 0);
    const onMain = svc.service.engine.actors!.mirrorHits;
    const decidedBefore = await decided();
    const N = 6;
    for (let i = 0; i < N; i++) expect(await recheck()).toBe(Code.ACCESS_ACCEPT);

    const mine = () => reported.filter((a) => a.nasId === nasId);
    await until(() => mine().reduce((n, a) => n + a.count, 0) === N, { what: 'the thread reporting its six mirrored answers', seen: () => reported });
    gateway.answeredFromMirror = heard;
    expect(svc.service.engine.actors!.mirrorHits - onMain, 'answered on the main thread').toBe(0);
    // One entry per port per report: the six may span two reports on a busy machine (one every 100 ms).
    for (const a of mine()) expect(a.ports).toEqual([{ nasPortId: 'Gi1/0/7' }]);
    // Each mirrored answer is one MAC-auth accept for the dashboard (with whatever else a thread reported meanwhile).
    expect(await decided() - decidedBefore).toBe(reported.reduce((n, a) => n + a.count, 0));
    // The NAS's presence and its port reach Redis as for an answer on the main thread (the presence flush, every second).
    await until(async () => (await svc.service.engine.redis.hget(keys.nasPorts(t.tenantId, nasId), 'Gi1/0/7')) !== null, { what: 'the port in the NAS\'s port map' });
    // The threads' own hit counters reach /metrics with their next report.
    const hits = async () => Number((await scrape()).split('\n').find((l) => l.startsWith('guestwifi_radius_auth_mirror_hits_total '))?.split(' ')[1] ?? 0);
    await until(async () => (await hits()) >= N, { what: 'the threads\' mirror hits on /metrics', seen: hits });
  });

  it('a crashed thread is started again on the same ports, which the other thread kept answering on meanwhile', async () => {
    const ports = { ...svc.service.radiusPorts };
    await threads().killThread(0);
    // Every source is answered while thread 0 is down or restarting: the kernel hands its share to the thread still bound.
    const sources = await Promise.all(Array.from({ length: 8 }, (_, i) => open(`${net}.${i + 100}`)));
    for (const n of sources) {
      const pkt = signInPacket();
      await n.send(pkt, authPort());
      expect((await reply(n, pkt))[0]).toBe(Code.ACCESS_ACCEPT);
    }
    await until(() => threads().listening === THREADS, { what: 'the restarted thread bound again', seen: () => threads().listening });
    expect(threads().ports).toEqual({ auth: ports.auth, acct: ports.acct });
  });

  it('stop frees both ports', async () => {
    const { auth, acct } = svc.service.radiusPorts;
    stopped = true;
    await svc.stop();
    for (const port of [auth, acct]) {
      // Without SO_REUSEPORT: refused (EADDRINUSE) while any thread's socket is still bound.
      const s = createSocket('udp4');
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.bind(port, '127.0.0.1', () => resolve());
      });
      await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });
});
