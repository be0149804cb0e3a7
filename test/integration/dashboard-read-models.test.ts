import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { AuditLag } from '../../engine/audit/audit-lag.js';
import type { IncidentCounts } from '../../engine/views/overview.js';
import { DashboardReadModels } from '../../engine/views/read-models.js';
import type { Sites, SiteSource } from '../../engine/views/site-directory.js';
import { OUTBOX_GROUP } from '../../engine/redis/keys.js';
import { ACTIVITY, perSite } from '../../engine/redis/records.js';
import { keys, storesTest as test } from '../support/fixture.js';

/**
 * The read models against a real Redis, on counters written by key (the
 * activity writers are Lua scripts tested on their own), at a fixed clock so
 * every window edge is exact: a bucket just inside each window counts, the
 * one just outside does not. The tenants are not in Postgres, so no outbox
 * sink of a parallel test file drains the audit streams these tests build.
 */

const MIN = 60_000;
const HOUR = 3_600_000;
// 30 min 25 s into an hour: no window edge near the clock.
const NOW = Math.floor(Date.now() / HOUR) * HOUR + 30 * MIN + 25_000;
const m0 = Math.floor(NOW / MIN);
const h0 = Math.floor(NOW / HOUR);
const s0 = Math.floor(NOW / 10_000);

const tenantId = (): string => `tn_rm${randomBytes(5).toString('hex')}`;

const fixedSites = (sites: Sites): SiteSource => ({ get: async () => sites });
const incidents = (open: number, sitesWithIncident: string[] = []): IncidentCounts => ({
  openIncidents: async () => open,
  openIncidentSites: async () => new Set(sitesWithIncident),
});

const SITES: Sites = {
  hotspots: [
    { id: 'hs_a', name: 'North stand', location: 'Gate A', timezone: 'Europe/Istanbul' },
    { id: 'hs_b', name: 'South stand', location: 'Gate B', timezone: 'UTC' },
    { id: 'hs_c', name: 'Kiosk', location: '', timezone: 'UTC' },
    { id: 'hs_d', name: 'Car park', location: '', timezone: 'UTC' },
  ],
  nas: [
    { id: 'nas_1', hotspotId: 'hs_a', name: 'sw-1', ip: '10.0.0.1' }, { id: 'nas_2', hotspotId: 'hs_a', name: null, ip: '10.0.0.2' },
    { id: 'nas_3', hotspotId: 'hs_b', name: 'sw-3', ip: '10.0.0.3' }, { id: 'nas_4', hotspotId: 'hs_d', name: 'sw-4', ip: '10.0.0.4' },
  ],
};

/** Writes the scenario every test below reads, by key, for tenant `t`. */
async function seed(redis: Redis, t: string): Promise<void> {
  const p = redis.pipeline();
  // Live sets: the score is the session's end. Ended ones (at or before now) are not live.
  p.zadd(keys.live(t, 'hs_a'), NOW + HOUR, 's1', NOW + 1, 's2', NOW + 5 * MIN, 's3', NOW, 'ended-now', NOW - 1, 'ended');
  p.zadd(keys.live(t, 'hs_b'), NOW + HOUR, 's4', NOW + 2 * HOUR, 's5');
  p.hset(keys.liveDevices(t), 'AA:00:00:00:00:01', 2, 'AA:00:00:00:00:02', 1, 'AA:00:00:00:00:03', 1, 'AA:00:00:00:00:04', 1);
  // Decision steps: the current one and the five before it count.
  [1, 2, 3, 4, 5, 6].forEach((n, i) => p.set(keys.decisionStep(t, s0 - 5 + i), n));
  p.set(keys.decisionStep(t, s0 - 6), 100);
  // NAS last seen: 5 minutes ago exactly is still online.
  p.hset(keys.nasSeen(t), 'nas_1', NOW - MIN, 'nas_2', NOW - 6 * MIN, 'nas_3', NOW - 5 * MIN, 'nas_4', NOW - HOUR);
  p.hset(keys.postureCounts(t), 'pass', 3, 'fail', 1, 'drift', 2);
  // 24 h = the current hour and the 23 before it.
  p.hset(keys.activityHour(t, h0), ACTIVITY.accepts, 10, ACTIVITY.rejects, 2, ACTIVITY.postureFail, 1,
    ACTIVITY.bytesIn, 1000, ACTIVITY.bytesOut, 200, ACTIVITY.durationSec, 3000, ACTIVITY.ends, 4);
  p.hset(keys.activityHour(t, h0 - 23), ACTIVITY.accepts, 5, ACTIVITY.rejects, 3, ACTIVITY.postureFail, 2,
    ACTIVITY.bytesIn, 30, ACTIVITY.durationSec, 600, ACTIVITY.ends, 1);
  p.hset(keys.activityHour(t, h0 - 24), ACTIVITY.accepts, 1000, ACTIVITY.rejects, 1000, ACTIVITY.postureFail, 1000,
    ACTIVITY.bytesIn, 1000, ACTIVITY.durationSec, 1000, ACTIVITY.ends, 1000);
  // Minutes: the error rate's 15, the live panel's and the sites' 60; the last complete minute is m0 - 1.
  p.hset(keys.activityMinute(t, m0), ACTIVITY.accepts, 6, ACTIVITY.rejects, 2, ACTIVITY.errors, 1, ACTIVITY.starts, 2, ACTIVITY.ends, 1,
    ACTIVITY.bytesIn, 99_000_000, perSite(ACTIVITY.accepts, 'hs_a'), 2, perSite(ACTIVITY.bytesIn, 'hs_a'), 500);
  p.hset(keys.activityMinute(t, m0 - 1), ACTIVITY.bytesIn, 6_000_000, ACTIVITY.bytesOut, 1_500_000,
    perSite(ACTIVITY.accepts, 'hs_a'), 4, perSite(ACTIVITY.rejects, 'hs_a'), 1, perSite(ACTIVITY.accepts, 'hs_b'), 7,
    perSite(ACTIVITY.bytesIn, 'hs_a'), 1_000, perSite(ACTIVITY.bytesOut, 'hs_a'), 100);
  p.hset(keys.activityMinute(t, m0 - 14), ACTIVITY.accepts, 1, ACTIVITY.rejects, 1, ACTIVITY.errors, 1);
  p.hset(keys.activityMinute(t, m0 - 15), ACTIVITY.errors, 50);
  p.hset(keys.activityMinute(t, m0 - 59), ACTIVITY.starts, 4, perSite(ACTIVITY.rejects, 'hs_b'), 3, perSite(ACTIVITY.bytesIn, 'hs_b'), 70);
  p.hset(keys.activityMinute(t, m0 - 60), ACTIVITY.starts, 99, perSite(ACTIVITY.rejects, 'hs_b'), 99, perSite(ACTIVITY.bytesIn, 'hs_b'), 99);
  // Live counts per SSID and AP; a field at 0 or below is one the writers have not yet removed.
  p.hset(keys.liveBySsid(t), 'hs_a|Guest', 3, 'hs_b|Guest', 2, 'hs_a|Staff', 0, 'hs_a|Old', -1);
  p.hset(keys.liveByAp(t), 'hs_a|ap-1', 1, 'hs_a|ap-2', 2, 'hs_a|ap-3', 1, 'hs_a|ap-4', 1, 'hs_a|ap-5', 1, 'hs_a|ap-6', 1, 'hs_a|ap-0', 0,
    'hs_b|ap-9', 2);
  // An outbox entry queued 7.5 minutes ago, never delivered to the sink.
  p.xgroup('CREATE', keys.outbox(t), OUTBOX_GROUP, '$', 'MKSTREAM');
  p.xadd(keys.outbox(t), `${NOW - 7.5 * MIN}-0`, 'type', 'audit');
  await p.exec();
}

const models = (redis: Redis, open = 4, incidentSites: string[] = []): DashboardReadModels =>
  new DashboardReadModels({ redis, sites: fixedSites(SITES), incidents: incidents(open, incidentSites), now: () => NOW });

describe('dashboard read models', () => {
  test('overview: every tile from its window, edges exact', async ({ redis }) => {
    const t = tenantId();
    await seed(redis, t);
    expect(await models(redis).overview(t)).toEqual({
      active_sessions: 5,
      decisions_1m: 21,
      switches_online: 2,
      incidents_open: 4,
      posture_fail_24h: 3,
      active_guest_count: 4,
      login_count_24h: 15,
      login_fail_count_24h: 5,
      auth_success_pct_24h: 75,
      error_rate_pct: 20,
      audit_anchor_lag_min: 7.5,
      generated_at: new Date(NOW).toISOString(),
    });
  });

  test('kpis-extra: edge health and posture compliance', async ({ redis }) => {
    const t = tenantId();
    await seed(redis, t);
    expect(await models(redis).kpisExtra(t)).toEqual({
      edge_health_pct: 50, posture_compliance_pct: 50, nas_total: 4, nas_online: 2, posture_devices: 6, posture_pass: 3,
      generated_at: new Date(NOW).toISOString(),
    });
  });

  test('a tenant with nothing: zeros, and null where a ratio has nothing to measure', async ({ redis }) => {
    const rm = new DashboardReadModels({ redis, sites: fixedSites({ hotspots: [], nas: [] }), incidents: incidents(0), now: () => NOW });
    const t = tenantId();
    expect(await rm.overview(t)).toMatchObject({
      active_sessions: 0, decisions_1m: 0, switches_online: 0, active_guest_count: 0, login_count_24h: 0,
      auth_success_pct_24h: null, error_rate_pct: 0, audit_anchor_lag_min: 0,
    });
    expect(await rm.kpisExtra(t)).toMatchObject({ edge_health_pct: null, posture_compliance_pct: null, nas_total: 0, posture_devices: 0 });
    const panel = await rm.activeSessions(t);
    expect(panel.summary).toEqual({ active_sessions: 0, logins_24h: 0, bytes_total_24h: 0, avg_duration_sec_24h: 0 });
    expect(panel.per_minute.every((m) => m.connects === 0 && m.disconnects === 0)).toBe(true);
    expect(await rm.sites(t)).toEqual({ data: [] });
  });

  test('sessions/active: summary cards, live counts per SSID and AP, the last hour per minute, bandwidth of the last complete minute', async ({ redis }) => {
    const t = tenantId();
    await seed(redis, t);
    const panel = await models(redis).activeSessions(t);
    expect(panel.summary).toEqual({ active_sessions: 5, logins_24h: 15, bytes_total_24h: 1230, avg_duration_sec_24h: 720 });
    expect(panel.by_ssid).toEqual([{ hotspot_id: 'hs_a', ssid: 'Guest', active: 3 }, { hotspot_id: 'hs_b', ssid: 'Guest', active: 2 }]);
    expect(panel.by_ap.slice(0, 2)).toEqual([{ hotspot_id: 'hs_a', ap: 'ap-2', active: 2 }, { hotspot_id: 'hs_b', ap: 'ap-9', active: 2 }]);
    expect(panel.by_ap).toHaveLength(7);
    expect(panel.by_ap.some((a) => a.ap === 'ap-0')).toBe(false);
    expect(panel.per_minute).toHaveLength(60);
    expect(panel.per_minute[0]).toEqual({ minute: new Date((m0 - 59) * MIN).toISOString(), connects: 4, disconnects: 0 });
    expect(panel.per_minute[59]).toEqual({ minute: new Date(m0 * MIN).toISOString(), connects: 2, disconnects: 1 });
    expect(panel.per_minute.reduce((a, m) => a + m.connects, 0)).toBe(6);
    // 7.5 MB in the minute before this one: 7,500,000 * 8 / 60 s = 1 Mbit/s; the current minute's 99 MB are not in it.
    expect(panel.bandwidth_mbps).toBe(1);
  });

  test('sites: live sessions, NAS online and health per site', async ({ redis }) => {
    const t = tenantId();
    await seed(redis, t);
    expect((await models(redis).sites(t)).data).toEqual([
      { id: 'hs_a', name: 'North stand', location: 'Gate A', timezone: 'Europe/Istanbul', active_sessions: 3, nas_total: 2, nas_online: 1, health: 'degraded' },
      { id: 'hs_b', name: 'South stand', location: 'Gate B', timezone: 'UTC', active_sessions: 2, nas_total: 1, nas_online: 1, health: 'ok' },
      { id: 'hs_c', name: 'Kiosk', location: '', timezone: 'UTC', active_sessions: 0, nas_total: 0, nas_online: 0, health: 'ok' },
      { id: 'hs_d', name: 'Car park', location: '', timezone: 'UTC', active_sessions: 0, nas_total: 1, nas_online: 0, health: 'down' },
    ]);
    // An open incident at a site whose NAS are all fine degrades it.
    const withIncident = (await models(redis, 1, ['hs_b', 'hs_c']).sites(t)).data;
    expect(withIncident.map((s) => s.health)).toEqual(['degraded', 'degraded', 'degraded', 'down']);
  });

  test('sites/metrics: per site sign-ins and failures per minute, bytes in the hour, the five busiest APs', async ({ redis }) => {
    const t = tenantId();
    await seed(redis, t);
    const out = await models(redis).siteMetrics(t);
    expect(out.generated_at).toBe(new Date(NOW).toISOString());
    const [a, b, c] = out.data;
    expect(a).toMatchObject({ site_id: 'hs_a', name: 'North stand', active_sessions: 3, signins_1m: 4, failures_1m: 1, bytes_in_1h: 1500, bytes_out_1h: 100 });
    expect(a!.busiest_aps).toEqual([{ ap: 'ap-2', active: 2 }, { ap: 'ap-1', active: 1 }, { ap: 'ap-3', active: 1 }, { ap: 'ap-4', active: 1 }, { ap: 'ap-5', active: 1 }]);
    expect(a!.per_minute).toHaveLength(60);
    expect(a!.per_minute[58]).toEqual({ minute: new Date((m0 - 1) * MIN).toISOString(), signins: 4, failures: 1 });
    expect(a!.per_minute[59]).toMatchObject({ signins: 2, failures: 0 });
    expect(b).toMatchObject({ site_id: 'hs_b', active_sessions: 2, signins_1m: 7, failures_1m: 0, bytes_in_1h: 70, bytes_out_1h: 0, busiest_aps: [{ ap: 'ap-9', active: 2 }] });
    expect(b!.per_minute[0]).toMatchObject({ signins: 0, failures: 3 });
    expect(c).toMatchObject({ site_id: 'hs_c', active_sessions: 0, signins_1m: 0, bytes_in_1h: 0, busiest_aps: [] });
  });

  test("another tenant with the same hotspot and NAS ids sees none of it: every key is the tenant's own", async ({ redis }) => {
    const t = tenantId();
    await seed(redis, t);
    const rm = models(redis, 0);
    const other = tenantId();
    expect(await rm.overview(other)).toMatchObject({
      active_sessions: 0, decisions_1m: 0, switches_online: 0, posture_fail_24h: 0, active_guest_count: 0,
      login_count_24h: 0, login_fail_count_24h: 0, auth_success_pct_24h: null, error_rate_pct: 0, audit_anchor_lag_min: 0,
    });
    expect(await rm.kpisExtra(other)).toMatchObject({ edge_health_pct: 0, posture_compliance_pct: null, nas_online: 0, posture_devices: 0 });
    const panel = await rm.activeSessions(other);
    expect([panel.summary.active_sessions, panel.summary.bytes_total_24h, panel.by_ssid.length, panel.by_ap.length, panel.bandwidth_mbps]).toEqual([0, 0, 0, 0, 0]);
    for (const s of (await rm.siteMetrics(other)).data) expect([s.active_sessions, s.bytes_in_1h, s.busiest_aps.length]).toEqual([0, 0, 0]);
  });

  test('an answer costs the same commands at 5 and at 5,005 live sessions, nearly all in one pipeline', async ({ redis }) => {
    const t = tenantId();
    await seed(redis, t);
    const rm = models(redis);
    const before = await commandsFor(redis, () => rm.overview(t));
    const p = redis.pipeline();
    for (let i = 0; i < 5000; i++) p.zadd(keys.live(t, 'hs_a'), NOW + HOUR, `bulk-${i}`);
    await p.exec();
    const after = await commandsFor(redis, () => rm.overview(t));
    expect(after).toEqual(before);
    expect(before.alone).toBe(0);
    expect((await rm.overview(t)).active_sessions).toBe(5005);
  });
});

/**
 * Commands this connection sent while `fn` ran, and how many of them went
 * alone (outside a pipeline). Other test files share the Redis server, so
 * its own counters would not do: ioredis hands every command, pipelined or
 * not, to sendCommand, which is wrapped for the count.
 */
async function commandsFor(redis: Redis, fn: () => Promise<unknown>): Promise<{ commands: number; alone: number }> {
  const out = { commands: 0, alone: 0 };
  const original = redis.sendCommand.bind(redis);
  redis.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    out.commands++;
    if (!(args[1] as { isPipeline?: boolean } | undefined)?.isPipeline) out.alone++;
    return original(...args);
  }) as Redis['sendCommand'];
  try {
    await fn();
  } finally {
    redis.sendCommand = original;
  }
  return out;
}

describe('audit anchor lag: the oldest outbox entry not yet in Postgres', () => {
  const lag = (redis: Redis) => new AuditLag(redis);
  const at = (minutesAgo: number, seq = 0): string => `${NOW - minutesAgo * MIN}-${seq}`;

  test('no stream, or an empty one: 0', async ({ redis }) => {
    const t = tenantId();
    expect(await lag(redis).lagMinutes(t, NOW)).toBe(0);
    await redis.xgroup('CREATE', keys.outbox(t), OUTBOX_GROUP, '0', 'MKSTREAM');
    expect(await lag(redis).lagMinutes(t, NOW)).toBe(0);
  });

  test('entries never delivered: the first one; without a group at all, the same', async ({ redis }) => {
    const t = tenantId();
    await redis.xadd(keys.outbox(t), at(12), 'type', 'audit');
    await redis.xadd(keys.outbox(t), at(3), 'type', 'audit');
    expect(await lag(redis).lagMinutes(t, NOW)).toBe(12);
    await redis.xgroup('CREATE', keys.outbox(t), OUTBOX_GROUP, '0');
    expect(await lag(redis).lagMinutes(t, NOW)).toBe(12);
  });

  test('a delivered entry not yet acknowledged dates the lag before a newer undelivered one', async ({ redis }) => {
    const t = tenantId();
    await redis.xgroup('CREATE', keys.outbox(t), OUTBOX_GROUP, '0', 'MKSTREAM');
    await redis.xadd(keys.outbox(t), at(20), 'type', 'audit');
    await redis.xreadgroup('GROUP', OUTBOX_GROUP, 'c1', 'COUNT', 1, 'STREAMS', keys.outbox(t), '>');
    await redis.xadd(keys.outbox(t), at(2), 'type', 'audit');
    expect(await lag(redis).oldestUnwritten(t)).toBe(NOW - 20 * MIN);
    expect(await lag(redis).lagMinutes(t, NOW)).toBe(20);
  });

  test('written entries (acknowledged, even when left in the stream) do not count; the next undelivered one does', async ({ redis }) => {
    const t = tenantId();
    await redis.xgroup('CREATE', keys.outbox(t), OUTBOX_GROUP, '0', 'MKSTREAM');
    const old = [at(30, 0), at(30, 1), at(25)];
    for (const id of old) await redis.xadd(keys.outbox(t), id, 'type', 'audit');
    await redis.xreadgroup('GROUP', OUTBOX_GROUP, 'c1', 'COUNT', 3, 'STREAMS', keys.outbox(t), '>');
    await redis.xack(keys.outbox(t), OUTBOX_GROUP, ...old);
    expect(await lag(redis).lagMinutes(t, NOW)).toBe(0);
    await redis.xadd(keys.outbox(t), at(4.25), 'type', 'audit');
    expect(await lag(redis).lagMinutes(t, NOW)).toBe(4.3);
    // The sink's way: acknowledged and deleted.
    await redis.xdel(keys.outbox(t), ...old);
    expect(await lag(redis).lagMinutes(t, NOW)).toBe(4.3);
  });
});
