import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { describe, expect } from 'vitest';
import { ActorHost } from '../../engine/sessions/actor-host.js';
import type { ActorContext } from '../../engine/sessions/hotspot-actor.js';
import type { AuthMsg, FromThread, Reply } from '../../engine/sessions/messages.js';
import type { AccessDecision } from '../../engine/sessions/ports.js';
import { until } from '../support/poll.js';
import { keys, luaTest as it } from '../support/lua.js';
import { StandInActor } from '../support/stand-in-actor.js';

/**
 * A hotspot follows its traffic between engine processes (issue 23 item 2):
 * a process whose NAS failed over to it and stayed there is next in line for
 * the hotspot's lease, and the holder, which none of the hotspot's requests
 * reach any more, gives the lease up at its renewal (renew-lease-2.lua
 * ARGV[5]) instead of keeping it, and the other process answering 503, for
 * its whole life (a rolling restart under the same NODE_ID took every
 * hotspot back this way). A holder that still serves the hotspot keeps it.
 */

const silent = pino({ level: 'silent' });
const GRACE = 10_000;
const LEASE_TTL_MS = 30_000;
const ACCEPT: AccessDecision = { accept: true, sessionId: 's', sessionTimeout: 60, idleTimeout: 0, downKbps: 0, upKbps: 0, quotaBytes: 0 } as unknown as AccessDecision;

/** A stand-in whose auth accepts: the hotspot's NAS traffic goes on. */
function accepting(tenant: string, hs: string, ctx: ActorContext): StandInActor {
  const a = new StandInActor(tenant, hs, ctx);
  a.authWith = async () => ACCEPT;
  return a;
}

let redis: Redis;
it.beforeAll(({ redis: r }) => { redis = r; });

/** A host on a fake clock whose lease renewals the test can wait for (the count of answered renewLeaseV2 calls). */
function setup(tenant: string) {
  const hs = `hs_${randomBytes(6).toString('hex')}`;
  const batches: FromThread[][] = [];
  const actors: StandInActor[] = [];
  let clock = Date.now();
  let asked = 0;
  let seq = 0;
  const counting = new Proxy(redis, {
    get(target, prop, receiver) {
      if (prop !== 'renewLeaseV2') return Reflect.get(target, prop, receiver);
      return (...args: Parameters<Redis['renewLeaseV2']>) => target.renewLeaseV2(...args).finally(() => { asked++; });
    },
  });
  const host = new ActorHost({
    redis: counting, nodeId: 'node-here', log: silent, send: (b) => batches.push(b), now: () => clock,
    createActor: (t, h, _tz, ctx) => {
      const a = accepting(t, h, ctx);
      actors.push(a);
      return a;
    },
  });
  const auth = (): AuthMsg => ({ t: 'auth', id: ++seq, tenant, hs, tz: 'UTC', nasId: 'nas_1', mac: 'AA:00:00:00:00:01', userName: 'x' });
  const reply = async (id: number): Promise<Reply> => {
    let r: Reply | undefined;
    await until(() => (r = batches.flat().find((m): m is Reply => m.t === 'reply' && m.id === id)) !== undefined, { intervalMs: 5, what: 'the host\'s reply' });
    return r!;
  };
  /** Moves the clock and runs one tick; resolves once every lease ask it made is answered. */
  const tickAfter = async (ms: number): Promise<void> => {
    clock += ms;
    const before = asked;
    host.tick();
    // A renewal is due every 10 s of the clock: each owned slot asks once.
    await until(() => asked > before, { intervalMs: 5, what: 'the renewal answered' });
  };
  return { host, actors, auth, reply, tickAfter, advance: (ms: number) => { clock += ms; }, lease: keys.lease(tenant, hs), next: keys.leaseNext(tenant, hs) };
}

describe('a hotspot follows its traffic (renew-lease-2.lua ARGV[5], ActorHost)', () => {
  it('the script: a holder that yields gives the lease up only when another process is next in line', async ({ tenant: t }) => {
    const lease = keys.lease(t, 'hs_yield');
    const next = keys.leaseNext(t, 'hs_yield');
    expect(await redis.renewLeaseV2(lease, next, 'node-a', 30_000, 0, GRACE)).toBe(1);
    // Nobody waiting: yielding renews as before.
    expect(await redis.renewLeaseV2(lease, next, 'node-a', 30_000, 1, GRACE, 1)).toBe(1);
    expect(await redis.get(lease)).toBe('node-a');
    // node-b serves the hotspot and is refused: next in line. Without ARGV[5] the holder keeps it (as before).
    expect(await redis.renewLeaseV2(lease, next, 'node-b', 30_000, 1, GRACE)).toBeLessThan(0);
    expect(await redis.renewLeaseV2(lease, next, 'node-a', 30_000, 1, GRACE, 0)).toBe(1);
    expect(await redis.get(lease)).toBe('node-a');
    // With it the holder lets go, and node-b (next in line) takes the lease at its next ask; a third that only woke it cannot.
    expect(await redis.renewLeaseV2(lease, next, 'node-a', 30_000, 1, GRACE, 1)).toBe(0);
    expect(await redis.exists(lease)).toBe(0);
    expect(await redis.renewLeaseV2(lease, next, 'node-c', 30_000, 0, GRACE)).toBeLessThan(0);
    expect(await redis.renewLeaseV2(lease, next, 'node-b', 30_000, 1, GRACE)).toBe(1);
    expect(await redis.get(lease)).toBe('node-b');
    // A process that is not the holder cannot make anyone yield: ARGV[5] of a non-holder changes nothing.
    expect(await redis.renewLeaseV2(lease, next, 'node-a', 30_000, 1, GRACE, 1)).toBeLessThan(0);
    expect(await redis.get(lease)).toBe('node-b');
  });

  it('a holder no request reached for a lease\'s time hands the hotspot to the process next in line at its renewal', async ({ tenant }) => {
    const h = setup(tenant);
    const first = h.auth();
    h.host.receive([first]);
    expect(await h.reply(first.id)).toMatchObject({ ok: true });
    expect(await redis.get(h.lease)).toBe('node-here');
    // The NAS fails over to another process and stays there: its requests are refused there, which puts it next in line.
    expect(await redis.renewLeaseV2(h.lease, h.next, 'node-there', LEASE_TTL_MS, 1, GRACE)).toBeLessThan(0);

    // A renewal within the lease's time of the last request: kept.
    await h.tickAfter(10_000);
    expect(await redis.get(h.lease)).toBe('node-here');
    expect(h.actors[0]!.releases).toBe(0);
    await h.tickAfter(10_000);
    expect(await redis.get(h.lease)).toBe('node-here');
    // No request for a lease's time: the renewal gives the hotspot up and releases the actor.
    await h.tickAfter(10_000);
    expect(await redis.exists(h.lease)).toBe(0);
    await until(() => h.actors[0]!.releases === 1, { intervalMs: 5, what: 'the actor released' });
    // The process the requests reach takes it at its next ask; this one now answers 503 like any non-owner.
    expect(await redis.renewLeaseV2(h.lease, h.next, 'node-there', LEASE_TTL_MS, 1, GRACE)).toBe(1);
    const after = h.auth();
    h.host.receive([after]);
    expect(await h.reply(after.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
    h.host.stop();
  });

  it('only a NAS\'s packets put a non-owner next in line: a dashboard\'s read or a sign-in\'s news through it do not', async ({ tenant }) => {
    const h = setup(tenant);
    await redis.set(h.lease, 'node-there', 'PX', 60_000);
    const base = { tenant, hs: h.lease.slice(h.lease.lastIndexOf(':') + 1), tz: 'UTC' };
    const live = { t: 'live' as const, id: 9_001, ...base, sid: 'sess_1' };
    const started = { t: 'started' as const, id: 9_002, ...base, sid: 'sess_1', mac: 'AA:00:00:00:00:02', replaced: 'sess_0' };
    h.host.receive([live, started]);
    expect(await h.reply(live.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
    expect(await h.reply(started.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
    expect(await redis.exists(h.next)).toBe(0);
    // A NAS's packets for a third of a lease (two, 10 s apart; past the once-a-second limit on asks) do.
    for (const step of [1_000, 10_000]) {
      h.advance(step);
      const nas = h.auth();
      h.host.receive([nas]);
      expect(await h.reply(nas.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
    }
    expect(await redis.get(h.next)).toBe('node-here');
    h.host.stop();
  });

  it('HOTSPOT_LEASE_MS: a host with a 6 s lease takes it for 6 s and renews it every 2 s', async ({ tenant }) => {
    const hs = `hs_${randomBytes(6).toString('hex')}`;
    let clock = Date.now();
    let asked = 0;
    const counting = new Proxy(redis, {
      get(target, prop, receiver) {
        if (prop !== 'renewLeaseV2') return Reflect.get(target, prop, receiver);
        return (...args: Parameters<Redis['renewLeaseV2']>) => target.renewLeaseV2(...args).finally(() => { asked++; });
      },
    });
    const batches: FromThread[][] = [];
    const host = new ActorHost({
      redis: counting, nodeId: 'node-short', log: silent, leaseMs: 6_000, send: (b) => batches.push(b), now: () => clock,
      createActor: (t, h, _tz, ctx) => accepting(t, h, ctx),
    });
    host.receive([{ t: 'auth', id: 1, tenant, hs, tz: 'UTC', nasId: 'nas_1', mac: 'AA:00:00:00:00:03', userName: 'x' }]);
    await until(() => batches.flat().some((m) => m.t === 'reply'), { intervalMs: 5, what: 'the reply' });
    const lease = keys.lease(tenant, hs);
    expect(await redis.pttl(lease)).toBeGreaterThan(5_000);
    expect(await redis.pttl(lease)).toBeLessThanOrEqual(6_000);
    const before = asked;
    clock += 2_000;
    host.tick();
    await until(() => asked > before, { intervalMs: 5, what: 'the renewal after a third of the lease' });
    host.stop();
  });

  it('a holder that still serves the hotspot keeps it, though another process waits for it', async ({ tenant }) => {
    const h = setup(tenant);
    const first = h.auth();
    h.host.receive([first]);
    expect(await h.reply(first.id)).toMatchObject({ ok: true });
    expect(await redis.renewLeaseV2(h.lease, h.next, 'node-there', LEASE_TTL_MS, 1, GRACE)).toBeLessThan(0);
    for (let i = 0; i < 4; i++) {
      await h.tickAfter(10_000);
      const m = h.auth(); // this process's NAS goes on talking to it
      h.host.receive([m]);
      expect(await h.reply(m.id)).toMatchObject({ ok: true });
    }
    expect(await redis.get(h.lease)).toBe('node-here');
    expect(h.actors[0]!.releases).toBe(0);
    h.host.stop();
  });

  it('a NAS\'s packet another process forwarded (ActorForwarder) does not count as reaching the holder: it yields all the same', async ({ tenant }) => {
    const h = setup(tenant);
    const first = h.auth();
    h.host.receive([first]);
    expect(await h.reply(first.id)).toMatchObject({ ok: true });
    // The NAS failed over to another process, which is next in line and forwards its packets here meanwhile.
    expect(await redis.renewLeaseV2(h.lease, h.next, 'node-there', LEASE_TTL_MS, 1, GRACE)).toBeLessThan(0);
    for (let i = 0; i < 2; i++) {
      await h.tickAfter(10_000);
      const m: AuthMsg = { ...h.auth(), forwarded: true };
      h.host.receive([m]);
      expect(await h.reply(m.id)).toMatchObject({ ok: true }); // answered: this process still holds the hotspot
    }
    // A lease's time since the last packet that reached this process itself: given up to the one the NAS talks to.
    await h.tickAfter(10_000);
    expect(await redis.exists(h.lease)).toBe(0);
    await until(() => h.actors[0]!.releases === 1, { intervalMs: 5, what: 'the actor released' });
    h.host.stop();
  });
});
