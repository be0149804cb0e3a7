import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import type { IncidentThresholds } from '../../engine/config.js';
import { DecisionRecorder } from '../../engine/decisions/decision-recorder.js';
import { IncidentService } from '../../engine/incidents/incident-service.js';
import { IncidentWatch } from '../../engine/incidents/incident-watch.js';
import { ProviderFailureWindow } from '../../engine/incidents/provider-failure-window.js';
import { isSurge, readSurgeWindow } from '../../engine/incidents/surge-window.js';
import { EventLog } from '../../engine/events/event-log.js';
import { createLogger } from '../../engine/logger.js';
import { Metrics } from '../../engine/metrics.js';
import { defineScripts } from '../../engine/redis/scripts.js';
import type { SignInDecision } from '../../engine/signin/decision-sink.js';
import { TenantService } from '../../engine/tenants/tenant-service.js';
import { poolTest, storesTest as test } from '../support/fixture.js';

/**
 * The failed-sign-in surge (engine/incidents/surge-window.ts) driven with a
 * controlled clock: decisions written by the real recorder (real Redis, the
 * real script) at chosen instants, and the detector run at chosen instants,
 * every 30 s as INCIDENT_WATCH_MS runs it. The defaults of the settings.
 */
const LIMITS: IncidentThresholds = {
  watchMs: 30_000, nasSilentSec: 300, surgeRejects: 50, surgeRejectPct: 50, surgeWindowSec: 60, surgeBaselineFactor: 3,
  errorRatePct: 5, errorMinDecisions: 20, anchorLagMin: 10, providerFailures: 5, providerWindowSec: 300, recentSec: 3600,
};
const MIN = 60_000;
/** A whole hour, so offsets below are offsets into a minute. */
const T0 = Date.UTC(2026, 10, 28, 12, 0, 0);
const log = createLogger('silent');

const decision = (tenantId: string, outcome: 'accept' | 'reject', at: number): SignInDecision =>
  ({ tenantId, hotspotId: 'hs_gate', method: 'voucher', outcome, reason: outcome === 'accept' ? '' : 'voucher_not_found', at });

/** Writes the decisions through the dashboard's recorder (record-decisions-6.lua), as sign-ins do. */
async function record(redis: Redis, list: SignInDecision[]): Promise<void> {
  defineScripts(redis);
  const rec = new DecisionRecorder(redis, log, new Metrics(), { record: () => undefined });
  for (const d of list) rec.record(d);
  await rec.close();
}

/** An hour of quiet noise before `until`: one unknown code a minute and a good sign-in. */
function quietHour(t: string, until: number): SignInDecision[] {
  const out: SignInDecision[] = [];
  for (let at = until - 60 * MIN; at < until; at += 30_000) out.push(decision(t, at % MIN === 30_000 ? 'reject' : 'accept', at));
  return out;
}

/** 150 unknown codes within 8 s from `start`, and 200 good sign-ins spread over the same minute. */
function attackBesideBurst(t: string, start: number): SignInDecision[] {
  const minute = Math.floor(start / MIN) * MIN;
  const out: SignInDecision[] = [];
  for (let i = 0; i < 150; i++) out.push(decision(t, 'reject', start + Math.floor((i * 8_000) / 150)));
  for (let i = 0; i < 200; i++) out.push(decision(t, 'accept', minute + Math.floor((i * 59_000) / 200)));
  return out;
}

describe('failed sign-in surge over a sliding window', () => {
  test('150 unknown codes within seconds beside 200 good sign-ins in the same minute: seen at every alignment and check phase', async ({ redis }) => {
    // The burst at every 5 s of a minute (straddling the minute's end too), the checks at every 5 s phase of their 30 s
    // period. Each check sees what was recorded up to a flush (250 ms) before it, as in the engine: the decisions
    // are written as the clock reaches them, not all in advance.
    for (let offset = 0; offset < 60_000; offset += 5_000) {
      for (let phase = 0; phase < LIMITS.watchMs; phase += 5_000) {
        const t = `tn_surge${randomBytes(5).toString('hex')}`;
        const start = T0 + 2 * 60 * MIN + offset;
        await record(redis, quietHour(t, Math.floor(start / MIN) * MIN));
        const pending = attackBesideBurst(t, start).sort((a, b) => a.at - b.at);
        const seen: boolean[] = [];
        // Checks every 30 s from before the burst's minute until 90 s after its start: one check period and the window.
        for (let at = Math.floor(start / MIN) * MIN - LIMITS.watchMs + phase; at <= start + 90_000; at += LIMITS.watchMs) {
          const cut = pending.findIndex((d) => d.at > at - 300);
          await record(redis, pending.splice(0, cut < 0 ? pending.length : cut));
          seen.push(isSurge(await readSurgeWindow(redis, t, at, LIMITS.surgeWindowSec), LIMITS));
        }
        expect(seen.some(Boolean), `burst at +${offset / 1000} s of its minute, checks at phase ${phase / 1000} s: ${seen}`).toBe(true);
      }
    }
  });

  test('a steady failure rate raises nothing: low, and above the floor but usual for the hour', async ({ redis }) => {
    for (const [perMinute, acceptsPerMinute] of [[30, 100], [80, 200]] as const) {
      const t = `tn_steady${randomBytes(5).toString('hex')}`;
      const list: SignInDecision[] = [];
      const from = T0;
      const to = T0 + 70 * MIN;
      for (let at = from; at < to; at += MIN / perMinute) list.push(decision(t, 'reject', Math.floor(at)));
      for (let at = from; at < to; at += MIN / acceptsPerMinute) list.push(decision(t, 'accept', Math.floor(at)));
      await record(redis, list);
      // Checked every 10 s once an hour lies behind the window: its baseline is the steady rate itself.
      for (let at = from + 61 * MIN; at < to; at += 10_000) {
        const w = await readSurgeWindow(redis, t, at, LIMITS.surgeWindowSec);
        expect(isSurge(w, LIMITS), `${perMinute}/min at ${new Date(at).toISOString()}: ${JSON.stringify(w)}`).toBe(false);
      }
    }
  });

  test('quiet-time noise under the floor is no surge, even with no baseline and no good sign-ins', async ({ redis }) => {
    const t = `tn_quiet${randomBytes(5).toString('hex')}`;
    const start = T0 + 30_000;
    await record(redis, Array.from({ length: LIMITS.surgeRejects }, (_, i) => decision(t, 'reject', start + i * 100)));
    const w = await readSurgeWindow(redis, t, start + 6_000, LIMITS.surgeWindowSec);
    expect(w).toMatchObject({ rejects: LIMITS.surgeRejects, accepts: 0, baseline: 0 });
    expect(isSurge(w, LIMITS)).toBe(false);
  });
});

poolTest('the engine\'s watch raises signin_failure_surge for the attack beside a burst of good sign-ins, with what it saw', async ({ pool, redis }) => {
  const tenant = await new TenantService(pool, redis).create(`Surge ${randomBytes(3).toString('hex')}`, ['dashboard']);
  const events = new EventLog(redis);
  const incidents = new IncidentService(pool, events);
  // The burst in the middle of a minute, so a calendar minute held all 350 decisions (43% failures: the old rule saw none).
  const start = Math.floor(Date.now() / MIN) * MIN - 3 * MIN + 20_000;
  await record(redis, attackBesideBurst(tenant.id, start));
  const watch = new IncidentWatch({
    tenants: { list: async () => [tenant] }, nas: { get: () => null }, incidents, events,
    providerFailures: new ProviderFailureWindow(redis, LIMITS.providerFailures, LIMITS.providerWindowSec * 1000), redis, pool,
    thresholds: LIMITS, log, now: () => start + 15_000,
  });
  await watch.check(tenant.id);
  const open = await incidents.list(tenant.id, 'open', 10);
  expect(open.map((i) => [i.kind, i.subject, i.details])).toEqual([['signin_failure_surge', 'signin', {
    window_start: new Date(start + 15_000 - 50_000 - ((start + 15_000) % 10_000)).toISOString(), window_sec: 60,
    rejects: 150, accepts: expect.any(Number), baseline: 0,
  }]]);
  expect(open[0]!.title).toMatch(/^Failed sign-ins surging: 150 rejected in 60 s/);
});
