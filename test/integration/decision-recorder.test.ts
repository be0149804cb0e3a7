import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { DecisionRecorder, RETRY_FOR_MS } from '../../engine/decisions/decision-recorder.js';
import { activityBuckets, stepOf } from '../../engine/events/activity-keys.js';
import { DECISIONS_MAXLEN } from '../../engine/events/types.js';
import { createLogger } from '../../engine/logger.js';
import { Metrics } from '../../engine/metrics.js';
import { defineScripts } from '../../engine/redis/scripts.js';
import { MetricsDecisionSink, rejectsOnly, type SignInDecision } from '../../engine/signin/decision-sink.js';
import { keys, storesTest as test } from '../support/fixture.js';

/** engine/decisions/decision-recorder.ts against the real Redis: what one flush writes, and a Redis that is away. */
describe('DecisionRecorder', () => {
  const AT = 1_790_000_000_000 - (1_790_000_000_000 % 3_600_000) + 5_000;
  const decision = (tenantId: string, over: Partial<SignInDecision>): SignInDecision =>
    ({ tenantId, hotspotId: 'hs_rec', method: 'voucher', outcome: 'accept', reason: '', at: AT, ...over });

  test('one flush: steps, counts per site, method and reason, errors for 5xx reasons, the list and the events; sources filled in', async ({ redis }) => {
    const t = `tn_rec${randomBytes(5).toString('hex')}`;
    const metrics = new Metrics();
    defineScripts(redis); // the recorder writes through record-decisions-6.lua, as the engine's connection has it
    const rec = new DecisionRecorder(redis, createLogger('silent'), metrics, new MetricsDecisionSink(metrics));
    rec.record(decision(t, {}));
    rec.record(decision(t, { method: 'sms_otp', at: AT + 10_000 }));
    rec.record(decision(t, { method: 'sms_otp', outcome: 'reject', reason: 'otp_send_failed' }));
    rec.record(decision(t, { outcome: 'reject', reason: 'voucher_expired', hotspotId: 'hs_two', source: 'radius' }));
    await rec.close();

    const [minute, hour] = activityBuckets(t, AT);
    const expected = {
      acc: '2', 'acc@hs_rec': '2', 'acc#voucher': '1', 'acc#sms_otp': '1',
      rej: '2', 'rej@hs_rec': '1', 'rej@hs_two': '1', 'rej#sms_otp': '1', 'rej#voucher': '1',
      err: '1', 'err@hs_rec': '1', 'r:otp_send_failed': '1', 'r:voucher_expired': '1',
    };
    // The minute bucket also counts sign-ins per 10-second step of the minute (perStep), for the failure-surge window.
    expect(await redis.hgetall(minute)).toEqual({ ...expected, 'acc~0': '1', 'acc~1': '1', 'rej~0': '2' });
    // The hour bucket also counts sign-ins per hotspot, method and outcome (the sign-in tally fields), for the console's reports.
    expect(await redis.hgetall(hour)).toEqual({
      ...expected, 'm:a:voucher@hs_rec': '1', 'm:a:sms_otp@hs_rec': '1', 'm:r:sms_otp@hs_rec': '1', 'm:r:voucher@hs_two': '1',
    });
    expect(await redis.get(keys.decisionStep(t, stepOf(AT)))).toBe('3');
    expect(await redis.get(keys.decisionStep(t, stepOf(AT) + 1))).toBe('1');
    expect(await redis.ttl(keys.decisionStep(t, stepOf(AT)))).toBeGreaterThan(100);

    const list = (await redis.xrange(keys.decisions(t), '-', '+')).map(([, f]) => f);
    expect(list).toEqual([
      ['at', String(AT), 'outcome', 'accept', 'method', 'voucher', 'reason', '', 'hotspot', 'hs_rec', 'source', 'portal', 'count', '1'],
      ['at', String(AT + 10_000), 'outcome', 'accept', 'method', 'sms_otp', 'reason', '', 'hotspot', 'hs_rec', 'source', 'otp', 'count', '1'],
      ['at', String(AT), 'outcome', 'reject', 'method', 'sms_otp', 'reason', 'otp_send_failed', 'hotspot', 'hs_rec', 'source', 'otp', 'count', '1'],
      ['at', String(AT), 'outcome', 'reject', 'method', 'voucher', 'reason', 'voucher_expired', 'hotspot', 'hs_two', 'source', 'radius', 'count', '1'],
    ]);
    const events = (await redis.xrange(keys.events(t), '-', '+')).map(([, f]) => [f[1], f[5], JSON.parse(f[7]!)]);
    expect(events).toEqual([
      ['auth.success', 'hs_rec', { hotspot_id: 'hs_rec', method: 'voucher', source: 'portal' }],
      ['auth.success', 'hs_rec', { hotspot_id: 'hs_rec', method: 'sms_otp', source: 'otp' }],
      ['auth.failure', 'hs_rec', { hotspot_id: 'hs_rec', method: 'sms_otp', reason: 'otp_send_failed', source: 'otp' }],
      ['auth.failure', 'hs_two', { hotspot_id: 'hs_two', method: 'voucher', reason: 'voucher_expired', source: 'radius' }],
    ]);
    // The Prometheus counter still counts each decision as it is recorded.
    expect(metrics.value(MetricsDecisionSink.METRIC, 'sms_otp\u001freject\u001fotp_send_failed')).toBe(1);
    await redis.del(minute, hour, keys.decisions(t), keys.events(t), keys.decisionStep(t, stepOf(AT)), keys.decisionStep(t, stepOf(AT) + 1));
  });

  test("a NAS's re-checks are folded: one row per hotspot, method, outcome and reason with its count, counted, no events", async ({ redis }) => {
    const t = `tn_rec${randomBytes(5).toString('hex')}`;
    defineScripts(redis);
    const rec = new DecisionRecorder(redis, createLogger('silent'), new Metrics(), { record: () => undefined });
    for (let i = 0; i < 990; i++) rec.record(decision(t, { method: 'mac_auth', source: 'radius', at: AT + i }));
    // A RADIUS thread's report: ten answers from the auth mirror, the last at AT + 999 (RadiusHandler.answeredFromMirror).
    rec.record(decision(t, { method: 'mac_auth', source: 'radius', at: AT + 999 }), 10);
    for (let i = 0; i < 3; i++) rec.record(decision(t, { method: 'mac_auth', source: 'radius', outcome: 'reject', reason: 'not_signed_in', hotspotId: 'hs_two', at: AT + i }));
    rec.record(decision(t, { method: 'uam_login', source: 'radius', at: AT + 7 }));
    rec.record(decision(t, { method: 'sms_otp', at: AT + 8 }));
    await rec.close();

    const [minute] = activityBuckets(t, AT);
    // Re-checks count per method and reason, never as logins (acc/rej are sign-ins only).
    expect(await redis.hgetall(minute)).toEqual({
      acc: '1', 'acc@hs_rec': '1', 'acc#sms_otp': '1', 'acc#mac_auth': '1000', 'acc#uam_login': '1', 'acc~0': '1',
      'rej#mac_auth': '3', 'r:not_signed_in': '3',
    });
    expect(await redis.get(keys.decisionStep(t, stepOf(AT)))).toBe('1005');
    const list = (await redis.xrange(keys.decisions(t), '-', '+')).map(([, f]) => f);
    expect(list).toEqual([
      ['at', String(AT + 8), 'outcome', 'accept', 'method', 'sms_otp', 'reason', '', 'hotspot', 'hs_rec', 'source', 'otp', 'count', '1'],
      ['at', String(AT + 999), 'outcome', 'accept', 'method', 'mac_auth', 'reason', '', 'hotspot', 'hs_rec', 'source', 'radius', 'count', '1000'],
      ['at', String(AT + 2), 'outcome', 'reject', 'method', 'mac_auth', 'reason', 'not_signed_in', 'hotspot', 'hs_two', 'source', 'radius', 'count', '3'],
      ['at', String(AT + 7), 'outcome', 'accept', 'method', 'uam_login', 'reason', '', 'hotspot', 'hs_rec', 'source', 'radius', 'count', '1'],
    ]);
    const events = (await redis.xrange(keys.events(t), '-', '+')).map(([, f]) => f[1]);
    expect(events).toEqual(['auth.success']);
    await redis.del(minute, activityBuckets(t, AT)[1], keys.decisions(t), keys.events(t), keys.decisionStep(t, stepOf(AT)));
  });

  test("one re-check group's packets in two 10-second steps, or another tenant's, are rows of their own", async ({ redis }) => {
    const t = `tn_rec${randomBytes(5).toString('hex')}`, u = `tn_rec${randomBytes(5).toString('hex')}`;
    defineScripts(redis);
    const rec = new DecisionRecorder(redis, createLogger('silent'), new Metrics(), { record: () => undefined });
    for (let i = 0; i < 3; i++) rec.record(decision(t, { method: 'mac_auth', source: 'radius', at: AT + i }));
    rec.record(decision(t, { method: 'mac_auth', source: 'radius', at: AT + 10_001 }), 2); // a report of two begins a group
    rec.record(decision(u, { method: 'mac_auth', source: 'radius', at: AT + 3 })); // the same hotspot id under another tenant
    await rec.close();

    const rows = async (tenant: string) => (await redis.xrange(keys.decisions(tenant), '-', '+')).map(([, f]) => `${f[1]} x${f[f.length - 1]}`);
    expect(await rows(t)).toEqual([`${AT + 2} x3`, `${AT + 10_001} x2`]);
    expect(await rows(u)).toEqual([`${AT + 3} x1`]);
    expect(await redis.get(keys.decisionStep(t, stepOf(AT)))).toBe('3');
    expect(await redis.get(keys.decisionStep(t, stepOf(AT + 10_000)))).toBe('2');
    for (const x of [t, u]) {
      await redis.del(...activityBuckets(x, AT), keys.decisions(x), keys.events(x), keys.decisionStep(x, stepOf(AT)), keys.decisionStep(x, stepOf(AT + 10_000)));
    }
  });

  test('a flush of 30,000 sign-ins goes out in bounded calls: every one listed, counted and emitted, the process unharmed', async ({ redis }) => {
    // One call with them all spread 210,000 arguments through ioredis, whose auto-pipeline then crashed the process.
    const t = `tn_rec${randomBytes(5).toString('hex')}`;
    defineScripts(redis);
    const metrics = new Metrics();
    const rec = new DecisionRecorder(redis, createLogger('silent'), metrics, { record: () => undefined });
    const N = 30_000;
    for (let i = 0; i < N; i++) rec.record(decision(t, { at: AT + (i % 5_000) }));
    await rec.close();
    expect(metrics.value('dashboard_decision_flush_errors_total')).toBe(0);
    // The list keeps about its newest DECISIONS_MAXLEN (trimmed by whole nodes); the events all of them.
    expect(await redis.xlen(keys.decisions(t))).toBeGreaterThanOrEqual(DECISIONS_MAXLEN);
    expect(await redis.xlen(keys.events(t))).toBe(N);
    expect(await redis.get(keys.decisionStep(t, stepOf(AT)))).toBe(String(N));
    expect(await redis.hget(activityBuckets(t, AT)[0], 'acc')).toBe(String(N));
    expect(await redis.ping()).toBe('PONG');
    await redis.del(...activityBuckets(t, AT), keys.decisions(t), keys.events(t), keys.decisionStep(t, stepOf(AT)));
  });

  test('with Redis away, record() neither throws nor waits; the lost flush is counted', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    dead.on('error', () => undefined);
    defineScripts(dead);
    const metrics = new Metrics();
    const rec = new DecisionRecorder(dead, createLogger('silent'), metrics, { record: () => undefined });
    // Neither waits: every call returns before the event loop turns once (no promise, no I/O awaited).
    let turned = false;
    setImmediate(() => { turned = true; });
    for (let i = 0; i < 1000; i++) expect(rec.record(decision('tn_away', { at: AT + i }))).toBeUndefined();
    expect(turned).toBe(false);
    await rec.close();
    expect(metrics.value('dashboard_decision_flush_errors_total')).toBe(1);
    // Closing, the recorder sends once more what failed and gives it up: counted, not held.
    expect(metrics.value('dashboard_decisions_dropped_total')).toBe(1000);
    dead.disconnect();
  });

  /**
   * The engine's client with its record-decisions script replaced by `fail(call, real)`: the fault (Redis away, an
   * answer lost on the way back) comes from the test, the writes from the real Redis.
   */
  const faulty = (redis: Redis, fail: (call: number, real: () => Promise<number>) => Promise<number>): Redis => {
    let calls = 0;
    const real = redis.recordDecisionsV4.bind(redis);
    return new Proxy(redis, {
      get(target, prop) {
        if (prop === 'recordDecisionsV4') return (...args: Parameters<typeof real>) => fail(++calls, () => real(...args));
        const v = Reflect.get(target, prop) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  };
  const lost = () => Promise.reject(new Error('Connection is closed.'));
  const eventTypes = async (redis: Redis, t: string) => (await redis.xrange(keys.events(t), '-', '+')).map(([, f]) => JSON.parse(f[7]!).reason ?? f[1]);

  test('a call whose answer was lost is sent again and applied once: nothing counted, listed or emitted twice', async ({ redis }) => {
    const t = `tn_rec${randomBytes(5).toString('hex')}`;
    defineScripts(redis);
    const metrics = new Metrics();
    // The first call reaches Redis and runs; its answer never comes back (the connection dropped after the write).
    const client = faulty(redis, (call, real) => (call === 1 ? real().then(lost) : real()));
    const rec = new DecisionRecorder(client, createLogger('silent'), metrics, { record: () => undefined });
    for (let i = 0; i < 5; i++) rec.record(decision(t, { outcome: 'reject', reason: 'voucher_not_found', at: AT + i }));
    await rec.flush();
    expect(metrics.value('dashboard_decision_flush_errors_total')).toBe(1);
    await rec.close();

    expect(await redis.xlen(keys.events(t))).toBe(5);
    expect(await redis.xlen(keys.decisions(t))).toBe(5);
    expect(await redis.get(keys.decisionStep(t, stepOf(AT)))).toBe('5');
    expect(await redis.hget(activityBuckets(t, AT)[0], 'rej')).toBe('5');
    expect(metrics.value('dashboard_decisions_dropped_total')).toBe(0);
    // What remembers the applied calls: one hash per tenant, one field per recorder, expiring.
    expect(await redis.hlen(keys.decisionCalls(t))).toBe(1);
    expect(await redis.pttl(keys.decisionCalls(t))).toBeGreaterThan(0);
    await redis.del(...activityBuckets(t, AT), keys.decisions(t), keys.events(t), keys.decisionStep(t, stepOf(AT)), keys.decisionCalls(t));
  });

  test('flush() writes what was recorded before it, though a flush holding less is on its way', async ({ redis }) => {
    const t = `tn_rec${randomBytes(5).toString('hex')}`;
    defineScripts(redis);
    // The first call waits until the test lets it go: a slow flush (the recorder's own tick, in the service).
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    const rec = new DecisionRecorder(faulty(redis, (call, real) => (call === 1 ? held.then(real) : real())), createLogger('silent'),
      new Metrics(), { record: () => undefined });
    rec.record(decision(t, { outcome: 'reject', reason: 'first', at: AT }));
    const first = rec.flush();
    rec.record(decision(t, { outcome: 'accept', reason: '', at: AT + 1 }));
    const second = rec.flush();
    release();
    await Promise.all([first, second]);
    expect(await eventTypes(redis, t)).toEqual(['first', 'auth.success']);
    await rec.close();
    await redis.del(...activityBuckets(t, AT), keys.decisions(t), keys.events(t), keys.decisionStep(t, stepOf(AT)), keys.decisionCalls(t));
  });

  test('while Redis is away the decisions wait, in order, and are written once it is back', async ({ redis }) => {
    const t = `tn_rec${randomBytes(5).toString('hex')}`;
    defineScripts(redis);
    const metrics = new Metrics();
    let away = true;
    const rec = new DecisionRecorder(faulty(redis, (_call, real) => (away ? lost() : real())), createLogger('silent'), metrics, { record: () => undefined });
    rec.record(decision(t, { outcome: 'reject', reason: 'first', at: AT }));
    await rec.flush();
    rec.record(decision(t, { outcome: 'reject', reason: 'second', at: AT + 1 }));
    await rec.flush();
    expect(await redis.xlen(keys.events(t))).toBe(0);
    away = false;
    rec.record(decision(t, { outcome: 'reject', reason: 'third', at: AT + 2 }));
    await rec.flush();
    // Both failed flushes were tried again, the older first, and the newer decision after them.
    expect(await eventTypes(redis, t)).toEqual(['first', 'second', 'third']);
    expect(await redis.get(keys.decisionStep(t, stepOf(AT)))).toBe('3');
    // One a failed flush of the tenant: the second flush stopped at its first call, the retried one, and held the new one behind it.
    expect(metrics.value('dashboard_decision_flush_errors_total')).toBe(2);
    expect(metrics.value('dashboard_decisions_dropped_total')).toBe(0);
    await rec.close();
    await redis.del(...activityBuckets(t, AT), keys.decisions(t), keys.events(t), keys.decisionStep(t, stepOf(AT)));
  });

  test('a call failing for longer than the retry window is given up and counted, not held for ever', async ({ redis }) => {
    const t = `tn_rec${randomBytes(5).toString('hex')}`;
    defineScripts(redis);
    const metrics = new Metrics();
    let now = AT;
    const rec = new DecisionRecorder(faulty(redis, () => lost()), createLogger('silent'), metrics, { record: () => undefined }, () => now);
    for (let i = 0; i < 4; i++) rec.record(decision(t, { at: AT + i }));
    await rec.flush();
    now += RETRY_FOR_MS - 1;
    await rec.flush();
    expect(metrics.value('dashboard_decisions_dropped_total')).toBe(0);
    now += 1;
    await rec.flush();
    expect(metrics.value('dashboard_decisions_dropped_total')).toBe(4);
    // Nothing is left to send: the next flush makes no call.
    const errors = metrics.value('dashboard_decision_flush_errors_total');
    await rec.flush();
    expect(metrics.value('dashboard_decision_flush_errors_total')).toBe(errors);
    await rec.close();
  });

  test('rejectsOnly passes rejects on and drops accepts', () => {
    const seen: SignInDecision[] = [];
    const sink = rejectsOnly({ record: (d) => { seen.push(d); } });
    sink.record(decision('tn_x', {}));
    sink.record(decision('tn_x', { outcome: 'reject', reason: 'otp_invalid' }));
    expect(seen.map((d) => d.reason)).toEqual(['otp_invalid']);
  });
});
