import { connect } from 'node:net';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { EventLog } from '../../engine/events/event-log.js';
import { keys as keysModule, WEBHOOK_GROUP } from '../../engine/redis/keys.js';
import { until } from '../support/poll.js';
import { luaTest as test } from '../support/lua.js';

/**
 * The webhook queue scripts on whole batches: routing, claiming and settling
 * many deliveries of a tenant in one call each cost a few Redis commands per
 * call, not several per delivery (counted with MONITOR, which shows each
 * command a script runs); slices beyond a command's argument limit; every
 * outcome of a settle batch; and a process that dies between its claim and
 * its settle: the batch lapses with its lease, is claimed again whole by
 * another, and the dead holder's late settle changes nothing.
 */
const k = (keys: typeof keysModule, t: string) => ({
  ev: keys.events(t), subs: keys.webhookSubs(t), q: keys.webhookQueue(t), d: keys.webhookDeliveries(t), b: keys.webhookBodies(t),
  done: keys.webhookDone(t), dead: keys.webhookDead(t), att: (id: string) => keys.webhookAttempts(t, id),
});
type K = ReturnType<typeof k>;
const DAY = 86_400_000;
const LEASE = 15_000;

/** Routes without claiming (the claim script's turn), or claiming up to `want` with `token`. */
const route = (redis: Redis, K: K, now: number, count = 1000, want = 0, token = '') =>
  redis.routeWebhookEventsV2(K.ev, K.subs, K.q, K.d, K.b, WEBHOOK_GROUP, count, now, want, LEASE, token);
const claim = (redis: Redis, K: K, now: number, limit: number, token: string) =>
  redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, now, LEASE, limit, token, 3, DAY);
/** Claimed ids, from claim()'s flat list. */
const idsOf = (flat: string[]): string[] => flat.filter((_, i) => i % 3 === 0);
/** settle-webhook-deliveries-n.lua: outcomes [id, token, outcome, code] of subscription `sub`'s deliveries, at `now`. */
const settle = (redis: Redis, K: K, now: number, sub: string, outcomes: [string, string, string, string][]) =>
  redis.settleWebhookDeliveriesV1(5 + outcomes.length, K.q, K.d, K.b, K.done, K.dead, ...outcomes.map(() => K.att(sub)),
    now, DAY, DAY, 1000, ...outcomes.flatMap(([id, tok, outcome, code]) => [id, tok, outcome, now + 1000, code, 3, code === '200' ? '' : 'status']));

async function events(redis: Redis, tenant: string, n: number): Promise<void> {
  const log = new EventLog(redis);
  for (let i = 0; i < n; i++) await log.append(tenant, 'session.start', null, { i });
}

/**
 * The commands scripts run on this tenant's keys while `work` runs: MONITOR
 * shows each command a script runs (source "lua"). Read on a raw socket
 * (ioredis's monitor mode trips over replies that arrive while it
 * disconnects). Other test files share the server: only commands naming
 * this tenant's hash tag count. A marker command after the work, seen by the
 * monitor, means every command before it has been seen (MONITOR feeds
 * commands in the order they ran).
 */
async function scriptCommands(redis: Redis, tenant: string, work: () => Promise<unknown>): Promise<string[]> {
  const tag = `{t:${tenant}}`;
  const marker = keysModule.webhookSubs(tenant);
  const seen: string[] = [];
  let markerSeen = false;
  let pending = '';
  const socket = connect(redis.options.port!, redis.options.host!);
  const started = new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\r\n');
      pending = lines.pop()!;
      for (const line of lines) {
        if (line === '+OK') { resolve(); continue; }
        if (!line.includes(tag)) continue;
        // +<time> [<db> <source>] "<command>" "<arg>" ...
        const m = /^\+[\d.]+ \[\d+ ([^\]]+)\] "([^"]*)"/.exec(line);
        if (!m) continue;
        if (m[1] === 'lua') seen.push(m[2]!.toLowerCase());
        else if (m[2]!.toLowerCase() === 'hlen' && line.includes(`"${marker}"`)) markerSeen = true;
      }
    });
  });
  socket.write('MONITOR\r\n');
  try {
    await started;
    await work();
    await redis.hlen(marker);
    await until(() => markerSeen, { what: 'the marker command seen by MONITOR' });
  } finally {
    socket.destroy();
  }
  return seen;
}

describe('webhook queue scripts on batches', () => {
  test('routing, claiming and settling 200 deliveries take a few commands per call, not several per delivery', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_c', 'session.start', WEBHOOK_GROUP);
    await events(redis, tenant, 200);
    const routed = await scriptCommands(redis, tenant, () => route(redis, K, 1000));
    expect(await redis.zcard(K.q)).toBe(200);
    // HGETALL, XREADGROUP, the due check, one HSET per hash and one ZADD: the old script ran three commands per delivery (600).
    expect(routed.length).toBeLessThanOrEqual(8);

    let claimed: string[] = [];
    const claimCommands = await scriptCommands(redis, tenant, async () => { claimed = await claim(redis, K, 2000, 200, 'tok'); });
    expect(idsOf(claimed)).toHaveLength(200);
    // Was five per delivery (HGET, HEXISTS, HSET, ZADD, HGET): 1,000.
    expect(claimCommands.length).toBeLessThanOrEqual(12);

    const settled = await scriptCommands(redis, tenant, () => settle(redis, K, 3000, 'whk_c', idsOf(claimed).map((id) => [id, 'tok', 'delivered', '200'])));
    // One attempt record (XADD) per delivery is what is left per delivery; was five per delivery.
    expect(settled.filter((c) => c === 'xadd')).toHaveLength(200);
    expect(settled.length - 200).toBeLessThanOrEqual(8);
    expect(await redis.zcard(K.q)).toBe(0);
    expect(await redis.zcard(K.done)).toBe(200);

    // Forgetting finished deliveries after their keeping time: a few commands per call, not four per delivery.
    const forgot = await scriptCommands(redis, tenant, () => claim(redis, K, 3000 + DAY + 1, 10, 'late'));
    expect(await redis.zcard(K.done)).toBe(0);
    expect(await redis.hlen(K.d)).toBe(0);
    expect(await redis.hlen(K.b)).toBe(0);
    expect(forgot.length).toBeLessThanOrEqual(8);
  });

  test('a batch larger than one command\'s slice: 1,200 deliveries routed, claimed and settled whole', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_a', 'session.start', WEBHOOK_GROUP);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_b', 'session.start', WEBHOOK_GROUP);
    const p = redis.pipeline();
    for (let i = 0; i < 600; i++) p.xadd(K.ev, '*', 'type', 'session.start', 'ts', String(i), 'site', '', 'data', `{"i":${i}}`);
    await p.exec();
    expect(await route(redis, K, 1000)).toEqual([600, 1200, 1]);
    expect(await redis.zcard(K.q)).toBe(1200);
    expect(await redis.hlen(K.b)).toBe(1200);
    const c = await claim(redis, K, 2000, 2000, 'big');
    expect(c.length / 3).toBe(1200);
    // Each claimed with its own state and body.
    for (let i = 0; i < c.length; i += 3) {
      const st = JSON.parse(c[i + 1]!) as { s: string; n: number; k: string; ts: number };
      expect(st).toMatchObject({ n: 1, k: 'big' });
      expect(c[i]!.endsWith(st.s.slice(4))).toBe(true);
      expect(JSON.parse(c[i + 2]!)).toEqual({ i: st.ts });
    }
    const leased = await redis.zrangebyscore(K.q, 2000 + LEASE, 2000 + LEASE);
    expect(leased).toHaveLength(1200);
    // Settled in one call per subscription (the dispatcher's batches are at most 256; the script takes any size).
    for (const sub of ['whk_a', 'whk_b']) {
      const mine = idsOf(c).filter((id) => id.endsWith(`_${sub.slice(4)}`));
      expect(await settle(redis, K, 3000, sub, mine.map((id) => [id, 'big', 'delivered', '200']))).toEqual(mine.map(() => 1));
      expect(await redis.xlen(K.att(sub))).toBe(600);
    }
    expect(await redis.zcard(K.q)).toBe(0);
    // A day later: one claim call forgets at most 1,000 finished deliveries (a bounded script run), the next the rest.
    await claim(redis, K, 3000 + DAY + 1, 10, 'late');
    expect(await redis.zcard(K.done)).toBe(200);
    expect(await redis.hlen(K.d)).toBe(200);
    await claim(redis, K, 3000 + DAY + 2, 10, 'later');
    expect(await redis.zcard(K.done)).toBe(0);
    expect(await redis.hlen(K.b)).toBe(0);
  });

  test('routing that claims: the new deliveries the caller has room for, as a claim would, and none while an older one is due', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_r', 'session.start', WEBHOOK_GROUP);
    await events(redis, tenant, 5);
    let out: (string | number)[] = [];
    const commands = await scriptCommands(redis, tenant, async () => { out = await route(redis, K, 1000, 1000, 3, 'rt'); });
    // Claiming in the route adds no command per delivery.
    expect(commands.length).toBeLessThanOrEqual(8);
    expect(out.slice(0, 3)).toEqual([5, 5, 1]);
    const claimed = out.slice(3) as string[];
    expect(idsOf(claimed)).toHaveLength(3);
    for (let i = 0; i < claimed.length; i += 3) {
      expect(JSON.parse(claimed[i + 1]!)).toMatchObject({ n: 1, k: 'rt', st: 'pending', s: 'whk_r', t: 'session.start' });
      expect(JSON.parse(claimed[i + 1]!)).toEqual(JSON.parse((await redis.hget(K.d, claimed[i]!))!));
      expect(claimed[i + 2]).toBe(await redis.hget(K.b, claimed[i]!));
      expect(Number(await redis.zscore(K.q, claimed[i]!))).toBe(1000 + LEASE);
    }
    // The two beyond the room are due, unclaimed: the claim script takes them, and not the three the route claimed.
    const rest = await claim(redis, K, 1000, 100, 'c1');
    expect(idsOf(rest)).toHaveLength(2);
    expect(idsOf(rest).some((id) => idsOf(claimed).includes(id))).toBe(false);
    // A route-claimed delivery settles on its token, and lapses like any claim: attempt 2 after the lease.
    const [a, b, c] = idsOf(claimed);
    expect(await settle(redis, K, 1500, 'whk_r', [[a!, 'rt', 'delivered', '200'], [b!, 'rt', 'retry', '500']])).toEqual([1, 1]);
    const lapsed = await claim(redis, K, 1000 + LEASE, 100, 'c2');
    expect(idsOf(lapsed).sort()).toEqual([b!, c!, ...idsOf(rest)].sort());
    expect(JSON.parse(lapsed[idsOf(lapsed).indexOf(c!) * 3 + 1]!)).toMatchObject({ n: 2, k: 'c2' });
    // An older delivery due (b's retry): new deliveries are routed and left due behind it, none claimed.
    const t = 1000 + LEASE + 500;
    expect(await settle(redis, K, t - 1000, 'whk_r', [[b!, 'c2', 'retry', '500']])).toEqual([1]);
    await events(redis, tenant, 2);
    expect(await route(redis, K, t, 1000, 10, 'rt2')).toEqual([2, 2, 1]);
    const inOrder = await claim(redis, K, t, 100, 'c3');
    expect(idsOf(inOrder)).toHaveLength(3);
    expect(idsOf(inOrder)[0]).toBe(b);
    // Nothing due and room for all: everything new is claimed in the route, and nothing is left due.
    await events(redis, tenant, 2);
    const all = await route(redis, K, t + 1, 1000, 10, 'rt3');
    expect(all.slice(0, 3)).toEqual([2, 2, 0]);
    expect(all.length).toBe(3 + 2 * 3);
  });

  test('one settle call: delivered, retry, dead, released, dropped, a foreign token and an id twice, each as alone', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_m', 'session.start', WEBHOOK_GROUP);
    await events(redis, tenant, 6);
    await route(redis, K, 1000);
    const [a, r, d, rel, drop, foreign] = idsOf(await claim(redis, K, 2000, 10, 'tok'));
    const out = await settle(redis, K, 3000, 'whk_m', [
      [a!, 'tok', 'delivered', '200'], [r!, 'tok', 'retry', '500'], [d!, 'tok', 'dead', '404'], [rel!, 'tok', 'released', ''],
      [drop!, 'tok', 'dropped', ''], [foreign!, 'other', 'delivered', '200'],
      // The same delivery again in the same call: its claim was cleared by the first, so this one is refused.
      [a!, 'tok', 'retry', '500'],
    ]);
    expect(out).toEqual([1, 1, 1, 1, 1, 0, 0]);
    const state = async (id: string) => JSON.parse((await redis.hget(K.d, id))!) as Record<string, unknown>;
    expect(await state(a!)).toMatchObject({ st: 'delivered', c: '200' });
    expect(await redis.zscore(K.q, a!)).toBeNull();
    expect(Number(await redis.zscore(K.done, a!))).toBe(3000 + DAY);
    expect(await state(r!)).toMatchObject({ st: 'pending', c: '500', n: 1 });
    expect(Number(await redis.zscore(K.q, r!))).toBe(4000);
    expect(await state(d!)).toMatchObject({ st: 'dead', c: '404' });
    expect(Number(await redis.zscore(K.dead, d!))).toBe(3000);
    expect(await redis.zscore(K.q, d!)).toBeNull();
    expect(await state(rel!)).toMatchObject({ st: 'pending', n: 0 });
    expect((await state(rel!)).k).toBeUndefined();
    expect(Number(await redis.zscore(K.q, rel!))).toBe(3000);
    expect(await redis.hget(K.d, drop!)).toBeNull();
    expect(await redis.hget(K.b, drop!)).toBeNull();
    expect(await redis.zscore(K.q, drop!)).toBeNull();
    expect(await state(foreign!)).toMatchObject({ k: 'tok', n: 1 });
    // Three attempts recorded (delivered, retry, dead), in order; none for the release, the drop or the refused.
    const att = await redis.xrange(K.att('whk_m'), '-', '+');
    expect(att.map(([, f]) => [f[1], f[9]])).toEqual([[a, 'delivered'], [r, 'failed'], [d, 'dead']]);
  });

  test('a process that dies between claim and settle: its batch lapses, is claimed again whole, and its late settle changes nothing', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_k', 'session.start', WEBHOOK_GROUP);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_x', 'session.start', WEBHOOK_GROUP);
    await events(redis, tenant, 20);
    await route(redis, K, 1000);
    // Process A claims all 40 and dies (kill -9) before settling any.
    const first = idsOf(await claim(redis, K, 2000, 100, 'procA'));
    expect(first).toHaveLength(40);
    // While A's lease runs nobody else gets them.
    expect(await claim(redis, K, 2000 + LEASE - 1, 100, 'procB')).toEqual([]);
    // whk_x is deleted meanwhile: its 20 are dropped when next claimed, never sent.
    await redis.removeWebhookV1(K.subs, K.ev, 'whk_x', WEBHOOK_GROUP);
    // The lease has passed: B claims the rest again whole, as second attempts, the same delivery ids.
    const again = await claim(redis, K, 2000 + LEASE, 100, 'procB');
    const ids = idsOf(again);
    expect(ids.sort()).toEqual(first.filter((id) => id.endsWith('_k')).sort());
    for (let i = 1; i < again.length; i += 3) expect(JSON.parse(again[i]!)).toMatchObject({ n: 2, k: 'procB' });
    expect(await redis.zcard(K.q)).toBe(20);
    // A comes back to life late (a stalled process) and settles what it held: all refused, nothing recorded.
    expect(await settle(redis, K, 2000 + LEASE + 1, 'whk_k', ids.map((id) => [id, 'procA', 'delivered', '200']))).toEqual(ids.map(() => 0));
    expect(await redis.xlen(K.att('whk_k'))).toBe(0);
    expect(await redis.zcard(K.done)).toBe(0);
    // B settles: delivered, off the queue; never claimed again, however late.
    expect(await settle(redis, K, 2000 + LEASE + 2, 'whk_k', ids.map((id) => [id, 'procB', 'delivered', '200']))).toEqual(ids.map(() => 1));
    expect(await redis.zcard(K.q)).toBe(0);
    expect(await claim(redis, K, 2000 + 10 * LEASE, 100, 'procC')).toEqual([]);
  });

  test('a batch whose third attempt\'s claim lapsed unsettled is dead-lettered whole by the next claim, not sent a fourth time', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_l', 'session.start', WEBHOOK_GROUP);
    await events(redis, tenant, 30);
    await route(redis, K, 1);
    for (let n = 1; n <= 3; n++) expect(idsOf(await claim(redis, K, n * 2 * LEASE, 100, `t${n}`))).toHaveLength(30);
    expect(await claim(redis, K, 4 * 2 * LEASE, 100, 't4')).toEqual([]);
    expect(await redis.zcard(K.q)).toBe(0);
    expect(await redis.zcard(K.dead)).toBe(30);
    const states = (await redis.hvals(K.d)).map((v) => JSON.parse(v) as Record<string, unknown>);
    expect(states.every((st) => st.st === 'dead' && st.n === 3 && st.k === undefined)).toBe(true);
  });
  test('the same claim again (its answer lost, the call resent) gets back what it claimed, each attempt counted once, nothing more claimed', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_r', 'session.start', WEBHOOK_GROUP);
    await events(redis, tenant, 6);
    await route(redis, K, 1000);
    const first = await claim(redis, K, 2000, 4, 'tok_lost');
    expect(idsOf(first)).toHaveLength(4);
    // The same call (same token, same time): the same four, as the first answer gave them (attempt 1), not four more.
    expect(await claim(redis, K, 2000, 4, 'tok_lost')).toEqual(first);
    for (const raw of first.filter((_, i) => i % 3 === 1)) expect(JSON.parse(raw)).toMatchObject({ n: 1, k: 'tok_lost' });
    // Another claim in the same millisecond takes the two left; once settled, the lost call's ids are no longer its own.
    expect(idsOf(await claim(redis, K, 2000, 4, 'tok_next'))).toHaveLength(2);
    await settle(redis, K, 3000, 'whk_r', idsOf(first).map((id) => [id, 'tok_lost', 'delivered', '200']));
    expect(await claim(redis, K, 2000, 4, 'tok_lost')).toEqual([]);

    // The route's own claim: the same call again reads no events and gives back what it claimed.
    await events(redis, tenant, 3);
    const routed = await route(redis, K, 4000, 1000, 2, 'tok_route');
    expect(routed.slice(0, 2)).toEqual([3, 3]);
    expect(idsOf(routed.slice(3) as string[])).toHaveLength(2);
    const again = await route(redis, K, 4000, 1000, 2, 'tok_route');
    expect(again.slice(3)).toEqual(routed.slice(3));
    expect(again[0]).toBe(0);
    expect(await redis.zcard(K.q)).toBe(2 + 3);
  });
});
