import { describe, expect } from 'vitest';
import type { Redis } from 'ioredis';
import { createLogger } from '../../engine/index.js';
import type { IncidentThresholds } from '../../engine/config.js';
import { IncidentService } from '../../engine/incidents/incident-service.js';
import { IncidentWatch } from '../../engine/incidents/incident-watch.js';
import { ProviderFailureWindow } from '../../engine/incidents/provider-failure-window.js';
import { EventLog } from '../../engine/events/event-log.js';
import { OUTBOX_GROUP, keys } from '../../engine/redis/keys.js';
import { ACTIVITY, perStep } from '../../engine/redis/records.js';
import { TenantService, type Tenant } from '../../engine/tenants/tenant-service.js';
import type { Pool } from '../../engine/store/postgres.js';
import { poolTest as test, until } from '../support/fixture.js';

/**
 * The incident detectors against the real Redis and Postgres, with short
 * thresholds: counters written by key (as the activity scripts write them),
 * NAS presence, the outbox and its dead letters, failed time-stamps and
 * provider failures. Several watchers stand for several engine processes.
 */
const LIMITS: IncidentThresholds = {
  watchMs: 1000, nasSilentSec: 60, surgeRejects: 10, surgeRejectPct: 50, surgeWindowSec: 60, surgeBaselineFactor: 3, errorRatePct: 5, errorMinDecisions: 20,
  anchorLagMin: 1, providerFailures: 3, providerWindowSec: 60, recentSec: 600,
};
const log = createLogger('silent');
const MIN = 60_000;

interface Rig { tenant: Tenant; incidents: IncidentService; window: ProviderFailureWindow; watch(now?: number): IncidentWatch; nas: Map<string, { tenantId: string; hotspotId: string }> }

/**
 * A tenant and a watch of this test's own. Without the dashboard module by default: the incident watch of every
 * other test file's service (the same Redis and Postgres, the real clock, its own limits) watches dashboard
 * tenants only, so it never raises on these; check() itself watches any tenant it is given.
 */
async function rig(pool: Pool, redis: Redis, modules = ['vouchers']): Promise<Rig> {
  const tenants = new TenantService(pool, redis);
  const tenant = await tenants.create(`Watch ${Math.random().toString(36).slice(2, 8)}`, modules);
  const events = new EventLog(redis);
  const incidents = new IncidentService(pool, events);
  const window = new ProviderFailureWindow(redis, LIMITS.providerFailures, LIMITS.providerWindowSec * 1000);
  const nas = new Map<string, { tenantId: string; hotspotId: string }>();
  const watch = (now?: number) => new IncidentWatch({
    tenants: { list: async () => [tenant] }, nas: { get: (id) => nas.get(id) ?? null }, incidents, events, providerFailures: window,
    redis, pool, thresholds: LIMITS, log, now: now === undefined ? undefined : () => now,
  });
  return { tenant, incidents, window, watch, nas };
}

const types = async (redis: Redis, t: string) => (await redis.xrange(keys.events(t), '-', '+')).map(([, f]) => f[1]);

describe('incident detectors', () => {
  test('a silent NAS is raised once by many processes, announced offline once, and resolved by the engine when it speaks', async ({ pool, redis }) => {
    const r = await rig(pool, redis);
    const t = r.tenant.id;
    r.nas.set('nas_quiet', { tenantId: t, hotspotId: 'hs_x' });
    r.nas.set('nas_chatty', { tenantId: t, hotspotId: 'hs_x' });
    const now = Date.now();
    await redis.hset(keys.nasSeen(t), 'nas_quiet', now - 2 * MIN, 'nas_chatty', now - 1000, 'nas_removed', now - 60 * MIN);
    // Five processes at once.
    await Promise.all(Array.from({ length: 5 }, () => r.watch(now).check(t)));
    const open = await r.incidents.list(t, 'open', 50);
    expect(open.map((i) => [i.kind, i.subject, i.site_id, i.state])).toEqual([['nas_silent', 'nas_quiet', 'hs_x', 'pending']]);
    expect((await types(redis, t)).sort()).toEqual(['incident.raised', 'nas.offline']);

    await redis.hset(keys.nasSeen(t), 'nas_quiet', now + 5000);
    await r.watch(now + 6000).check(t);
    const [resolved] = await r.incidents.list(t, 'resolved', 50);
    expect(resolved).toMatchObject({ id: open[0]!.id, resolved_by: 'engine' });
    expect(await r.incidents.countOpen(t)).toBe(0);
    expect(await types(redis, t)).toContain('incident.updated');
  });

  // The failure surge (a sliding window against the baseline) is tested in surge-window.test.ts.

  test('error rate: errors over 5% of at least 20 decisions over 5 minute buckets', async ({ pool, redis }) => {
    const now = Date.now();
    const minute = Math.floor(now / MIN);
    const spike = await rig(pool, redis);
    const thin = await rig(pool, redis);
    for (let m = minute - 4; m <= minute; m++) {
      await redis.hset(keys.activityMinute(spike.tenant.id, m), ACTIVITY.accepts, 4, ACTIVITY.rejects, 1, ACTIVITY.errors, m === minute ? 2 : 0);
      // 19 decisions, all errors: below the minimum, no incident.
      if (m > minute - 4) await redis.hset(keys.activityMinute(thin.tenant.id, m), ACTIVITY.rejects, m === minute ? 4 : 5, ACTIVITY.errors, m === minute ? 4 : 5);
    }
    // Out of the window: never counted.
    await redis.hset(keys.activityMinute(spike.tenant.id, minute - 5), ACTIVITY.errors, 100, ACTIVITY.rejects, 100);
    await spike.watch(now).check(spike.tenant.id);
    await thin.watch(now).check(thin.tenant.id);
    const [i] = await spike.incidents.list(spike.tenant.id, 'open', 10);
    expect(i).toMatchObject({ kind: 'error_rate_spike', severity: 'critical', details: { errors: 2, decisions: 25 } });
    expect(await thin.incidents.countOpen(thin.tenant.id)).toBe(0);
  });

  test('audit anchor lag: the oldest unwritten outbox entry older than the limit', async ({ pool, redis }) => {
    const r = await rig(pool, redis);
    const key = keys.outbox(r.tenant.id);
    // Queued and delivered in one step to a consumer of this test, so no engine's sink on the shared Redis takes it first.
    const [[, id]] = (await redis.multi().xadd(key, '*', 'type', 'probe')
      .xreadgroup('GROUP', OUTBOX_GROUP, 'incident-watch-test', 'COUNT', 1, 'STREAMS', key, '>').exec())! as [[null, string]];
    try {
      const queued = Number(id.split('-')[0]);
      await r.watch(queued + 30_000).check(r.tenant.id);
      expect(await r.incidents.countOpen(r.tenant.id)).toBe(0);
      await r.watch(queued + 2 * MIN).check(r.tenant.id);
      expect((await r.incidents.list(r.tenant.id, 'open', 10)).map((i) => [i.kind, i.details.lag_min])).toEqual([['audit_anchor_lag', 2]]);
    } finally {
      await redis.multi().xack(key, OUTBOX_GROUP, id).xdel(key, id).exec();
    }
  });

  test('dead letters: raised for recent ones, not raised again for the same ones once resolved, raised for new ones', async ({ pool, redis }) => {
    const r = await rig(pool, redis);
    const t = r.tenant.id;
    const dead = keys.outboxDead(t);
    await redis.xadd(dead, `${Date.now() - 20 * MIN}-0`, 'stream_id', '1-0', 'error', 'too old to count');
    await r.watch().check(t);
    expect(await r.incidents.countOpen(t)).toBe(0);
    await redis.xadd(dead, '*', 'stream_id', '2-0', 'error', 'refused');
    await r.watch().check(t);
    const [i] = await r.incidents.list(t, 'open', 10);
    expect(i).toMatchObject({ kind: 'audit_dead_letters', subject: 'outbox', details: { dead_letters: 1 } });
    await r.incidents.transition(t, i!.id, 'resolved', 'api_key:ops');
    await new Promise((res) => setTimeout(res, 5));
    await r.watch().check(t);
    expect(await r.incidents.countOpen(t)).toBe(0);
    await redis.xadd(dead, '*', 'stream_id', '3-0', 'error', 'refused again');
    await r.watch().check(t);
    expect((await r.incidents.list(t, 'open', 10)).map((x) => x.details.dead_letters)).toEqual([1]);
  });

  test('time-stamp authority failures of the window raise tsa_failure', async ({ pool, redis }) => {
    const r = await rig(pool, redis);
    const t = r.tenant.id;
    await pool.query(`INSERT INTO compliance_timestamps (tenant_id, day, sha256, status, error, tsa_url, created_at)
      VALUES ($1, '2026-01-01', '\\x00', 'failed', 'tsa_unreachable: refused', 'http://tsa', now() - interval '2 hours')`, [t]);
    await r.watch().check(t);
    expect(await r.incidents.countOpen(t)).toBe(0);
    await pool.query(`INSERT INTO compliance_timestamps (tenant_id, day, sha256, status, error, tsa_url)
      VALUES ($1, '2026-01-02', '\\x01', 'failed', 'tsa_unreachable: refused', 'http://tsa')`, [t]);
    await r.watch().check(t);
    expect((await r.incidents.list(t, 'open', 10)).map((i) => [i.kind, i.details])).toEqual([
      ['tsa_failure', { failures: 1, last_error: 'tsa_unreachable: refused' }],
    ]);
  });

  test('an OTP provider failing repeatedly, per tenant and provider, counted across engine processes', async ({ pool, redis }) => {
    const r = await rig(pool, redis);
    const other = await rig(pool, redis);
    const t = r.tenant.id;
    // Another process's window: its failures count with this one's.
    const elsewhere = new ProviderFailureWindow(redis, LIMITS.providerFailures, LIMITS.providerWindowSec * 1000);
    r.window.record(t, 'netgsm', 'network');
    elsewhere.record(t, 'netgsm', 'network');
    r.window.record(other.tenant.id, 'netgsm', 'network');
    r.window.record(t, 'verimor', 'network');
    await until(async () => (await r.window.failing(t, 0)).length === 0 && (await redis.zcard(keys.otpProviderFailures(t, 'netgsm'))) === 2);
    await r.watch().check(t);
    expect(await r.incidents.countOpen(t)).toBe(0);
    elsewhere.record(t, 'netgsm', '30');
    await until(async () => (await r.window.failing(t)).length === 1);
    await r.watch().check(t);
    await other.watch().check(other.tenant.id);
    expect((await r.incidents.list(t, 'open', 10)).map((i) => [i.kind, i.subject, i.details.code])).toEqual([['otp_provider_failing', 'netgsm', '30']]);
    expect(await other.incidents.countOpen(other.tenant.id)).toBe(0);
  });

  test('a round looks only at tenants with the dashboard, and one tenant\'s counters never raise another\'s incident', async ({ pool, redis }) => {
    const withDash = await rig(pool, redis, ['nac']);
    const without = await rig(pool, redis, ['vouchers']);
    const now = Date.now();
    // As the recorder counts them: the minute's total and its 10-second step's (perStep, the surge's sliding window).
    for (const x of [withDash, without]) {
      await redis.hset(keys.activityMinute(x.tenant.id, Math.floor(now / MIN)), ACTIVITY.rejects, 50, perStep(ACTIVITY.rejects, Math.floor(now / 10_000) % 6), 50);
    }
    const watch = new IncidentWatch({
      tenants: { list: async () => [withDash.tenant, without.tenant] }, nas: { get: () => null }, incidents: withDash.incidents,
      events: new EventLog(redis), providerFailures: withDash.window, redis, pool, thresholds: LIMITS, log, now: () => now,
    });
    await watch.runOnce();
    expect(await withDash.incidents.countOpen(withDash.tenant.id)).toBe(1);
    expect(await without.incidents.countOpen(without.tenant.id)).toBe(0);
  });
});
