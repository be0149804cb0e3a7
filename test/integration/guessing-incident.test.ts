import { describe, expect } from 'vitest';
import type { Redis } from 'ioredis';
import { createLogger } from '../../engine/index.js';
import type { IncidentThresholds } from '../../engine/config.js';
import { GuessingDetector } from '../../engine/incidents/guessing-detector.js';
import { IncidentService } from '../../engine/incidents/incident-service.js';
import { IncidentWatch } from '../../engine/incidents/incident-watch.js';
import { ProviderFailureWindow } from '../../engine/incidents/provider-failure-window.js';
import { EventLog } from '../../engine/events/event-log.js';
import { keys } from '../../engine/redis/keys.js';
import { defineScripts, serverRunId } from '../../engine/redis/scripts.js';
import { DEFAULT_GUESSING_LIMITS } from '../../engine/signin/sign-in-settings.js';
import { GUESS_REFUSAL_WINDOW_MS } from '../../engine/signin/voucher-method.js';
import { TenantService } from '../../engine/tenants/tenant-service.js';
import { useVoucher } from '../fixtures/lua-voucher.js';
import { poolTest as test } from '../support/fixture.js';
import { mac } from '../support/macs.js';

/**
 * The signin_guessing incident: refusals of the guessing limits, counted per
 * hotspot by the real use-voucher-18.lua, raise it once the tenant's
 * threshold is reached, once however many processes look, and once per
 * window: an operator's resolve is not undone by the same window's count.
 */
const LIMITS: IncidentThresholds = {
  watchMs: 1000, nasSilentSec: 60, surgeRejects: 1_000_000, surgeRejectPct: 100, errorRatePct: 100, errorMinDecisions: 1_000_000,
  anchorLagMin: 1440, providerFailures: 100, providerWindowSec: 60, recentSec: 600, surgeWindowSec: 60, surgeBaselineFactor: 3,
};
const W = GUESS_REFUSAL_WINDOW_MS;

describe('signin_guessing incident', () => {
  test('raised once when a hotspot\'s refusals reach the threshold, once per window, counted by the use script', async ({ pool, redis }) => {
    defineScripts(redis as Redis);
    const tenants = new TenantService(pool, redis);
    const t = (await tenants.create(`Guessing ${Math.random().toString(36).slice(2, 8)}`, ['dashboard'])).id;
    await redis.set(keys.loaded(t), await serverRunId(redis));
    const events = new EventLog(redis);
    const incidents = new IncidentService(pool, events);
    let threshold = 3;
    const settings = { guessing: async () => ({ ...DEFAULT_GUESSING_LIMITS, incident_refusals: threshold }) };
    const detector = new GuessingDetector(redis, incidents, settings);

    // A guesser at hs_g: one unknown code allowed, then refused; the clock inside one window.
    const start = Math.floor(Date.now() / W) * W;
    const attempt = (now: number, hotspot = 'hs_g') => useVoucher(redis, t, 'NOPE', { now, mac: mac(1), hotspot, guessing: { perDevice: 1, windowMs: W } });
    expect(await attempt(start + 1000)).toEqual(['not_found']);
    for (let i = 1; i <= 2; i++) expect((await attempt(start + 1000 + i))[0]).toBe('too_many_attempts');
    // Another hotspot's refusals are its own.
    await attempt(start + 1000, 'hs_other');
    await attempt(start + 1001, 'hs_other');
    await detector.check(t, start + 2000);
    expect(await incidents.countOpen(t)).toBe(0);

    expect((await attempt(start + 1003))[0]).toBe('too_many_attempts');
    // Five processes at once.
    await Promise.all(Array.from({ length: 5 }, () => detector.check(t, start + 2000)));
    const open = await incidents.list(t, 'open', 10);
    expect(open.map((i) => [i.kind, i.subject, i.site_id, i.severity, i.details.refusals, i.details.threshold])).toEqual([
      ['signin_guessing', 'hs_g', 'hs_g', 'warning', 3, 3],
    ]);
    expect(open[0]!.details.window_start).toBe(new Date(start).toISOString());
    const raised = (await redis.xrange(keys.events(t), '-', '+')).filter(([, f]) => f.includes('incident.raised'));
    expect(raised).toHaveLength(1);

    // Still being guessed: still the one incident. Resolved by an operator: not again in this window.
    await attempt(start + 1004);
    await detector.check(t, start + 3000);
    expect(await incidents.countOpen(t)).toBe(1);
    await incidents.transition(t, open[0]!.id, 'resolved', 'api_key:test');
    await attempt(start + 1005);
    await detector.check(t, start + 4000);
    expect(await incidents.countOpen(t)).toBe(0);

    // The next window, through the engine's detector round: raised again.
    const next = start + W;
    // The first guess has left the device's window by then: one more guess, then three refusals.
    for (let i = 0; i < 4; i++) await attempt(next + 1000 + i);
    const watch = new IncidentWatch({
      tenants: { list: async () => [] }, nas: { get: () => null }, incidents, events,
      providerFailures: new ProviderFailureWindow(redis, LIMITS.providerFailures, LIMITS.providerWindowSec * 1000),
      redis, pool, thresholds: LIMITS, log: createLogger('silent'), now: () => next + 2000, guessing: detector,
    });
    await watch.check(t);
    const again = await incidents.list(t, 'open', 10);
    expect(again.map((i) => [i.kind, i.subject, i.details.window_start])).toEqual([['signin_guessing', 'hs_g', new Date(next).toISOString()]]);

    // A threshold of 0 raises none.
    await incidents.transition(t, again[0]!.id, 'resolved', 'api_key:test');
    threshold = 0;
    for (let i = 0; i < 3; i++) await attempt(next + 2 * W + 1000 + i);
    await detector.check(t, next + 2 * W + 2000);
    expect(await incidents.countOpen(t)).toBe(0);
  });
});
