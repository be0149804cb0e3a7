import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { describe, expect } from 'vitest';
import { ActorHost } from '../../engine/sessions/actor-host.js';
import type { AuthMsg, FromThread, NasCommand, Reply, Request } from '../../engine/sessions/messages.js';
import { until } from '../support/poll.js';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { STAND_IN_REJECT, StandInActor } from '../support/stand-in-actor.js';

/**
 * The actor host without a thread: its port is an array, its actors are
 * stand-ins, its leases are real (Redis). It batches what it sends, answers
 * busy past its mailbox bound, answers 503 for a hotspot another process
 * leased, reloads an actor that throws (and drops one that keeps throwing),
 * gives up an actor whose lease was lost, and carries an actor's NAS command
 * out and its result back.
 */

const silent = pino({ level: 'silent' });

/** The fixture's connection (scripts defined), for the host's leases. */
let redis: Redis;
it.beforeAll(({ redis: r }) => { redis = r; });

/** The first value `get` gives; the host answers within a few event-loop turns. */
async function arrived<T>(get: () => T | undefined): Promise<T> {
  let v: T | undefined;
  await until(() => (v = get()) !== undefined, { timeoutMs: 5_000, intervalMs: 5, what: 'a message from the host' });
  return v!;
}

/** A host with stand-in actors for a hotspot of `tenant` (the fixture's, so its keys are cleaned up). */
function setup(tenant: string, mailboxLimit = 100) {
  const hs = `hs_${randomBytes(6).toString('hex')}`;
  const batches: FromThread[][] = [];
  const actors: StandInActor[] = [];
  let clock = Date.now();
  let seq = 0;
  const host = new ActorHost({
    redis, nodeId: 'node-here', log: silent, mailboxLimit,
    send: (batch) => batches.push(batch),
    now: () => clock,
    createActor: (t, h, _tz, ctx) => {
      const a = new StandInActor(t, h, ctx);
      actors.push(a);
      return a;
    },
  });
  const sent = (): FromThread[] => batches.flat();
  const reply = (id: number): Promise<Reply> =>
    arrived(() => sent().find((m): m is Reply => m.t === 'reply' && m.id === id));
  const base = { tenant, hs, tz: 'UTC' };
  const wake = (): Request => ({ t: 'wake', id: ++seq, ...base });
  const auth = (mac: string): AuthMsg => ({ t: 'auth', id: ++seq, ...base, nasId: 'nas_1', mac, userName: mac });
  return {
    host, batches, actors, reply, wake, auth, sent,
    lease: keys.lease(tenant, hs),
    next: keys.leaseNext(tenant, hs),
    advance: (ms: number) => { clock += ms; },
  };
}

describe('ActorHost', () => {
  it('takes the lease, loads the actor once, and answers a batch of requests in one batch', async ({ tenant }) => {
    const h = setup(tenant);
    const asks = [h.wake(), h.wake(), h.wake()];
    h.host.receive(asks);
    const replies = await Promise.all(asks.map((m) => h.reply(m.id)));
    expect(replies.map((r) => r.ok)).toEqual([true, true, true]);
    expect(replies[0]!.value).toEqual({ sessions: 0 });
    expect(h.batches).toHaveLength(1);
    expect(h.actors).toHaveLength(1);
    expect(h.actors[0]!.loads).toBe(1);
    expect(await redis.get(h.lease)).toBe('node-here');
  });

  it('answers hotspot_owned_elsewhere while another process holds the lease, and asks again only after a while', async ({ tenant }) => {
    const h = setup(tenant);
    await redis.set(h.lease, 'node-there', 'PX', 60_000);
    const first = h.wake();
    h.host.receive([first]);
    expect(await h.reply(first.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere', status: 503 });
    expect(h.actors[0]!.loads).toBe(0);

    await redis.del(h.lease);
    const soon = h.wake();
    h.host.receive([soon]);
    expect(await h.reply(soon.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
    h.advance(6_000);
    const later = h.wake();
    h.host.receive([later]);
    expect(await h.reply(later.id)).toMatchObject({ ok: true, value: { sessions: 0 } });
    expect(h.actors[0]!.loads).toBe(1);
  });

  it('answers busy past its mailbox bound, and the messages inside it still get their answers', async ({ tenant }) => {
    const h = setup(tenant, 3);
    let open!: () => void;
    const gate = new Promise<void>((r) => { open = r; });
    const warm = h.wake();
    h.host.receive([warm]);
    await h.reply(warm.id);
    h.actors[0]!.authWith = async () => { await gate; return STAND_IN_REJECT; };
    const asks = [1, 2, 3, 4].map((n) => h.auth(mac(n)));
    h.host.receive(asks);
    expect(await h.reply(asks[3]!.id)).toMatchObject({ ok: false, code: 'busy', status: 503 });
    open();
    for (const m of asks.slice(0, 3)) expect(await h.reply(m.id)).toMatchObject({ ok: true, value: STAND_IN_REJECT });
  });

  it('reloads an actor whose handler throws, and drops one that keeps throwing until its next message', async ({ tenant }) => {
    const h = setup(tenant);
    const warm = h.wake();
    h.host.receive([warm]);
    await h.reply(warm.id);
    const actor = h.actors[0]!;
    actor.authWith = async () => { throw new Error('handler bug'); };
    const bad = h.auth(mac(0x10));
    h.host.receive([bad]);
    expect(await h.reply(bad.id)).toMatchObject({ ok: false, code: 'internal_error', status: 500 });
    await until(() => actor.loads === 2, { timeoutMs: 5_000, intervalMs: 5 });

    // Ten more within the minute: the eleventh failure stops the actor.
    for (let i = 0; i < 10; i++) {
      const m = h.auth(mac(0x100 + i));
      h.host.receive([m]);
      await h.reply(m.id);
    }
    expect(actor.releases).toBe(1);
    expect(h.host.stats().actors).toBe(0);
    const again = h.wake();
    h.host.receive([again]);
    expect(await h.reply(again.id)).toMatchObject({ ok: true });
    expect(h.actors).toHaveLength(2);
  });

  it('gives up an actor whose lease another process took, and answers 503 for it', async ({ tenant }) => {
    const h = setup(tenant);
    const warm = h.wake();
    h.host.receive([warm]);
    await h.reply(warm.id);
    await redis.set(h.lease, 'node-there', 'PX', 60_000);
    h.advance(10_000);
    h.host.tick();
    await until(() => h.actors[0]!.releases === 1, { timeoutMs: 5_000, intervalMs: 5 });
    const m = h.wake();
    h.host.receive([m]);
    expect(await h.reply(m.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
  });

  it('takes a hotspot held elsewhere back on its clock when the holder\'s lease runs out, with no request to wait for', async ({ tenant }) => {
    const h = setup(tenant);
    // Long enough to be refused whatever the machine's stalls; cut short only once it was.
    await redis.set(h.lease, 'node-there', 'PX', 60_000);
    const first = h.wake();
    h.host.receive([first]);
    expect(await h.reply(first.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
    await redis.pexpire(h.lease, 200);
    await until(async () => (await redis.exists(h.lease)) === 0, { timeoutMs: 5_000, intervalMs: 5, what: 'the holder\'s lease ran out' });
    // The host's clock reaches the end of the lease it was refused by.
    h.advance(60_000);
    h.host.tick();
    await until(() => h.actors[0]!.loads === 1, { timeoutMs: 5_000, intervalMs: 5, what: 'the actor loaded' });
    expect(await redis.get(h.lease)).toBe('node-here');
  });

  it('is next in line for a hotspot whose requests reach it, not for one it only woke', async ({ tenant }) => {
    const h = setup(tenant);
    await redis.set(h.lease, 'node-there', 'PX', 60_000);
    const woken = h.wake();
    h.host.receive([woken]);
    expect(await h.reply(woken.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
    expect(await redis.exists(h.next)).toBe(0);
    // A NAS's requests: one alone (a stray retransmission) does not queue it; a run of them for a third of a lease does.
    for (const [step, queued] of [[1_000, false], [5_000, false], [5_000, true]] as const) {
      h.advance(step);
      const served = h.auth(mac(0x30));
      h.host.receive([served]);
      expect(await h.reply(served.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
      expect(await redis.get(h.next), `queued after ${step} ms more`).toBe(queued ? 'node-here' : null);
    }
  });

  it('a run of requests broken by a gap longer than a third of a lease starts again', async ({ tenant }) => {
    const h = setup(tenant);
    await redis.set(h.lease, 'node-there', 'PX', 120_000);
    for (const step of [1_000, 9_000, 11_000, 9_000]) {
      h.advance(step);
      const served = h.auth(mac(0x31));
      h.host.receive([served]);
      expect(await h.reply(served.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
    }
    // Requests at 1, 10, 21 and 30 s: the run from 1 s lasts 9 s, the 11 s gap ends it, the new one lasts 9 s: never a third of 30 s.
    expect(await redis.exists(h.next)).toBe(0);
  });

  it('at a graceful stop gives its lease up after the work in flight, and takes none afterwards', async ({ tenant }) => {
    const h = setup(tenant);
    const woken = h.wake();
    h.host.receive([woken]);
    expect(await h.reply(woken.id)).toMatchObject({ ok: true });
    expect(await redis.get(h.lease)).toBe('node-here');
    expect(await h.host.releaseLeases()).toBe(1);
    expect(await redis.exists(h.lease)).toBe(0);
    expect(h.actors[0]!.releases).toBe(1);
    // A request still arriving (a sign-in finishing past the HTTP drain) does not take the lease back.
    h.advance(2_000);
    const late = h.auth(mac(0x40));
    h.host.receive([late]);
    expect(await h.reply(late.id)).toMatchObject({ ok: false, code: 'hotspot_owned_elsewhere' });
    expect(await redis.exists(h.lease)).toBe(0);
  });

  it('carries an actor\'s NAS command to the main thread and its result back', async ({ tenant }) => {
    const h = setup(tenant);
    h.host.receive([h.wake()]);
    await arrived(() => h.actors[0]);
    h.actors[0]!.authWith = async (m, ctx) => {
      const r = await ctx.nas({ tenant: m.tenant, hs: m.hs, nasId: m.nasId, command: 'disconnect', userName: m.userName, mac: m.mac, acctSessionId: '', ip: '', sessionTimeout: 0 });
      return { accept: false, reason: r.outcome };
    };
    const ask = h.auth(mac(0x20));
    h.host.receive([ask]);
    const cmd = await arrived(() => h.sent().find((x): x is NasCommand => x.t === 'nas'));
    expect(cmd).toMatchObject({ command: 'disconnect', mac: mac(0x20) });
    h.host.receive([{ t: 'nas_result', id: cmd.id, result: { outcome: 'ack' } }]);
    expect(await h.reply(ask.id)).toMatchObject({ ok: true, value: { accept: false, reason: 'ack' } });
  });
});
