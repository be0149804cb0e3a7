import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AcctStatusType, Code, RadiusCrypto, checkFraming } from '../../radius/index.js';
import { accountingRequest, type AccountingSpec } from '../radius/helpers.js';
import { call, dashed, keys, macs, newTenant, type Running, startService, until } from '../support/fixture.js';
import { addLoopbackNas, startPrivateRedis, type LoopbackNas, type PrivateRedis } from '../support/loopback-nas.js';

/**
 * Issue 22 item 1 with item 2's rule: on RADIUS threads (RADIUS_THREADS=2) an
 * Accounting-Response still leaves only once what it acknowledges is in
 * Redis. The thread answers when the main thread's engine call resolves;
 * this checks nothing on the way (the batching to and from the thread)
 * answers early. A Redis of its own: the test stops its writes.
 */
const rc = new RadiusCrypto();
const randomMac = macs();

describe('RADIUS threads: no Accounting-Response before durability', () => {
  let own: PrivateRedis;
  let redis: Redis;
  let svc: Running;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let nas: LoopbackNas;
  const code = `THR-DUR-${randomBytes(4).toString('hex').toUpperCase()}`;

  beforeAll(async () => {
    own = await startPrivateRedis();
    redis = own.redis;
    svc = await startService({ REDIS_URL: own.url, RADIUS_THREADS: '2', ACTOR_THREADS: '1', LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    t = await newTenant(svc.service, 'Threaded Accounting');
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null, duration_minutes: 120 } })).status).toBe(201);
    nas = await addLoopbackNas(svc.base, t);
  });
  afterAll(async () => {
    await redis?.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    await nas?.radius.close();
    await svc?.stop();
    await own?.stop();
  });

  const packet = (spec: Partial<AccountingSpec>) => accountingRequest({ secret: nas.secret, id: nas.nextId(), ...spec });
  const acctPort = () => svc.service.radiusPorts.acct;

  /** Every verified Accounting-Response, by Identifier, until `stop` has one. */
  async function collectUntil(reqs: Buffer[], stop: Buffer): Promise<Map<number, number>> {
    const got = new Map<number, number>();
    while (!got.has(stop[1]!)) {
      const m = await nas.radius.next(10_000);
      expect(m, `an Accounting-Response for Identifier ${stop[1]}`).not.toBeNull();
      const req = reqs.find((r) => r[1] === m!.msg[1]);
      if (!req || m!.msg[0] !== Code.ACCOUNTING_RESPONSE || checkFraming(m!.msg) <= 0) continue;
      if (!rc.verifyResponseAuthenticator(m!.msg, m!.msg.length, req.subarray(4, 20), nas.secret)) continue;
      got.set(m!.msg[1]!, (got.get(m!.msg[1]!) ?? 0) + 1);
    }
    return got;
  }
  const answered = async (spec: Partial<AccountingSpec>) => {
    const r = packet(spec);
    await nas.radius.send(r, acctPort());
    await collectUntil([r], r);
  };
  const signIn = async (mac: string) => {
    const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code, mac, ip: '10.30.0.5', ssid: 'Guest' } });
    expect(r.status).toBe(200);
  };
  const totals = (mac: string) => redis.hmget(keys.grant(t.tenantId, t.hotspotId, mac), 'bin', 'bout');

  it('Interim-Updates with new totals and a Stop wait while Redis takes no writes; a report that needs no write is answered meanwhile; all are answered once it does', async () => {
    const devices = Array.from({ length: 4 }, randomMac);
    const marker = randomMac();
    for (const mac of [...devices, marker]) {
      await signIn(mac);
      await answered({ status: AcctStatusType.START, callingStationId: dashed(mac), userName: code, acctSessionId: `thr-${mac}` });
    }
    const idle = { callingStationId: dashed(marker), userName: code, acctSessionId: `thr-${marker}`, inputOctets: 1, outputOctets: 1 };
    await answered({ ...idle, status: AcctStatusType.INTERIM_UPDATE, sessionTime: 60 });
    const held = devices.map((mac, i) => packet(i < 3
      ? { status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac), userName: code, acctSessionId: `thr-${mac}`, inputOctets: 500 + i, outputOctets: 7_000 + i, sessionTime: 60 }
      : { status: AcctStatusType.STOP, callingStationId: dashed(mac), userName: code, acctSessionId: `thr-${mac}`, inputOctets: 900, outputOctets: 800, sessionTime: 90, terminateCause: 1 }));
    await redis.call('CLIENT', 'PAUSE', '60000', 'WRITE');
    try {
      for (const r of held) await nas.radius.send(r, acctPort());
      // The marker's totals are unchanged: no Redis write, answered now. All was sent from one source port, so one
      // thread, one order: an answer to a held report given before Redis had it would have arrived with the marker's or before.
      const mark = packet({ ...idle, status: AcctStatusType.INTERIM_UPDATE, sessionTime: 120 });
      await nas.radius.send(mark, acctPort());
      const early = await collectUntil([...held, mark], mark);
      expect(held.filter((r) => early.has(r[1]!))).toHaveLength(0);
      expect(await totals(devices[0]!)).toEqual(['0', '0']);
      // And still none half a second on: an answer sent on a timer, not on Redis's reply, would arrive here.
      expect(await nas.radius.next(500), 'an answer while Redis takes no writes').toBeFalsy();
      await redis.call('CLIENT', 'UNPAUSE');
      const later = new Map<number, number>();
      for (const r of held) if (!later.has(r[1]!)) for (const [k, v] of await collectUntil(held, r)) later.set(k, v);
      expect(held.map((r) => later.get(r[1]!))).toEqual([1, 1, 1, 1]);
    } finally {
      await redis.call('CLIENT', 'UNPAUSE');
    }
    for (let i = 0; i < 3; i++) expect(await totals(devices[i]!)).toEqual([String(7_000 + i), String(500 + i)]);
  });
});
