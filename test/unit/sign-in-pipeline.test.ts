import { describe, expect, it } from 'vitest';
import { AppError, Errors } from '../../engine/errors.js';
import type { HotspotRef } from '../../engine/hotspots/hotspot-service.js';
import type { ActorRequest } from '../../engine/sessions/actor-ports.js';
import type { ReplyValue } from '../../engine/sessions/messages.js';
import type { SignInDecision } from '../../engine/signin/decision-sink.js';
import type { SignInContext, SignInMethod, StartedSession, StartOutcome } from '../../engine/signin/method.js';
import { portalSettingsOf } from '../../engine/hotspots/portal-settings.js';
import { SignInPipeline, type SignInActors } from '../../engine/signin/sign-in-pipeline.js';

/**
 * The pipeline's own steps, with a scripted method in place of a Lua script:
 * what it loads, retries, tells the actors and records for each outcome.
 */
describe('SignInPipeline', () => {
  const hotspot: HotspotRef = {
    id: 'hs_1', tenantId: 'tn_1', name: 'Lobby', timezone: 'Europe/Istanbul', redirectUrl: 'https://example.com/', sessionMinutes: null,
    portal: portalSettingsOf(null, null), uamSecret: null,
  };
  const session = (over: Partial<StartedSession> = {}): StartedSession => ({ sessionId: 'sess_1', untilMs: 1_000, reused: false, replaced: '', ...over });

  function setup(outcomes: StartOutcome[], limit?: () => Promise<void>, ref: HotspotRef = hotspot) {
    const decisions: SignInDecision[] = [];
    const actorCalls: unknown[] = [];
    const loads: string[] = [];
    const seen: SignInContext[] = [];
    const settled: StartOutcome[] = [];
    const actors: SignInActors = {
      wake: (tenant, hs, tz) => { actorCalls.push(['wake', tenant, hs, tz]); },
      // The pipeline only tells the actor of a started session, which the actor answers with done.
      request: <V extends ReplyValue>(msg: ActorRequest) => { actorCalls.push(msg); return Promise.resolve({ done: true } as V); },
    };
    const method: SignInMethod<string, StartedSession, string> = {
      name: 'sms_otp',
      limit,
      start: (ctx) => { seen.push(ctx); const o = outcomes.shift(); if (!o) throw new Error('no more outcomes'); return Promise.resolve(o); },
      answer: (ctx, s) => `${s.sessionId} ${ctx.mac} ${ctx.hotspot.redirectUrl}`,
      settled: (o) => { settled.push(o); },
    };
    const pipeline = new SignInPipeline(
      { ref: (id) => Promise.resolve(id === ref.id ? ref : null) },
      { loadIntoRedis: (t, runId) => { loads.push(`${t} ${runId}`); return Promise.resolve(0); } },
      actors, { record: (d) => { decisions.push(d); } }, () => 42);
    const run = (mac = '02-aa-00-00-00-01', tenant?: string, viaNas?: boolean) =>
      pipeline.run(method, { hotspotId: 'hs_1', mac, ip: '10.0.0.1', ssid: 'Guest', viaNas }, 'input', tenant);
    return { run, decisions, actorCalls, loads, seen, settled };
  }

  it('an accept: the method sees the canonical MAC and the hotspot, the actor is woken, the decision recorded', async () => {
    const s = setup([{ kind: 'started', session: session() }]);
    expect(await s.run()).toBe('sess_1 02:AA:00:00:00:01 https://example.com/');
    expect(s.seen[0]).toEqual({ hotspot, tenantId: 'tn_1', mac: '02:AA:00:00:00:01', ip: '10.0.0.1', ssid: 'Guest', source: '', viaNas: false, now: 42, device: 'other' });
    expect(s.actorCalls).toEqual([['wake', 'tn_1', 'hs_1', 'Europe/Istanbul']]);
    expect(s.decisions).toEqual([{ tenantId: 'tn_1', hotspotId: 'hs_1', method: 'sms_otp', outcome: 'accept', reason: '', at: 42, mac: '02:AA:00:00:00:01' }]);
  });

  it('a replaced session goes to the actor to end; a session given back wakes nothing', async () => {
    const replaced = setup([{ kind: 'started', session: session({ replaced: 'sess_0' }) }]);
    await replaced.run();
    expect(replaced.actorCalls[1]).toEqual({ t: 'started', tenant: 'tn_1', hs: 'hs_1', tz: 'Europe/Istanbul', sid: 'sess_1', mac: '02:AA:00:00:00:01', replaced: 'sess_0' });
    const reused = setup([{ kind: 'started', session: session({ reused: true }) }]);
    await reused.run();
    expect(reused.actorCalls).toEqual([]);
  });

  it('a new session at a MAC-authentication hotspot goes to the actor for its CoA; not when the NAS asked, nor when given back', async () => {
    const macAuth: HotspotRef = { ...hotspot, portal: { ...hotspot.portal, gateway: 'mac_auth' } };
    const fresh = setup([{ kind: 'started', session: session() }], undefined, macAuth);
    await fresh.run();
    expect(fresh.actorCalls[1]).toEqual({ t: 'started', tenant: 'tn_1', hs: 'hs_1', tz: 'Europe/Istanbul', sid: 'sess_1', mac: '02:AA:00:00:00:01', replaced: '', coa: true });
    const viaNas = setup([{ kind: 'started', session: session() }], undefined, macAuth);
    await viaNas.run(undefined, undefined, true);
    expect(viaNas.actorCalls).toEqual([['wake', 'tn_1', 'hs_1', 'Europe/Istanbul']]);
    const reused = setup([{ kind: 'started', session: session({ reused: true }) }], undefined, macAuth);
    await reused.run();
    expect(reused.actorCalls).toEqual([]);
  });

  it('not_loaded: loads the tenant into that server once and runs the step again; twice is a 503 and no decision', async () => {
    const once = setup([{ kind: 'not_loaded', runId: 'r1' }, { kind: 'started', session: session() }]);
    await once.run();
    expect(once.loads).toEqual(['tn_1 r1']);
    expect(once.settled.map((o) => o.kind)).toEqual(['started']);
    const twice = setup([{ kind: 'not_loaded', runId: 'r1' }, { kind: 'not_loaded', runId: 'r2' }]);
    await expect(twice.run()).rejects.toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(twice.settled.map((o) => o.kind)).toEqual(['not_loaded']);
    expect(twice.decisions).toEqual([]);
  });

  it("a refusal by the method's step or by its rate limit is thrown and recorded with the error's code", async () => {
    const refused = setup([{ kind: 'refused', answer: 'blocked', error: Errors.DEVICE_BLOCKED() }]);
    await expect(refused.run()).rejects.toMatchObject({ code: 'device_blocked' });
    expect(refused.decisions).toMatchObject([{ outcome: 'reject', reason: 'device_blocked', method: 'sms_otp' }]);
    expect(refused.actorCalls).toEqual([]);
    const limited = setup([], () => Promise.reject(new AppError('otp_rate_limited', 429, 'Too many codes')));
    await expect(limited.run()).rejects.toMatchObject({ code: 'otp_rate_limited' });
    expect(limited.decisions).toMatchObject([{ outcome: 'reject', reason: 'otp_rate_limited' }]);
    expect(limited.seen).toEqual([]);
  });

  it('a bad MAC, an unknown hotspot or one of another tenant: refused before any step; only the bad MAC at a known hotspot is recorded', async () => {
    const s = setup([]);
    await expect(s.run('nope')).rejects.toMatchObject({ code: 'invalid_mac' });
    await expect(s.run(undefined, 'tn_other')).rejects.toMatchObject({ code: 'hotspot_not_found' });
    expect(s.seen).toEqual([]);
    // An auth.failure with the catalogue's code, as the OTP service records its own; no device to name.
    expect(s.decisions).toEqual([{ tenantId: 'tn_1', hotspotId: 'hs_1', method: 'sms_otp', outcome: 'reject', reason: 'invalid_mac', at: 42 }]);
  });
});
