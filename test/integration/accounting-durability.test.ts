import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AcctStatusType, Code, RadiusCrypto, checkFraming } from '../../radius/index.js';
import { accountingRequest, type AccountingSpec } from '../radius/helpers.js';
import { call, dashed, keys, macs, newTenant, type Running, startService, until } from '../support/fixture.js';
import { addLoopbackNas, startPrivateRedis, type LoopbackNas, type PrivateRedis } from '../support/loopback-nas.js';

/**
 * Accounting off the critical path (issue 22 item 2, docs/sessions.md "Accounting: what is durable
 * when"): reports batched per event-loop turn, an Interim-Update that brings nothing new answered
 * without a script, and still no Accounting-Response before what it acknowledges is in Redis.
 *
 * The service here has a Redis of its own (started by this file): the tests stop Redis's writes
 * (CLIENT PAUSE WRITE), which must not stall the other files sharing the suite's Redis.
 */

const rc = new RadiusCrypto();
const randomMac = macs();

describe('accounting: durable before answered, batched, and no script for nothing new', () => {
  let own: PrivateRedis;
  let redis: Redis;
  let svc: Running;
  let db: pg.Client;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let acctPort: number;
  let nas: LoopbackNas;
  const code = `ACCT-DUR-${randomBytes(4).toString('hex').toUpperCase()}`;

  beforeAll(async () => {
    own = await startPrivateRedis();
    redis = own.redis;
    svc = await startService({ REDIS_URL: own.url, ACTOR_THREADS: '1', LOG_LEVEL: process.env.DBG_LOG ?? 'silent' });
    acctPort = svc.service.radiusPorts.acct;
    t = await newTenant(svc.service, 'Accounting Venue');
    db = new pg.Client(inject('databaseUrl'));
    await db.connect();
    const v = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null, duration_minutes: 120, daily_quota_mb: 10_000 } });
    expect(v.status).toBe(201);
    nas = await addLoopbackNas(svc.base, t, { coa_port: 3799 });
    marker = { mac: randomMac(), sent: 1 };
    await signIn(marker.mac);
    await answered({ status: AcctStatusType.START, callingStationId: dashed(marker.mac), userName: code, acctSessionId: `marker-${marker.mac}` });
    await answered({ status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(marker.mac), userName: code, acctSessionId: `marker-${marker.mac}`,
      inputOctets: 1, outputOctets: 1, sessionTime: 60 });
  });
  afterAll(async () => {
    await redis?.call('CLIENT', 'UNPAUSE').catch(() => undefined);
    await nas?.radius.close();
    await db?.end();
    await svc?.stop();
    await own?.stop();
  });

  const packet = (spec: Partial<AccountingSpec>) => accountingRequest({ secret: nas.secret, id: nas.nextId(), ...spec });

  /** Every Accounting-Response to `reqs` (by Identifier, authenticator checked) until each has one, or `ms`. */
  async function responses(reqs: Buffer[], ms = 10_000): Promise<Map<number, Buffer[]>> {
    const got = new Map<number, Buffer[]>();
    const endsAt = Date.now() + ms;
    while ([...reqs].some((r) => !got.has(r[1]!)) && Date.now() < endsAt) {
      const m = await nas.radius.next(endsAt - Date.now());
      if (!m) break;
      const req = reqs.find((r) => r[1] === m.msg[1]);
      if (!req || m.msg[0] !== Code.ACCOUNTING_RESPONSE || checkFraming(m.msg) <= 0) continue;
      if (!rc.verifyResponseAuthenticator(m.msg, m.msg.length, req.subarray(4, 20), nas.secret)) continue;
      got.set(m.msg[1]!, [...(got.get(m.msg[1]!) ?? []), m.msg]);
    }
    return got;
  }
  async function answered(spec: Partial<AccountingSpec>): Promise<Buffer> {
    const req = packet(spec);
    await nas.radius.send(req, acctPort);
    const r = await responses([req]);
    expect(r.get(req[1]!), 'an Accounting-Response').toHaveLength(1);
    return r.get(req[1]!)![0]!;
  }
  async function signIn(mac: string): Promise<string> {
    const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code, mac, ip: '10.30.0.5', ssid: 'Guest' } });
    expect(r.status).toBe(200);
    return r.body.session_id;
  }
  const totals = async (mac: string) => redis.hmget(keys.grant(t.tenantId, t.hotspotId, mac), 'bin', 'bout');
  const stats = () => svc.service.radius!.stats();

  /** Redis takes no writes (reads go on) until unpause(): a script that writes waits in Redis. */
  const pauseWrites = async () => { await redis.call('CLIENT', 'PAUSE', '60000', 'WRITE'); };
  const unpause = async () => { await redis.call('CLIENT', 'UNPAUSE'); };
  /**
   * A device whose next Interim-Update brings nothing new (beforeAll records its totals), so its actor answers
   * it with no Redis call, paused or not. The actor thread takes its messages in order and answers a turn's
   * work in one batch: once this answer is here, everything sent before it has reached the actor, and an
   * answer given before Redis had the data would have come with it or earlier.
   */
  let marker: { mac: string; sent: number };
  async function markerAnswered(): Promise<void> {
    await answered({ status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(marker.mac), userName: code, acctSessionId: `marker-${marker.mac}`,
      inputOctets: 1, outputOctets: 1, sessionTime: 60 * ++marker.sent });
  }

  it('no Accounting-Response before the report is in Redis: a batch of Interim-Updates and a Stop wait while Redis takes no writes, and are answered once it does; the Stop\'s record reaches Postgres once', async () => {
    const devices = Array.from({ length: 5 }, randomMac);
    const sids: string[] = [];
    for (const mac of devices) {
      sids.push(await signIn(mac));
      await answered({ status: AcctStatusType.START, callingStationId: dashed(mac), userName: code, acctSessionId: `dur-${mac}` });
    }
    await pauseWrites();
    const before = stats().accountingResponses;
    const reqs = devices.map((mac, i) => packet(i < 4
      ? { status: AcctStatusType.INTERIM_UPDATE, callingStationId: dashed(mac), userName: code, acctSessionId: `dur-${mac}`, inputOctets: 1_000 + i, outputOctets: 9_000 + i, sessionTime: 60 }
      : { status: AcctStatusType.STOP, callingStationId: dashed(mac), userName: code, acctSessionId: `dur-${mac}`, inputOctets: 4_000, outputOctets: 8_000, sessionTime: 90, terminateCause: 1 }));
    let got: Map<number, Buffer[]>;
    try {
      for (const r of reqs) await nas.radius.send(r, acctPort);
      await markerAnswered();
      // Held: of all that was sent, only the marker was answered; the rest waits in the engine, none of it in Redis yet.
      expect(stats().accountingResponses).toBe(before + 1);
      expect(stats().inFlight).toBe(reqs.length);
      expect(await totals(devices[0]!)).toEqual(['0', '0']);
      // And still none half a second on: an answer sent on a timer, not on Redis's reply, would arrive here.
      expect(await nas.radius.next(500), 'an answer while Redis takes no writes').toBeFalsy();
      expect(stats().accountingResponses).toBe(before + 1);
      await unpause();
      got = await responses(reqs);
    } finally {
      await unpause();
    }
    expect(reqs.map((r) => got.get(r[1]!)?.length)).toEqual([1, 1, 1, 1, 1]);
    for (let i = 0; i < 4; i++) expect(await totals(devices[i]!)).toEqual([String(9_000 + i), String(1_000 + i)]);

    // The Stop's end record: in Postgres exactly once, also after the NAS retransmits it (a new Acct-Delay-Time).
    const ends = () => db.query("SELECT details FROM audit_records WHERE tenant_id = $1 AND session_id = $2 AND event_type = 'session_end'", [t.tenantId, sids[4]]);
    await until(async () => (await ends()).rows.length > 0, { what: 'the session_end record in Postgres' });
    await answered({ status: AcctStatusType.STOP, callingStationId: dashed(devices[4]!), userName: code, acctSessionId: `dur-${devices[4]}`, inputOctets: 4_000, outputOctets: 8_000, sessionTime: 90, terminateCause: 1, delayTime: 4 });
    const row = async () => (await db.query('SELECT status, bytes_in, bytes_out FROM sessions WHERE id = $1', [sids[4]])).rows[0];
    await until(async () => (await row())?.status === 'ended', { what: 'the session row ended', seen: row });
    expect(await row()).toMatchObject({ status: 'ended', bytes_in: 8_000, bytes_out: 4_000 });
    // A second end record would have been queued before the retransmit's answer, ahead of any later record in the
    // tenant's outbox: once a later sign-in's session is in Postgres, it would be there too.
    const later = await signIn(randomMac());
    await until(async () => (await db.query('SELECT 1 FROM sessions WHERE id = $1', [later])).rows.length === 1, { what: 'a later session in Postgres' });
    expect((await ends()).rows).toHaveLength(1);
    expect((await ends()).rows[0].details).toMatchObject({ bytes_in: 8_000, bytes_out: 4_000 });
  });

  it('an Interim-Update that brings nothing new needs no script: answered while Redis takes no writes; one with new totals waits for Redis', async () => {
    const mac = randomMac();
    await signIn(mac);
    const base = { callingStationId: dashed(mac), userName: code, acctSessionId: `noop-${mac}` };
    await answered({ ...base, status: AcctStatusType.START });
    await answered({ ...base, status: AcctStatusType.INTERIM_UPDATE, inputOctets: 100, outputOctets: 200, sessionTime: 60 });
    const last = await redis.hget(keys.grant(t.tenantId, t.hotspotId, mac), 'last');
    await pauseWrites();
    try {
      // The next interim with the same totals (the guest idle for a minute): another packet, not a duplicate.
      await answered({ ...base, status: AcctStatusType.INTERIM_UPDATE, inputOctets: 100, outputOctets: 200, sessionTime: 120 });
      expect(await redis.hget(keys.grant(t.tenantId, t.hotspotId, mac), 'last')).toBe(last);
      // New totals: recorded (a script) before the answer.
      const before = stats().accountingResponses;
      const moved = packet({ ...base, status: AcctStatusType.INTERIM_UPDATE, inputOctets: 150, outputOctets: 200, sessionTime: 180 });
      await nas.radius.send(moved, acctPort);
      await markerAnswered();
      expect(stats().accountingResponses).toBe(before + 1);
      expect(stats().inFlight).toBe(1);
      await unpause();
      expect((await responses([moved])).get(moved[1]!)).toHaveLength(1);
    } finally {
      await unpause();
    }
    expect(await totals(mac)).toEqual(['200', '150']);
    // The idle interim moved nothing an idle time-out reads; the one with traffic did.
    expect(Number(await redis.hget(keys.grant(t.tenantId, t.hotspotId, mac), 'last'))).toBeGreaterThan(Number(last));
  });

  it('batched Interim-Updates of many devices: each answered once, duplicates byte for byte, and every total the last one sent, never less', async () => {
    const devices = Array.from({ length: 40 }, randomMac);
    for (const mac of devices) await signIn(mac);
    const reqs: Buffer[] = [];
    for (const [i, mac] of devices.entries()) {
      const base = { callingStationId: dashed(mac), userName: code, acctSessionId: `burst-${mac}` };
      reqs.push(packet({ ...base, status: AcctStatusType.START }));
      for (let k = 1; k <= 4; k++) reqs.push(packet({ ...base, status: AcctStatusType.INTERIM_UPDATE, inputOctets: 100 * k + i, outputOctets: 1_000 * k + i, sessionTime: 60 * k }));
    }
    expect(reqs.length).toBeLessThanOrEqual(256); // Identifiers unique within the burst
    for (const r of reqs) await nas.radius.send(r, acctPort);
    const got = await responses(reqs);
    expect(reqs.filter((r) => got.get(r[1]!)?.length !== 1)).toHaveLength(0);
    // Retransmissions of answered requests (RFC 5080 §2.2.2): the cached reply, octet for octet.
    const again = reqs.filter((_, j) => j % 17 === 0);
    const dupes0 = stats().duplicatesAnswered;
    for (const r of again) await nas.radius.send(r, acctPort);
    const replayed = await responses(again);
    for (const r of again) expect(replayed.get(r[1]!)![0]!.equals(got.get(r[1]!)![0]!)).toBe(true);
    expect(stats().duplicatesAnswered - dupes0).toBe(again.length);
    for (const [i, mac] of devices.entries()) {
      expect(await totals(mac)).toEqual([String(4_000 + i), String(400 + i)]);
    }
  });
});
