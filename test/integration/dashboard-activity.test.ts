import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODULES, signOperatorToken } from '../../engine/index.js';
import { hourOf, minuteOf, stepOf } from '../../engine/events/activity-keys.js';
import { AcctStatusType, Code, decodePacket } from '../../radius/index.js';
import { accessRequest, accountingRequest } from '../radius/helpers.js';
import { call, dashed, JWT_SECRET, keys, macs, newTenant, startService, until, type Running, type Tenant } from '../support/fixture.js';
import { addLoopbackNas, type LoopbackNas } from '../support/loopback-nas.js';

/**
 * The activity the dashboard reads, against a known scenario driven through
 * the portal and RADIUS (real UDP datagrams) on the real engine: N voucher
 * sign-ins, M refusals, K ends. Every counter, event and the `decisions`
 * call must come out exactly; another tenant sees none of it.
 */
describe('dashboard activity: a known scenario', () => {
  let svc: Running;
  let t: Tenant;
  let other: Tenant;
  let token: string;
  let nas: LoopbackNas;
  let ports: { auth: number; acct: number };
  const mac = macs();
  const suffix = randomBytes(4).toString('hex').toUpperCase();
  const code = `DASH-${suffix}`;
  const single = `DASH1-${suffix}`;

  beforeAll(async () => {
    svc = await startService({ ACTOR_THREADS: '2', LOG_LEVEL: 'silent' });
    ports = svc.service.radiusPorts;
    t = await newTenant(svc.service, 'Dashboard Venue', [...DEFAULT_MODULES, 'dashboard']);
    other = await newTenant(svc.service, 'Other Venue', [...DEFAULT_MODULES, 'dashboard']);
    token = await signOperatorToken(new TextEncoder().encode(JWT_SECRET), t.tenantId, ['viewer'], 3600);
    for (const body of [{ code, max_uses: null, duration_minutes: 60 }, { code: single, max_uses: 1, duration_minutes: 60 }]) {
      expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body })).status).toBe(201);
    }
    nas = await addLoopbackNas(svc.base, t);
  });
  afterAll(async () => {
    await nas?.radius.close();
    await svc?.stop();
  });

  const portal = (c: string, m: string) => call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`,
    { body: { code: c, mac: m, ip: '10.30.0.5', ssid: 'Guest' } });
  /** Sends a datagram from the NAS and returns the reply with the same Identifier. */
  const ask = async (pkt: Buffer, port: number): Promise<number> => {
    await nas.radius.send(pkt, port);
    for (;;) {
      const got = await nas.radius.next(3000);
      expect(got, 'a reply').not.toBeNull();
      if (got!.msg[1] === pkt[1]) return decodePacket(got!.msg)!.code;
    }
  };
  const papLogin = (user: string, m: string) => ask(accessRequest({ secret: nas.secret, id: nas.nextId(), userName: user, password: user, callingStationId: dashed(m) }), ports.auth);
  const macAuth = (m: string) => {
    const bare = m.replace(/:/g, '').toLowerCase();
    return ask(accessRequest({ secret: nas.secret, id: nas.nextId(), userName: bare, password: bare, callingStationId: dashed(m) }), ports.auth);
  };
  const acct = (m: string, status: number, inOctets: number, outOctets: number) => ask(accountingRequest({
    secret: nas.secret, id: nas.nextId(), status, callingStationId: dashed(m), acctSessionId: `acct-${m}`, nasIdentifier: 'ap-north',
    inputOctets: inOctets, outputOctets: outOctets, ...(status === AcctStatusType.STOP ? { terminateCause: 1 } : {}),
  }), ports.acct);

  /** Sums a field over the hour buckets of [from, to]. */
  const hourSum = async (tenantId: string, from: number, to: number, field: string): Promise<number> => {
    let sum = 0;
    for (let h = hourOf(from); h <= hourOf(to); h++) sum += Number(await redisOf().hget(keys.activityHour(tenantId, h), field) ?? 0);
    return sum;
  };
  const minuteSum = async (tenantId: string, from: number, to: number, field: string): Promise<number> => {
    let sum = 0;
    for (let m = minuteOf(from); m <= minuteOf(to); m++) sum += Number(await redisOf().hget(keys.activityMinute(tenantId, m), field) ?? 0);
    return sum;
  };
  const redisOf = () => svc.service.engine.redis;
  const events = async (tenantId: string): Promise<{ type: string; site: string; data: Record<string, unknown> }[]> =>
    (await redisOf().xrange(keys.events(tenantId), '-', '+')).map(([, f]) => {
      const m = Object.fromEntries(Array.from({ length: f.length / 2 }, (_, i) => [f[2 * i], f[2 * i + 1]])) as Record<string, string>;
      return { type: m.type!, site: m.site!, data: JSON.parse(m.data!) as Record<string, unknown> };
    });

  it('N sign-ins, M refusals (portal and RADIUS), K ends: counters, events and /decisions exactly right, and only for the tenant', async () => {
    const from = Date.now();
    const devices = Array.from({ length: 5 }, () => mac());
    // N = 5 sessions: 4 on the portal, 1 with the code as a RADIUS PAP login.
    for (const m of devices.slice(0, 4)) expect((await portal(code, m)).status).toBe(200);
    expect(await papLogin(code, devices[4]!)).toBe(Code.ACCESS_ACCEPT);
    // An accept that starts nothing: a MAC-authentication Access-Request of a signed-in device.
    expect(await macAuth(devices[0]!)).toBe(Code.ACCESS_ACCEPT);
    // The single-use voucher once (a 6th session), then refused.
    const sixth = mac();
    expect((await portal(single, sixth)).status).toBe(200);
    // M = 5 refusals: 2 on the portal (unknown code, used up), 3 over RADIUS (an unknown code as PAP,
    // a device never signed in asking by MAC, twice).
    expect((await portal(`NOPE-${suffix}`, mac())).body.error).toBe('voucher_not_found');
    expect((await portal(single, mac())).body.error).toBe('voucher_exhausted');
    expect(await papLogin(`NOPE2-${suffix}`, mac())).toBe(Code.ACCESS_REJECT);
    const stranger = mac();
    expect(await macAuth(stranger)).toBe(Code.ACCESS_REJECT);
    expect(await macAuth(stranger)).toBe(Code.ACCESS_REJECT);

    // Traffic and K = 2 ends by Accounting-Stop.
    for (const m of devices.slice(0, 2)) {
      expect(await acct(m, AcctStatusType.START, 0, 0)).toBe(Code.ACCOUNTING_RESPONSE);
      expect(await acct(m, AcctStatusType.INTERIM_UPDATE, 1_000, 300)).toBe(Code.ACCOUNTING_RESPONSE);
    }
    expect(await redisOf().hget(keys.liveByAp(t.tenantId), `${t.hotspotId}|ap-north`)).toBe('2');
    for (const m of devices.slice(0, 2)) expect(await acct(m, AcctStatusType.STOP, 1_500, 400)).toBe(Code.ACCOUNTING_RESPONSE);
    await until(async () => Number(await hourSum(t.tenantId, from, Date.now(), 'end')) === 2);
    // Accounting's bytes reach the buckets with the actor thread's next tally flush (every second).
    await until(async () => Number(await hourSum(t.tenantId, from, Date.now(), 'bout')) === 3_000);
    await svc.service.engine.decisions.flush();
    const to = Date.now();

    // Sessions: 6 started, 2 ended, 4 live; bytes as accounted (in = the guest's download, the NAS's output octets); the live hashes.
    for (const [field, n] of [['end', 2], ['bin', 800], ['bout', 3_000], [`bin@${t.hotspotId}`, 800]] as const) {
      expect(await hourSum(t.tenantId, from, to, field), field).toBe(n);
      expect(await minuteSum(t.tenantId, from, to, field), field).toBe(n);
    }
    // Starts are counted where their one reader (the live panel's connects per minute) takes them: tenant-wide, per minute.
    expect(await minuteSum(t.tenantId, from, to, 'start')).toBe(6);
    expect(await redisOf().hlen(keys.liveDevices(t.tenantId))).toBe(4);
    // The RADIUS login sent no SSID (Called-Station-Id): its session counts under the empty one.
    expect(await redisOf().hgetall(keys.liveBySsid(t.tenantId))).toEqual({ [`${t.hotspotId}|Guest`]: '3', [`${t.hotspotId}|`]: '1' });
    expect(await redisOf().hgetall(keys.liveByAp(t.tenantId))).toEqual({});

    // Decisions: 7 accepts (5 voucher, 1 single-use, 1 MAC-auth), 5 rejects (3 voucher, 2 MAC-auth). The MAC-auth
    // checks are decisions (per method, per reason, in the step counters) but no sign-ins: acc and rej count 6 and 3.
    const expectCounts: [string, number][] = [
      ['acc', 6], ['rej', 3], ['err', 0], [`acc@${t.hotspotId}`, 6], [`rej@${t.hotspotId}`, 3], ['acc#voucher', 6], ['acc#mac_auth', 1],
      ['rej#voucher', 3], ['rej#mac_auth', 2], ['r:voucher_not_found', 2], ['r:voucher_exhausted', 1], ['r:not_signed_in', 2],
    ];
    for (const [field, n] of expectCounts) expect(await hourSum(t.tenantId, from, to, field), field).toBe(n);
    let steps = 0;
    for (let s = stepOf(from); s <= stepOf(to); s++) steps += Number(await redisOf().get(keys.decisionStep(t.tenantId, s)) ?? 0);
    expect(steps).toBe(12);

    const r = await call(svc.base, 'GET', '/api/v1/tenants/me/decisions?limit=200', { bearer: token });
    expect(r.status).toBe(200);
    type Row = { source: string; outcome: string; reason: string; method: string; count: number };
    // A row stands for `count` decisions: alike MAC-auth answers within one flush are folded into one.
    const weight = (rows: Row[]) => rows.reduce((n, d) => n + d.count, 0);
    expect(weight(r.body.data)).toBe(12);
    expect(r.body.data.filter((d: Row) => d.method !== 'mac_auth').every((d: Row) => d.count === 1)).toBe(true);
    // Newest first: the last decision was the second MAC-auth reject of the stranger.
    expect(r.body.data[0]).toEqual({
      id: expect.stringMatching(/^\d+-\d+$/), at: expect.any(String), outcome: 'reject', method: 'mac_auth', reason: 'not_signed_in',
      hotspot_id: t.hotspotId, source: 'radius', count: expect.any(Number),
    });
    const bySource = (s: string, o: string) => weight(r.body.data.filter((d: Row) => d.source === s && d.outcome === o));
    expect([bySource('portal', 'accept'), bySource('portal', 'reject'), bySource('radius', 'accept'), bySource('radius', 'reject')]).toEqual([5, 2, 2, 3]);
    expect(r.body.fail_reasons).toEqual([
      { reason: 'not_signed_in', count: 2 }, { reason: 'voucher_not_found', count: 2 }, { reason: 'voucher_exhausted', count: 1 }]);
    // decisions_1m: the last six 10-second steps; exact while the scenario took well under a minute.
    if (Date.now() - from < 50_000) expect(r.body.decisions_1m).toBe(12);
    const rejects = await call(svc.base, 'GET', `/api/v1/tenants/me/decisions?outcome=reject&hotspot_id=${t.hotspotId}&limit=3`, { bearer: token });
    expect(rejects.body.data.flatMap((d: Row) => Array<string>(d.count).fill(d.reason)).slice(0, 3)).toEqual(['not_signed_in', 'not_signed_in', 'voucher_not_found']);

    // Events: one per session change and per sign-in decision, at this hotspot; a NAS's MAC-auth re-checks emit none.
    const ev = await events(t.tenantId);
    const count = (type: string) => ev.filter((e) => e.type === type).length;
    expect([count('session.start'), count('session.end'), count('auth.success'), count('auth.failure')]).toEqual([6, 2, 6, 3]);
    expect(ev.filter((e) => e.type.startsWith('auth.')).every((e) => (e.data as { method: string }).method === 'voucher')).toBe(true);
    expect(ev.filter((e) => e.type.startsWith('session.') || e.type.startsWith('auth.')).every((e) => e.site === t.hotspotId)).toBe(true);
    expect(ev.find((e) => e.type === 'session.end')!.data).toMatchObject({
      mac: devices[0], method: 'voucher', hotspot_id: t.hotspotId, reason: 'user_request', bytes_in: 400, bytes_out: 1_500 });
    // The sink tells the stream once Postgres has the audit entries: at least the 6 starts and 2 ends.
    const written = async () => (await events(t.tenantId)).filter((e) => e.type === 'audit.written').map((e) => e.data);
    await until(async () => (await written()).reduce((n, d) => n + Number(d.count), 0) >= 8);
    expect((await written())[0]).toEqual({ count: expect.any(Number), first_id: expect.any(String), last_id: expect.any(String) });
    // Which records open and close a batch depends on how the sink happened to batch them: only their presence is fixed.
    const ids = (await written()).flatMap((d) => [d.first_id, d.last_id]);
    expect(ids.every((id) => typeof id === 'string' && id !== '')).toBe(true);

    // Another tenant: nothing of this.
    const otherToken = await signOperatorToken(new TextEncoder().encode(JWT_SECRET), other.tenantId, ['viewer'], 3600);
    const theirs = await call(svc.base, 'GET', '/api/v1/tenants/me/decisions', { bearer: otherToken });
    expect(theirs.status).toBe(200);
    expect(theirs.body).toEqual({ data: [], decisions_1m: 0, fail_reasons: [] });
    expect(await redisOf().exists(keys.liveDevices(other.tenantId), keys.decisions(other.tenantId))).toBe(0);
    expect((await events(other.tenantId)).filter((e) => e.type !== 'audit.written')).toEqual([]);
  });

  it('answers 401 without a credential and 403 module_not_licensed without the dashboard module', async () => {
    expect((await call(svc.base, 'GET', '/api/v1/tenants/me/decisions')).status).toBe(401);
    const plain = await newTenant(svc.service, 'No Dashboard');
    const r = await call(svc.base, 'GET', '/api/v1/tenants/me/decisions', { auth: plain.apiKey });
    expect(r.status).toBe(403);
    expect(r.body.error).toBe('module_not_licensed');
    expect((await call(svc.base, 'GET', '/api/v1/tenants/me/decisions?limit=500', { bearer: token })).status).toBe(400);
  });
});
