import { afterAll, describe, expect } from 'vitest';
import { DEFAULT_MODULES } from '../../engine/index.js';
import { Code } from '../../radius/index.js';
import { call, keys, newTenant, newVoucher, serviceTest, until, type Tenant } from '../support/fixture.js';
import { openStream, type SseConnection } from '../support/sse-client.js';
import { ScenarioNas, type Counted } from './dashboard-scenario-kit.js';
import { registerOnFreeLoopback } from '../support/loopback-nas.js';

/**
 * The dashboard API tells one truth: the figures its widgets show side by
 * side are one figure, every change to them is announced on the stream the
 * widget refetches on (after the change is visible), no NAS is shown by
 * `null`, and sessions/active lists the live sessions it counts. A NAS is
 * online within INCIDENT_NAS_SILENT_SEC, set short here so that one window
 * for every reader can be told from two.
 */
const it = serviceTest({ INCIDENT_NAS_SILENT_SEC: '60' });
const ME = '/api/v1/tenants/me';
const DASH = [...DEFAULT_MODULES, 'dashboard'];
/** Stream ids compared by their millisecond part: ids of different Redis streams share Redis's clock. */
const msOf = (id: string): number => Number(id.split('-')[0]);

describe('the dashboard API tells one truth', () => {
  const open: SseConnection[] = [];
  const nases: ScenarioNas[] = [];
  afterAll(async () => {
    for (const c of open) c.close();
    for (const n of nases) await n.close();
  });

  it('a sign-in\'s counts are announced on live-sessions once written, and the live panel and the grid then agree', async ({ svc, mac }) => {
    const t = await newTenant(svc.service, 'Truth', DASH);
    const v = await newVoucher(svc.base, t);
    const get = async (path: string) => (await call(svc.base, 'GET', `${ME}/${path}`, { auth: t.apiKey })).body;
    const live = await openStream(svc.base, `${ME}/stream/live-sessions`, { 'x-api-key': t.apiKey });
    open.push(live);
    const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: v.code, mac: mac(), ip: '10.40.0.9', ssid: 'Guest' } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // The accept's row in the decisions list is written by the script that counts it.
    let decisionId = '';
    await until(async () => { decisionId = (await get('decisions?limit=1')).data[0]?.id ?? ''; return decisionId !== ''; }, { what: 'the decision listed' });
    // The widget refetches on invalidations: one must come that is not older than the count. A refetch on
    // session_started alone read logins_24h 0, written a quarter second later, and kept it.
    await live.waitFor((f) => f.id !== undefined && msOf(f.id) >= msOf(decisionId), 5000, 'an invalidation after the count');
    const [panel, overview] = [await get('sessions/active'), await get('dashboard/overview')];
    expect(panel.summary.logins_24h).toBe(1);
    expect(overview.login_count_24h).toBe(panel.summary.logins_24h);
    expect(overview.active_sessions).toBe(panel.summary.active_sessions);
    expect(panel.sessions.total).toBe(panel.summary.active_sessions);
  });

  it('a NAS heard from is announced, and every reader says online or offline alike, by one window', async ({ svc, mac, redis }) => {
    const t = await newTenant(svc.service, 'Edge', DASH);
    const v = await newVoucher(svc.base, t);
    const get = async (path: string) => (await call(svc.base, 'GET', `${ME}/${path}`, { auth: t.apiKey })).body;
    const nas = await ScenarioNas.add(svc.base, svc.service.radiusPorts, t.apiKey, t.hotspotId, 'sw-edge');
    nases.push(nas);
    const live = await openStream(svc.base, `${ME}/stream/live-sessions`, { 'x-api-key': t.apiKey });
    open.push(live);
    const device = mac();
    expect((await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`,
      { body: { code: v.code, mac: device, ip: '10.40.0.9', ssid: 'Guest' } })).status).toBe(200);
    // The NAS speaks for the first time: it asks about the device, which has a live session.
    expect(await nas.macAuth(device)).toBe(Code.ACCESS_ACCEPT);
    let onlineId = '';
    await until(async () => {
      onlineId = (await redis.xrange(keys.events(t.tenantId), '-', '+')).find(([, f]) => f[1] === 'nas.online')?.[0] ?? '';
      return onlineId !== '';
    }, { what: 'nas.online appended' });
    // Site health refetches on the stream: it must hear that the NAS came online (else it showed Down, 0/1, for a minute).
    await live.waitFor((f) => f.id !== undefined && msOf(f.id) >= msOf(onlineId), 5000, 'an invalidation for the NAS');
    const agree = async (online: boolean) => {
      const [overview, extra, sites, switches, topology] = await Promise.all(
        ['dashboard/overview', 'dashboard/kpis-extra', 'sites', 'switches', 'topology'].map(get));
      const site = sites.data.find((s: { id: string }) => s.id === t.hotspotId);
      return {
        switches_online: overview.switches_online, nas_online: extra.nas_online, edge: extra.edge_health_pct,
        site: [site.nas_online, site.nas_total, site.health], switch: switches.data[0].online, topology: topology.sites[0].nas[0].online,
        want: online,
      };
    };
    expect(await agree(true)).toEqual({ switches_online: 1, nas_online: 1, edge: 100, site: [1, 1, 'ok'], switch: true, topology: true, want: true });
    // Silent for two minutes: past INCIDENT_NAS_SILENT_SEC (60 s), within the 5 minutes the tiles used to apply.
    await redis.hset(keys.nasSeen(t.tenantId), nas.id, Date.now() - 120_000);
    expect(await agree(false)).toEqual({ switches_online: 0, nas_online: 0, edge: 0, site: [0, 1, 'down'], switch: false, topology: false, want: false });
  });

  it('a NAS registered without a name is shown by its address, never null, in switches and topology', async ({ svc }) => {
    const t = await newTenant(svc.service, 'Nameless', DASH);
    const { answer: r } = await registerOnFreeLoopback(svc.base, t.apiKey, t.hotspotId, (ip) => ({ ip, secret: 'nameless-nas-secret-1234' }));
    expect(r.body.name ?? null).toBeNull();
    const get = async (path: string) => (await call(svc.base, 'GET', `${ME}/${path}`, { auth: t.apiKey })).body;
    const [switches, topology] = [await get('switches'), await get('topology')];
    expect(switches.data.map((s: { name: string }) => s.name)).toEqual([r.body.ip]);
    expect(topology.sites[0].nas.map((n: { name: string }) => n.name)).toEqual([r.body.ip]);
    // No name anywhere in either answer is null.
    const names: unknown[] = [];
    JSON.stringify({ switches, topology }, (k, val) => { if (k === 'name') names.push(val); return val; });
    expect(names.filter((n) => typeof n !== 'string' || n === '')).toEqual([]);
  });

  it('sessions/active lists the live sessions in the console shape, paged and bounded, the tenant\'s own only', async ({ svc, mac }) => {
    const t = await newTenant(svc.service, 'Listing', DASH);
    const other: Tenant = await newTenant(svc.service, 'Other', DASH);
    const v = await newVoucher(svc.base, t);
    const south = (await svc.service.engine.hotspots.create(t.tenantId, { name: 'South', timezone: 'UTC' })).id;
    const nas = await ScenarioNas.add(svc.base, svc.service.radiusPorts, t.apiKey, t.hotspotId, 'sw-list');
    nases.push(nas);
    const macs = [mac(), mac(), mac()];
    const sites = [t.hotspotId, t.hotspotId, south];
    for (const [i, m] of macs.entries()) {
      const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${sites[i]}`,
        { body: { code: v.code, mac: m, ip: `10.40.0.${10 + i}`, ssid: 'Guest' } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    // Accounting names the first device's access point and counts its bytes (the NAS's input is the guest's upload: bytes_out).
    const counted: Counted[] = [];
    await nas.traffic(macs[0]!, { nasIdentifier: 'ap-east-1', calledStationId: 'AA-BB-CC-DD-EE-01:Guest' }, [[4000, 1000]], false, counted);
    const get = async (q: string, key = t.apiKey) => call(svc.base, 'GET', `${ME}/sessions/active${q}`, { auth: key });

    let all: { status: number; body: any } = { status: 0, body: null };
    await until(async () => {
      all = await get('');
      return all.body.sessions?.data.some((s: { ap_name: string | null; bytes_out: number }) => s.ap_name === 'ap-east-1' && s.bytes_out === 4000) ?? false;
    }, { what: 'the accounted session listed with its access point', seen: () => all.body });
    expect(all.body.summary.active_sessions).toBe(3);
    expect(all.body.sessions).toMatchObject({ total: 3, limit: 50, offset: 0, next_offset: null });
    expect(all.body.sessions.data.map((s: { mac_address: string }) => s.mac_address).sort()).toEqual([...macs].sort());
    const first = all.body.sessions.data.find((s: { mac_address: string }) => s.mac_address === macs[0]);
    expect(first).toEqual({
      id: expect.stringMatching(/^ses_/), hotspot_id: t.hotspotId, mac_address: macs[0], ip_address: '10.40.0.10', username: v.code,
      auth_method: 'voucher', ssid: 'Guest', ap_name: 'ap-east-1', start_time: expect.any(String), duration: expect.stringMatching(/^\d{2}:\d{2}:\d{2}$/),
      bytes_in: 1000, bytes_out: 4000, signal_strength: null,
    });
    // Sites in the directory's order: the first hotspot's two sessions, then South's.
    expect(all.body.sessions.data.map((s: { hotspot_id: string }) => s.hotspot_id)).toEqual(sites);

    const p1 = (await get('?limit=2')).body.sessions;
    const p2 = (await get(`?limit=2&offset=${p1.next_offset}`)).body.sessions;
    expect([p1.data.length, p1.next_offset, p2.data.length, p2.next_offset]).toEqual([2, 2, 1, null]);
    expect([...p1.data, ...p2.data].map((s: { id: string }) => s.id)).toEqual(all.body.sessions.data.map((s: { id: string }) => s.id));
    for (const q of ['?limit=0', '?limit=201', '?offset=-1', '?offset=10001', '?limit=x']) {
      const bad = await get(q);
      expect([q, bad.status, bad.body.error]).toEqual([q, 400, 'validation_failed']);
    }
    const theirs = (await get('', other.apiKey)).body;
    expect([theirs.summary.active_sessions, theirs.sessions.total, theirs.sessions.data]).toEqual([0, 0, []]);
  });
});

