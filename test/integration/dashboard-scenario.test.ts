import { randomBytes, randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MODULES, signOperatorToken } from '../../engine/index.js';
import { Code } from '../../radius/index.js';
import { sleep } from '../radius/helpers.js';
import { FakeCarrier } from '../support/fake-carrier.js';
import { call, dashed, JWT_SECRET, keys, macs, newTenant, startService, until, type Running, type Tenant } from '../support/fixture.js';
import { openStream, type SseConnection } from '../support/sse-client.js';
import {
  byCount, checkMinutes, decisions1m, expectBandwidth, lastCompleteMinute, lastSignInMinute, MIN, pct, ScenarioNas, sum, type Counted, type DecisionRow,
} from './dashboard-scenario-kit.js';

/**
 * Every dashboard tile against a known scenario (issue 11, Must show): one
 * service, a tenant with two sites and a NAS at each, driven through the
 * portal (vouchers, an SMS code through a fake carrier), real RADIUS
 * datagrams (voucher codes as PAP, CHAP with the wrong secret, MAC
 * authentication, accounting with bytes and access points), the sessions API
 * (a disconnect, an extension) and posture ingest; meanwhile a second tenant
 * runs a smaller scenario of its own. Each then reads exactly its own numbers,
 * every one computed below from what the scenario did. Numbers kept per
 * minute or per 10 s are checked against the times the scenario recorded
 * (the response's generated_at, each decision's `at`, each accounting
 * packet's send/reply window), so a minute boundary inside the run changes
 * the expectation, never the verdict.
 */
const ME = '/api/v1/tenants/me';
const SECRET = new TextEncoder().encode(JWT_SECRET);
/** Sign-ins sent at once through the portal: the burst the live-sessions stream must coalesce. */
const BURST = 8;
/*
 * Tenant A, sites H1 (NAS sw-north) and H2 (NAS sw-south):
 *   N = BURST + 4 sessions: BURST portal at H1 (Guest: b1, b2, ...), portal at H2 (d3 Fans, d4 on a single-use
 *       voucher), SMS code at H1 (d5 Guest), voucher code as PAP at H2 (d6 Fans); plus one MAC-auth accept (d3)
 *   M = 6 refusals: unknown, used-up and expired vouchers at the portal, a wrong SMS code, CHAP with the wrong
 *       secret at H1, MAC-auth of a device never signed in at H2
 *   K = 3 ends: Stops of b1 (ap-north-1) and d6 (ap-south-1), an operator's DELETE of d4; b2 extended
 *   live: BURST - 1 + d5 at H1, d3 at H2; accounting bytes for b1, b2 (ap-north-2), d3 and d6
 *   posture: pass, fail, drift, and a device going fail -> pass
 * Tenant B (one site): two sessions (one stopped), an unknown voucher, a MAC-auth refusal, one drift.
 * The MAC-auth checks are decisions (decisions_1m, the list, fail reasons) but no sign-ins: the login tiles
 * count N sign-ins and M - 1 refusals (A), 2 and 1 (B).
 */

describe('dashboard tiles against a known scenario', () => {
  let svc: Running;
  let carrier: FakeCarrier;
  const nases: ScenarioNas[] = [];
  const mac = macs();
  const suffix = randomBytes(4).toString('hex').toUpperCase();

  beforeAll(async () => {
    svc = await startService({ ACTOR_THREADS: '2' });
    carrier = await FakeCarrier.start();
  });
  afterAll(async () => {
    for (const n of nases) await n.close();
    await carrier?.close();
    await svc?.stop();
  });

  const api = (t: Tenant, method: string, path: string, body?: unknown) => call(svc.base, method, path, { auth: t.apiKey, body });
  const ok = async (t: Tenant, method: string, path: string, body?: unknown, status = 200) => {
    const r = await api(t, method, path, body);
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
    return r.body;
  };
  const read = async (token: string, path: string) => {
    const r = await call(svc.base, 'GET', `${ME}/${path}`, { bearer: token });
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
    return r.body;
  };
  const voucher = async (t: Tenant, prefix: string, body: Record<string, unknown>): Promise<string> =>
    (await ok(t, 'POST', '/v1/vouchers', { code: `${prefix}-${suffix}`, duration_minutes: 60, ...body }, 201)).code;

  const portal = (hotspotId: string, code: string, m: string, ssid?: string) =>
    call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hotspotId}`, { body: { code, mac: m, ip: '10.30.0.5', ...(ssid ? { ssid } : {}) } });
  const signedIn = async (r: Promise<{ status: number; body: any }>): Promise<string> => {
    const a = await r;
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    return a.body.session_id as string;
  };
  const refused = async (r: Promise<{ status: number; body: any }>, error: string) => expect((await r).body.error).toBe(error);
  const posture = (t: Tenant, m: string, verdict: string, hotspotId?: string) =>
    ok(t, 'POST', `${ME}/posture`, { mac: m, verdict, ...(hotspotId ? { hotspot_id: hotspotId } : {}) }, 201);
  /** The session API acts on sessions the sink has stored: retried while it answers 404. */
  const sessionCall = async (t: Tenant, method: string, path: string, body?: unknown) => {
    let r = { status: 0, body: null as any };
    await until(async () => (r = await api(t, method, path, body)).status !== 404, { timeoutMs: 15_000, intervalMs: 100, what: `${path} stored` });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body;
  };
  const events = async (tenantId: string) => (await svc.service.engine.redis.xrange(keys.events(tenantId), '-', '+')).map(([id, f]) => {
    const m = Object.fromEntries(Array.from({ length: f.length / 2 }, (_, i) => [f[2 * i], f[2 * i + 1]])) as Record<string, string>;
    return { id, type: m.type!, site: m.site!, data: JSON.parse(m.data!) as Record<string, unknown> };
  });
  const newestId = async (tenantId: string, type: string) => (await events(tenantId)).filter((e) => e.type === type).at(-1)!.id;

  it('every tile, aggregate, list and stream of each tenant holds exactly its own scenario', { timeout: 120_000 }, async () => {
    const started = Date.now();
    // ---- Setup: tenant A (two sites, a NAS each, SMS codes through the fake carrier), tenant B (one site).
    const A = await newTenant(svc.service, 'Stadium', [...DEFAULT_MODULES, 'dashboard']);
    const B = await newTenant(svc.service, 'Kiosk', [...DEFAULT_MODULES, 'dashboard']);
    const H1 = A.hotspotId;
    const H2 = (await svc.service.engine.hotspots.create(A.tenantId, { name: 'South stand', timezone: 'UTC' })).id;
    const addNas = async (t: Tenant, hotspotId: string, name: string) => {
      const nas = await ScenarioNas.add(svc.base, svc.service.radiusPorts, t.apiKey, hotspotId, name);
      nases.push(nas);
      return nas;
    };
    const [nas1, nas2, nasB] = [await addNas(A, H1, 'sw-north'), await addNas(A, H2, 'sw-south'), await addNas(B, B.hotspotId, 'sw-kiosk')];
    // A tenant's settings may name only the variables named after it.
    const smsCredential = `${A.tenantId.toUpperCase()}_NETGSM`;
    process.env[smsCredential] = 'scenario:sms-pass';
    await ok(A, 'PUT', '/v1/settings/sign-in', {
      methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${smsCredential}` },
    });
    const multi = await voucher(A, 'MULTI', { max_uses: null });
    const single = await voucher(A, 'ONE', { max_uses: 1 });
    const expired = await voucher(A, 'OLD', { max_uses: null, expires_at: new Date(Date.now() - MIN).toISOString() });
    const multiB = await voucher(B, 'BMULTI', { max_uses: null });
    const viewerA = await signOperatorToken(SECRET, A.tenantId, ['viewer'], 600);
    const viewerB = await signOperatorToken(SECRET, B.tenantId, ['viewer'], 600);
    const streamA = await openStream(svc.base, `${ME}/stream/live-sessions`, { 'x-api-key': A.apiKey });
    const streamB = await openStream(svc.base, `${ME}/stream/live-sessions`, { 'x-api-key': B.apiKey });
    const streams: SseConnection[] = [streamA, streamB];
    const countedA: Counted[] = [];
    const countedB: Counted[] = [];
    const sid: Record<string, string> = {};
    const burst = { ms: 0, frames: 0 };

    try {
      // ---- Tenant A.
      const scenarioA = async () => {
        // N: BURST portal sign-ins at H1 at once (ssid Guest), then one at each kind of door.
        const bursters = Array.from({ length: BURST }, () => mac());
        const t0 = Date.now();
        const ids = await Promise.all(bursters.map((m) => signedIn(portal(H1, multi, m, 'Guest'))));
        burst.ms = Date.now() - t0;
        sid.b1 = ids[0]!; // BURST >= 2 sign-ins, each answered with its session id
        sid.b2 = ids[1]!;
        const newestStart = await newestId(A.tenantId, 'session.start');
        await streamA.waitFor((f) => f.id === newestStart, 10_000, 'the burst\'s newest session.start');
        burst.frames = streamA.events().filter((e) => e.kind === 'session_started').length;

        const [d3, d4, d5, d6] = [mac(), mac(), mac(), mac()];
        sid.d3 = await signedIn(portal(H2, multi, d3, 'Fans'));
        sid.d4 = await signedIn(portal(H2, single, d4));
        // An SMS code: the wrong one first (a reject from the OTP service), then the one the carrier got.
        const phone = `+90532${randomInt(1_000_000, 9_999_999)}`;
        expect((await call(svc.base, 'POST', '/api/v1/hotspot-portal/sms/request', { body: { phone, mac: d5, hotspot_id: H1 } })).status).toBe(200);
        const code = carrier.lastCode(phone)!;
        expect(code).toMatch(/^\d{6}$/);
        const verify = (c: string) => call(svc.base, 'POST', `/api/v1/hotspot-portal/sms/verify?hotspot_id=${H1}`, { body: { phone, code: c, mac: d5, ssid: 'Guest' } });
        await refused(verify(code === '000000' ? '111111' : '000000'), 'otp_invalid');
        sid.d5 = await signedIn(verify(code));
        // A voucher code as a PAP login at NAS 2, from an access point naming the SSID.
        expect(await nas2.access({ userName: multi, password: multi, callingStationId: dashed(d6), calledStationId: 'AA-BB-CC-00-02-01:Fans', nasPort: 21 }))
          .toBe(Code.ACCESS_ACCEPT);
        // A signed-in device asked about by its MAC: accepted, a decision (and so a login on the tiles, as documented), no new session.
        expect(await nas2.macAuth(d3)).toBe(Code.ACCESS_ACCEPT);

        // M: three refusals at the portal, three over RADIUS.
        await refused(portal(H1, `NOPE-${suffix}`, mac(), 'Guest'), 'voucher_not_found');
        await refused(portal(H2, single, mac()), 'voucher_exhausted');
        await refused(portal(H1, expired, mac()), 'voucher_expired');
        expect(await nas1.access({ userName: multi, chap: { secret: 'not-the-code' }, callingStationId: dashed(mac()) })).toBe(Code.ACCESS_REJECT);
        expect(await nas2.macAuth(mac())).toBe(Code.ACCESS_REJECT);

        // A session's duration counts whole seconds: past one, so the average duration tile has something to average.
        await sleep(1_100);
        // Accounting: bytes, access points (NAS-Identifier) and ports; two of the ends are Stops.
        const [b1, b2] = bursters as [string, string];
        await nas1.traffic(b1, { nasIdentifier: 'ap-north-1', calledStationId: 'AA-BB-CC-00-01-01:Guest', nasPort: 11 },
          [[1_000_000, 5_000_000], [2_000_000, 8_000_000]], true, countedA);
        await nas1.traffic(b2, { nasIdentifier: 'ap-north-2', nasPortId: 'Gi1/0/2', calledStationId: 'AA-BB-CC-00-01-02:Guest', nasPort: 12 },
          [[700_000, 3_000_000]], false, countedA);
        await nas2.traffic(d3, { nasIdentifier: 'ap-south-1', calledStationId: 'AA-BB-CC-00-02-01:Fans', nasPort: 21 },
          [[600_000, 4_000_000]], false, countedA);
        await nas2.traffic(d6, { nasIdentifier: 'ap-south-1', calledStationId: 'AA-BB-CC-00-02-01:Fans', nasPort: 21 },
          [[100_000, 1_000_000], [300_000, 1_500_000]], true, countedA);
        // The third end: an operator's disconnect; and one extension.
        expect(await sessionCall(A, 'DELETE', `/v1/sessions/${sid.d4}`)).toMatchObject({ status: 'disconnected', reason: 'admin_disconnect' });
        expect(await sessionCall(A, 'POST', `/v1/sessions/${sid.b2}/extend`, { minutes: 60 })).toMatchObject({ status: 'active', extended_minutes: 60 });

        // Posture: pass, fail, drift, and a device going from fail to pass.
        const [p1, p2, p3, p4] = [mac(), mac(), mac(), mac()];
        await posture(A, p1, 'pass', H1);
        await posture(A, p2, 'fail', H1);
        await posture(A, p3, 'drift', H2);
        await posture(A, p4, 'fail');
        await posture(A, p4, 'pass');
      };

      // ---- Tenant B, at the same time: two sign-ins, one ended by a Stop, two refusals, one posture failure.
      const scenarioB = async () => {
        const [e1, e2] = [mac(), mac()];
        await signedIn(portal(B.hotspotId, multiB, e1, 'Guest'));
        await signedIn(portal(B.hotspotId, multiB, e2, 'Guest'));
        await refused(portal(B.hotspotId, `NOPE-${suffix}`, mac()), 'voucher_not_found');
        expect(await nasB.macAuth(mac())).toBe(Code.ACCESS_REJECT);
        await nasB.traffic(e1, { nasIdentifier: 'ap-kiosk', calledStationId: 'AA-BB-CC-00-0B-01:Guest', nasPort: 1 },
          [[50_000, 200_000], [100_000, 400_000]], true, countedB);
        await posture(B, mac(), 'drift', B.hotspotId);
      };
      await Promise.all([scenarioA(), scenarioB()]);
      await svc.service.engine.decisions.flush();

      // ---- The audit sink has written every session change (the starts, the ends, the extension).
      const auditOf = async (token: string) => {
        const out: Record<string, any>[] = [];
        let before: string | null = null;
        do {
          const page: { data: Record<string, any>[]; next_before: string | null } =
            await read(token, `audit?limit=200${before ? `&before=${encodeURIComponent(before)}` : ''}`);
          out.push(...page.data);
          before = page.next_before;
        } while (before);
        return out;
      };
      const sessionEntries = (entries: Record<string, any>[]) => entries.filter((e) => String(e.event_type).startsWith('session_'));
      const tally = (entries: Record<string, any>[]) => {
        const n: Record<string, number> = {};
        for (const e of sessionEntries(entries)) n[e.event_type] = (n[e.event_type] ?? 0) + 1;
        return n;
      };
      let auditA: Record<string, any>[] = [];
      let auditB: Record<string, any>[] = [];
      await until(async () => {
        [auditA, auditB] = [await auditOf(viewerA), await auditOf(viewerB)];
        return (auditA.length > 0 && tally(auditA).session_start === BURST + 4 && tally(auditA).session_end === 3 && tally(auditA).session_extend === 1
          && tally(auditB).session_start === 2 && tally(auditB).session_end === 1);
      }, { timeoutMs: 20_000, what: 'the audit sink wrote the scenario', seen: () => [tally(auditA), tally(auditB)] });
      expect(tally(auditA)).toEqual({ session_start: BURST + 4, session_end: 3, session_extend: 1 });
      expect(tally(auditB)).toEqual({ session_start: 2, session_end: 1 });
      const entry = (type: string, s: string) => auditA.find((e) => e.event_type === type && e.session_id === s);
      expect(entry('session_start', sid.d5!)).toMatchObject({ id: `${sid.d5}:start`, hotspot_id: H1, auth_method: 'sms_otp', ssid: 'Guest', actor: null });
      expect(entry('session_start', sid.d3!)).toMatchObject({ hotspot_id: H2, auth_method: 'voucher', ssid: 'Fans', actor: null });
      expect(entry('session_end', sid.d4!)).toMatchObject({ hotspot_id: H2, actor: expect.stringMatching(/^api_key:/) });
      expect(entry('session_extend', sid.b2!)).toMatchObject({ hotspot_id: H1, actor: expect.stringMatching(/^api_key:/) });
      expect(entry('session_end', sid.b1!)).toMatchObject({ hotspot_id: H1, actor: null });
      // Newest first is the chain's order; the burst's starts were stamped on two actor threads, so timestamps may cross by a few ms.
      expect(new Set(auditA.map((e) => e.id)).size).toBe(auditA.length);
      expect(auditA.every((e) => e.hotspot_id === null || e.hotspot_id === H1 || e.hotspot_id === H2)).toBe(true);

      // ---- Tenant A's numbers.
      const decA = await checkDecisions(viewerA, 19, [
        ...Array.from({ length: BURST }, () => `accept portal voucher - ${H1}`),
        `accept portal voucher - ${H2}`, `accept portal voucher - ${H2}`, `accept otp sms_otp - ${H1}`, `accept radius voucher - ${H2}`,
        `accept radius mac_auth - ${H2}`,
        `reject otp sms_otp otp_invalid ${H1}`, `reject portal voucher voucher_not_found ${H1}`, `reject portal voucher voucher_exhausted ${H2}`,
        `reject portal voucher voucher_expired ${H1}`, `reject radius voucher wrong_password ${H1}`, `reject radius mac_auth not_signed_in ${H2}`,
      ], ['not_signed_in', 'otp_invalid', 'voucher_exhausted', 'voucher_expired', 'voucher_not_found', 'wrong_password'].map((reason) => ({ reason, count: 1 })));

      // NAS presence is written in a batch every second: both NAS online before the tiles that count them are read.
      const seenAt = (s: { last_seen_at: string | null }) => s.last_seen_at !== null && Date.parse(s.last_seen_at) <= Date.now();
      let switches: { data: { online: boolean; last_seen_at: string | null }[] } = { data: [] };
      await until(async () => {
        switches = await read(viewerA, 'switches');
        return switches.data.every((s) => s.online);
      }, { what: 'both NAS online', seen: () => switches });
      const overview = await read(viewerA, 'dashboard/overview');
      expect(overview).toEqual({
        active_sessions: BURST + 1, decisions_1m: decisions1m(decA, Date.parse(overview.generated_at)), switches_online: 2, incidents_open: 0,
        posture_fail_24h: 3, active_guest_count: BURST + 1, login_count_24h: BURST + 4, login_fail_count_24h: 5,
        auth_success_pct_24h: pct(BURST + 4, BURST + 9), error_rate_pct: 0, audit_anchor_lag_min: 0, generated_at: expect.any(String),
      });
      expect(await read(viewerA, 'dashboard/kpis-extra')).toEqual({
        edge_health_pct: 100, posture_compliance_pct: 50, nas_total: 2, nas_online: 2, posture_devices: 4, posture_pass: 2, generated_at: expect.any(String),
      });

      // Bytes: download = the NAS's output octets (bin), upload = its input octets (bout), per site and in total.
      const bytes = { H1: { in: 8_000_000 + 3_000_000, out: 2_000_000 + 700_000 }, H2: { in: 4_000_000 + 1_500_000, out: 600_000 + 300_000 } };
      const ended = (await events(A.tenantId)).filter((e) => e.type === 'session.end');
      expect(ended).toHaveLength(3);
      const endReason = (s: string) => ended.find((e) => e.data.session_id === s)?.data.reason;
      expect([endReason(sid.b1!), endReason(sid.d4!), ended.filter((e) => e.data.reason === 'user_request').length]).toEqual(['user_request', 'admin_disconnect', 2]);
      expect(ended.find((e) => e.data.session_id === sid.b1)!.data).toMatchObject({ bytes_in: 8_000_000, bytes_out: 2_000_000, method: 'voucher' });
      const elapsedSec = (Date.now() - started) / 1000;
      expect(ended.every((e) => Number(e.data.duration_sec) >= 1 && Number(e.data.duration_sec) <= elapsedSec)).toBe(true);
      const durations = ended.reduce((a, e) => a + Number(e.data.duration_sec), 0);
      // Accounting's bytes reach the buckets with each actor thread's next tally flush (every second).
      const totalA = bytes.H1.in + bytes.H1.out + bytes.H2.in + bytes.H2.out;
      const totalsNow = async () => [(await read(viewerA, 'sessions/active')).summary.bytes_total_24h, (await read(viewerB, 'sessions/active')).summary.bytes_total_24h];
      await until(async () => (await totalsNow()).join() === `${totalA},500000`, { what: 'the accounting bytes counted', seen: totalsNow });
      const panel = await read(viewerA, 'sessions/active');
      expect(panel.summary).toEqual({
        active_sessions: BURST + 1, logins_24h: BURST + 4, bytes_total_24h: bytes.H1.in + bytes.H1.out + bytes.H2.in + bytes.H2.out,
        avg_duration_sec_24h: Math.round(durations / 3),
      });
      expect(panel.by_ssid).toEqual(byCount([{ hotspot_id: H1, ssid: 'Guest', active: BURST }, { hotspot_id: H2, ssid: 'Fans', active: 1 }]));
      expect(panel.by_ap).toEqual(byCount([{ hotspot_id: H1, ap: 'ap-north-2', active: 1 }, { hotspot_id: H2, ap: 'ap-south-1', active: 1 }]));
      checkMinutes(panel.per_minute, Date.parse(panel.generated_at));
      expect(sum(panel.per_minute, 'connects')).toBe(BURST + 4);
      expect(sum(panel.per_minute, 'disconnects')).toBe(3);
      expectBandwidth(panel.bandwidth_mbps, countedA, Date.parse(panel.generated_at));

      expect(await read(viewerA, 'sites')).toEqual({
        data: [
          { id: H1, name: 'Lobby', location: expect.any(String), timezone: 'Europe/Istanbul', active_sessions: BURST, nas_total: 1, nas_online: 1, health: 'ok' },
          { id: H2, name: 'South stand', location: expect.any(String), timezone: 'UTC', active_sessions: 1, nas_total: 1, nas_online: 1, health: 'ok' },
        ],
      });
      const metrics = await read(viewerA, 'sites/metrics');
      const genM = Date.parse(metrics.generated_at);
      expect(metrics.data.map((s: { site_id: string }) => s.site_id)).toEqual([H1, H2]);
      const [m1, m2] = metrics.data;
      for (const [m, site, name, live, signins, failures, b, aps] of [
        [m1, H1, 'Lobby', BURST, BURST + 1, 4, bytes.H1, [{ ap: 'ap-north-2', active: 1 }]],
        [m2, H2, 'South stand', 1, 3, 1, bytes.H2, [{ ap: 'ap-south-1', active: 1 }]],
      ] as const) {
        expect(m).toEqual({
          site_id: site, name, active_sessions: live,
          signins_1m: lastCompleteMinute(decA, genM, 'accept', site), failures_1m: lastCompleteMinute(decA, genM, 'reject', site),
          per_minute: expect.any(Array), bytes_in_1h: b.in, bytes_out_1h: b.out, busiest_aps: aps,
        });
        checkMinutes(m.per_minute, genM);
        expect([sum(m.per_minute, 'signins'), sum(m.per_minute, 'failures')], site).toEqual([signins, failures]);
      }

      // Switches, their ports (keyed NAS-Port-Id, else Called-Station-Id) and the topology.
      expect(switches.data).toEqual([
        { id: nas1.id, name: 'sw-north', hotspot_id: H1, ip: nas1.ip, online: true, last_seen_at: expect.any(String) },
        { id: nas2.id, name: 'sw-south', hotspot_id: H2, ip: nas2.ip, online: true, last_seen_at: expect.any(String) },
      ]);
      expect(switches.data.every(seenAt)).toBe(true);
      const portsOf = async (nas: ScenarioNas) => {
        let body: { switch_id: string; data: Record<string, any>[] } = { switch_id: '', data: [] };
        await until(async () => {
          body = await read(viewerA, `switches/${nas.id}/ports`);
          return body.data.every((p) => p.active_sessions >= 0) && body.data.length === (nas === nas1 ? 2 : 1);
        }, { what: `ports of ${nas.id}`, seen: () => body });
        return body;
      };
      expect(await portsOf(nas1)).toEqual({
        switch_id: nas1.id,
        data: [
          { port: 'AA-BB-CC-00-01-01:Guest', nas_port: 11, nas_port_id: null, called_station_id: 'AA-BB-CC-00-01-01:Guest', last_seen_at: expect.any(String), active_sessions: 0 },
          { port: 'Gi1/0/2', nas_port: 12, nas_port_id: 'Gi1/0/2', called_station_id: 'AA-BB-CC-00-01-02:Guest', last_seen_at: expect.any(String), active_sessions: 1 },
        ],
      });
      expect(await portsOf(nas2)).toEqual({
        switch_id: nas2.id,
        data: [{ port: 'AA-BB-CC-00-02-01:Fans', nas_port: 21, nas_port_id: null, called_station_id: 'AA-BB-CC-00-02-01:Fans', last_seen_at: expect.any(String), active_sessions: 1 }],
      });
      expect((await call(svc.base, 'GET', `${ME}/switches/${nasB.id}/ports`, { bearer: viewerA })).status).toBe(404);
      const sw = (nas: ScenarioNas) => ({ id: nas.id, name: nas === nas1 ? 'sw-north' : 'sw-south', ip: nas.ip, online: true, last_seen_at: expect.any(String) });
      expect(await read(viewerA, 'topology')).toEqual({
        tenant: { id: A.tenantId, name: expect.stringMatching(/^Stadium /) },
        sites: [
          { id: H1, name: 'Lobby', nas: [{ ...sw(nas1), access_points: [{ id: 'ap-north-1', active_sessions: 0 }, { id: 'ap-north-2', active_sessions: 1 }] }] },
          { id: H2, name: 'South stand', nas: [{ ...sw(nas2), access_points: [{ id: 'ap-south-1', active_sessions: 1 }] }] },
        ],
      });
      expect(await read(viewerA, 'incidents')).toEqual({ data: [], open: 0 });
      expect(await read(viewerA, 'jit-approvals')).toEqual({ data: [] });

      // ---- Tenant B's numbers: its own, none of A's.
      const decB = await checkDecisions(viewerB, 4, [
        `accept portal voucher - ${B.hotspotId}`, `accept portal voucher - ${B.hotspotId}`,
        `reject portal voucher voucher_not_found ${B.hotspotId}`, `reject radius mac_auth not_signed_in ${B.hotspotId}`,
      ], [{ reason: 'not_signed_in', count: 1 }, { reason: 'voucher_not_found', count: 1 }]);
      const overviewB = await read(viewerB, 'dashboard/overview');
      expect(overviewB).toEqual({
        active_sessions: 1, decisions_1m: decisions1m(decB, Date.parse(overviewB.generated_at)), switches_online: 1, incidents_open: 0,
        posture_fail_24h: 1, active_guest_count: 1, login_count_24h: 2, login_fail_count_24h: 1, auth_success_pct_24h: pct(2, 3),
        error_rate_pct: 0, audit_anchor_lag_min: 0, generated_at: expect.any(String),
      });
      expect(await read(viewerB, 'dashboard/kpis-extra')).toMatchObject({ edge_health_pct: 100, posture_compliance_pct: 0, nas_total: 1, posture_devices: 1, posture_pass: 0 });
      const panelB = await read(viewerB, 'sessions/active');
      expect(panelB.summary).toMatchObject({ active_sessions: 1, logins_24h: 2, bytes_total_24h: 500_000 });
      expect(panelB.by_ssid).toEqual([{ hotspot_id: B.hotspotId, ssid: 'Guest', active: 1 }]);
      expect(panelB.by_ap).toEqual([]);
      expect([sum(panelB.per_minute, 'connects'), sum(panelB.per_minute, 'disconnects')]).toEqual([2, 1]);
      expectBandwidth(panelB.bandwidth_mbps, countedB, Date.parse(panelB.generated_at));
      expect((await read(viewerB, 'sites')).data.map((s: { id: string }) => s.id)).toEqual([B.hotspotId]);
      const metricsB = (await read(viewerB, 'sites/metrics')).data;
      expect(metricsB).toHaveLength(1);
      expect(metricsB[0]).toMatchObject({ site_id: B.hotspotId, active_sessions: 1, bytes_in_1h: 400_000, bytes_out_1h: 100_000, busiest_aps: [] });
      expect((await read(viewerB, 'switches')).data.map((s: { id: string }) => s.id)).toEqual([nasB.id]);
      const topoB = await read(viewerB, 'topology');
      expect(topoB.sites.map((s: { id: string }) => s.id)).toEqual([B.hotspotId]);
      expect(topoB.sites[0].nas.map((n: { access_points: { id: string }[] }) => n.access_points)).toEqual([[{ id: 'ap-kiosk', active_sessions: 0 }]]);
      expect(auditB.every((e) => e.hotspot_id === null || e.hotspot_id === B.hotspotId)).toBe(true);

      // ---- The live-sessions streams: the burst coalesced, every kind of change told, each tenant only its own.
      expect(burst.frames).toBeGreaterThanOrEqual(1);
      // At most one event per kind per 500 ms window, the first at once: a handful for the burst, never one per sign-in.
      // (One window more than the burst's span, for the reader taking the events in later than they were made.)
      expect(burst.frames).toBeLessThanOrEqual(3 + Math.floor(burst.ms / 500));
      if (burst.ms < 2_000) expect(burst.frames).toBeLessThan(BURST);
      for (const [stream, t, kinds, sites] of [
        [streamA, A, ['session_started', 'session_ended', 'session_extended'], [H1, H2]],
        [streamB, B, ['session_started', 'session_ended'], [B.hotspotId]],
      ] as const) {
        const own = await events(t.tenantId);
        for (const kind of kinds) {
          const type = { session_started: 'session.start', session_ended: 'session.end', session_extended: 'session.extend' }[kind];
          const newest = own.filter((e) => e.type === type).at(-1)!.id;
          await stream.waitFor((f) => f.id === newest, 10_000, `${kind} naming the newest ${type}`);
        }
        const got = stream.events();
        // Besides the sessions, the stream tells of sign-ins counted and NAS presence (the live figures beside them).
        const sessionKinds = new Set<string>(['session_started', 'session_ended', 'session_extended']);
        expect(new Set(got.map((e) => e.kind).filter((k) => sessionKinds.has(k)))).toEqual(new Set(kinds));
        expect(got.filter((e) => !sessionKinds.has(e.kind)).every((e) => ['signins_counted', 'nas_online', 'nas_offline'].includes(e.kind))).toBe(true);
        const ownIds = new Set(own.map((e) => e.id));
        expect(got.every((e) => ownIds.has(e.id!)), 'every event id is one of the tenant\'s own').toBe(true);
        expect(got.every((e) => e.site_id === undefined || (sites as readonly string[]).includes(e.site_id))).toBe(true);
        const changes = own.filter((e) => /^(session|auth|nas)\./.test(e.type)).length;
        expect(got.length).toBeLessThanOrEqual(changes);
      }

      // ---- The rates of the last complete minute: once the scenario's last minute is complete, they hold its numbers.
      const lastMinute = Math.max(...countedA.map((c) => Math.floor(c.to / MIN)));
      await until(() => Math.floor(Date.now() / MIN) > lastMinute, { timeoutMs: 65_000, intervalMs: 250, what: 'the next minute' });
      const later = await read(viewerA, 'sessions/active');
      expectBandwidth(later.bandwidth_mbps, countedA, Date.parse(later.generated_at), true);
      const laterB = await read(viewerB, 'sessions/active');
      expectBandwidth(laterB.bandwidth_mbps, countedB, Date.parse(laterB.generated_at));
      const laterMetrics = await read(viewerA, 'sites/metrics');
      const genL = Date.parse(laterMetrics.generated_at);
      expect(laterMetrics.data.map((m: { signins_1m: number; failures_1m: number }) => [m.signins_1m, m.failures_1m])).toEqual([H1, H2].map((site) =>
        [lastCompleteMinute(decA, genL, 'accept', site), lastCompleteMinute(decA, genL, 'reject', site)]));
      // When the scenario's last sign-in fell in the minute just completed, that minute holds it (a NAS asking again
      // about a device later, mac_auth or uam_login, is a decision but no sign-in: it does not count here).
      if (lastSignInMinute(decA, [H1, H2]) === Math.floor(genL / MIN) - 1) {
        expect(sum(laterMetrics.data, 'signins_1m') + sum(laterMetrics.data, 'failures_1m')).toBeGreaterThan(0);
      }
    } finally {
      for (const s of streams) s.close();
      delete process.env[smsCredential];
    }
  });

  /**
   * GET decisions: the data as a multiset of "outcome source method reason hotspot" (reason '-' for an accept),
   * newest first, the fail reasons, and decisions_1m from the decisions' own times; returns the rows.
   */
  async function checkDecisions(token: string, n: number, expected: string[], failReasons: { reason: string; count: number }[]): Promise<DecisionRow[]> {
    const before = Date.now();
    const r = await read(token, 'decisions?limit=200');
    const after = Date.now();
    const rows = r.data as DecisionRow[];
    expect(rows).toHaveLength(n);
    expect(rows.map((d) => `${d.outcome} ${d.source} ${d.method} ${d.reason || '-'} ${d.hotspot_id}`).sort()).toEqual([...expected].sort());
    // Newest first in the order recorded (the stream's ids); `at` is when a sign-in began, so a burst's may cross.
    const ids = rows.map((d) => d.id.split('-').map(Number) as [number, number]);
    expect(ids.every((id, i) => i === 0 || id[0] < ids[i - 1]![0] || (id[0] === ids[i - 1]![0] && id[1] < ids[i - 1]![1]))).toBe(true);
    expect(r.fail_reasons).toEqual(failReasons);
    // The answer was made between `before` and `after`: if the window held the same decisions at both ends, exact.
    const [lo, hi] = [decisions1m(rows, before), decisions1m(rows, after)].sort((a, b) => a - b);
    expect(r.decisions_1m).toBeGreaterThanOrEqual(lo!);
    expect(r.decisions_1m).toBeLessThanOrEqual(hi!);
    return rows;
  }
});
