import { describe, expect } from 'vitest';
import { EventLog } from '../../engine/events/event-log.js';
import { WEBHOOK_GROUP } from '../../engine/redis/keys.js';
import { luaTest as test } from '../support/lua.js';

/**
 * The webhook scripts against a real Redis: routing moves events into owed
 * deliveries and advances the group in one step; a claim is exclusive and
 * lapses; a settled 2xx is never claimed again; and the events trimmer
 * never drops an entry the group has not read (it trims by length
 * otherwise), where a writer's MAXLEN would have.
 */
describe('webhook queue scripts', () => {
  const k = (keys: typeof import('../../engine/redis/keys.js').keys, t: string) => ({
    ev: keys.events(t), subs: keys.webhookSubs(t), q: keys.webhookQueue(t), d: keys.webhookDeliveries(t), b: keys.webhookBodies(t),
    done: keys.webhookDone(t), dead: keys.webhookDead(t), att: (id: string) => keys.webhookAttempts(t, id),
  });
  type K = ReturnType<typeof k>;
  /** route-webhook-events-5.lua reading at most `count` events at `now`, claiming none (the claim script claims). */
  const route = (redis: import('ioredis').Redis, K: K, count: number, now: number) =>
    redis.routeWebhookEventsV2(K.ev, K.subs, K.q, K.d, K.b, WEBHOOK_GROUP, count, now, 0, 0, '');
  /** settle-webhook-deliveries-n.lua with outcomes [id, token, outcome, code] of subscription whk_a, at `now`. */
  const settle = (redis: import('ioredis').Redis, K: K, now: number, ...outcomes: [string, string, string, string][]) =>
    redis.settleWebhookDeliveriesV1(5 + outcomes.length, K.q, K.d, K.b, K.done, K.dead, ...outcomes.map(() => K.att('whk_a')),
      now, 86_400_000, 86_400_000, 100, ...outcomes.flatMap(([id, tok, outcome, code]) => [id, tok, outcome, now + 1000, code, 12, code ? '' : 'timeout']));

  test('routing: one delivery per event and subscription that wants it, none for older events, group advanced; claim, lapse, settle', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    const log = new EventLog(redis);
    await log.append(tenant, 'session.start', 'hs1', { n: 0 }); // before any subscription: owed to nobody
    await redis.addWebhookV1(K.subs, K.ev, 'whk_a', 'session.start,device.new', WEBHOOK_GROUP);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_b', 'device.new', WEBHOOK_GROUP);
    const e1 = await log.append(tenant, 'session.start', 'hs1', { n: 1 });
    await log.append(tenant, 'device.new', 'hs1', { n: 2 });
    await log.append(tenant, 'session.end', 'hs1', { n: 3 });
    expect(await route(redis, K, 100, 1000)).toEqual([3, 3, 1]);
    expect(await route(redis, K, 100, 1000)).toEqual([0, 0, 1]);
    expect(await redis.zcard(K.q)).toBe(3);
    expect(await redis.hget(K.b, `dlv_${e1}_a`)).toBe('{"n":1}');
    const info = (await redis.xinfo('GROUPS', K.ev)) as unknown[][];
    expect(info[0]).toContain(WEBHOOK_GROUP);
    expect(await redis.xpending(K.ev, WEBHOOK_GROUP)).toEqual([0, null, null, null]);

    const first = await redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, 2000, 10_000, 10, 'tok1', 3, 86_400_000);
    expect(first.length / 3).toBe(3);
    // Claimed: nobody else gets them while the lease runs.
    expect(await redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, 5000, 10_000, 10, 'tok2', 3, 86_400_000)).toEqual([]);
    const id = first[0]!;
    expect(JSON.parse(first[1]!)).toMatchObject({ n: 1, k: 'tok1' });
    // A settle by the claim's holder removes a delivered one for good.
    expect(await settle(redis, K, 3000, [id, 'tok1', 'delivered', '200'])).toEqual([1]);
    // The process that held the others died: after the lease they are claimed again (second attempt), and the first never is.
    const again = await redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, 12_001, 10_000, 10, 'tok3', 3, 86_400_000);
    expect(again.length / 3).toBe(2);
    expect(again).not.toContain(id);
    expect(JSON.parse(again[1]!)).toMatchObject({ n: 2, k: 'tok3' });
    // The dead holder's late settle is refused: the claim is tok3's now.
    expect(await settle(redis, K, 12_002, [again[0]!, 'tok1', 'delivered', '200'])).toEqual([0]);
    // A subscription removed: its owed deliveries are dropped when claimed, never sent.
    expect(await redis.removeWebhookV1(K.subs, K.ev, 'whk_b', WEBHOOK_GROUP)).toBe(1);
    const late = await redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, 30_000, 10_000, 10, 'tok4', 3, 86_400_000);
    expect(late.filter((_, i) => i % 3 === 0).every((d) => d.endsWith('_a'))).toBe(true);
    // The last subscription gone: so is the group, which would otherwise hold the trimmer back.
    expect(await redis.removeWebhookV1(K.subs, K.ev, 'whk_a', WEBHOOK_GROUP)).toBe(0);
    expect(await redis.xinfo('GROUPS', K.ev)).toEqual([]);
  });

  test('settling in batches: each outcome on its own claim, a release makes one due again with its attempt not counted', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_a', 'session.start', WEBHOOK_GROUP);
    const log = new EventLog(redis);
    for (let i = 0; i < 5; i++) await log.append(tenant, 'session.start', null, { i });
    await route(redis, K, 10, 1000);
    const c = await redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, 2000, 10_000, 10, 'tok', 3, 86_400_000);
    const [a, b, d, r, x] = c.filter((_, i) => i % 3 === 0);
    // Five outcomes in one call: the last with a token that is not the claim's.
    expect(await settle(redis, K, 3000, [a!, 'tok', 'delivered', '200'], [b!, 'tok', 'retry', '500'], [d!, 'tok', 'dead', '404'],
      [r!, 'tok', 'released', ''], [x!, 'other', 'delivered', '200'])).toEqual([1, 1, 1, 1, 0]);
    expect(await redis.zscore(K.q, a!)).toBeNull();
    expect(await redis.zscore(K.done, a!)).not.toBeNull();
    expect(Number(await redis.zscore(K.q, b!))).toBe(4000);
    expect(await redis.zscore(K.dead, d!)).not.toBeNull();
    expect(JSON.parse((await redis.hget(K.d, r!))!)).toMatchObject({ n: 0, st: 'pending' });
    expect(Number(await redis.zscore(K.q, r!))).toBe(3000);
    // The foreign settle changed nothing: x keeps its claim.
    expect(JSON.parse((await redis.hget(K.d, x!))!)).toMatchObject({ n: 1, k: 'tok' });
    // Attempts recorded for the three that were sent, none for the release.
    const att = await redis.xrange(K.att('whk_a'), '-', '+');
    expect(att.map(([, f]) => f[9])).toEqual(['delivered', 'failed', 'dead']);
    // Released: claimed again at once, as a first attempt.
    const again = await redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, 3001, 10_000, 10, 'tok2', 3, 86_400_000);
    expect(again[0]).toBe(r);
    expect(JSON.parse(again[1]!)).toMatchObject({ n: 1, k: 'tok2' });
  });

  test('a delivery whose last attempt was never settled (its process died) is dead when its claim lapses, not sent a fourth time', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    await redis.addWebhookV1(K.subs, K.ev, 'whk_l', 'session.start', WEBHOOK_GROUP);
    await new EventLog(redis).append(tenant, 'session.start', null, { n: 1 });
    await route(redis, K, 10, 1);
    // Three claims, each lapsing unsettled (three processes killed mid-attempt).
    for (let n = 1; n <= 3; n++) {
      const c = await redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, n * 20_000, 10_000, 10, `t${n}`, 3, 86_400_000);
      expect(c.length / 3).toBe(1);
      expect(JSON.parse(c[1]!)).toMatchObject({ n });
    }
    expect(await redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, 80_000, 10_000, 10, 't4', 3, 86_400_000)).toEqual([]);
    const [id] = await redis.zrange(K.dead, 0, -1);
    expect(id).toBeDefined();
    expect(await redis.zscore(K.q, id!)).toBeNull();
    expect(JSON.parse((await redis.hget(K.d, id!))!)).toMatchObject({ st: 'dead', n: 3 });
  });

  test('trimming: never past what the group has not read; by length when it has read enough or there is no group', async ({ redis, tenant, keys }) => {
    const K = k(keys, tenant);
    const maxlen = 100;
    await redis.addWebhookV1(K.subs, K.ev, 'whk_t', 'session.start', WEBHOOK_GROUP);
    const p = redis.pipeline();
    for (let i = 0; i < 1000; i++) p.xadd(K.ev, '*', 'type', 'session.start', 'ts', '0', 'site', '', 'data', `{"i":${i}}`);
    await p.exec();
    // Nothing read: 1000 unread entries, a writer's MAXLEN ~ 100 would have dropped 900 of them.
    await redis.trimEventsV1(K.ev, maxlen, WEBHOOK_GROUP);
    expect(await redis.xlen(K.ev)).toBe(1000);
    // 600 routed: the 400 unread stay (and the trim stays in whole nodes, so a few read ones may too).
    await route(redis, K, 600, 1);
    await redis.trimEventsV1(K.ev, maxlen, WEBHOOK_GROUP);
    const left = await redis.xlen(K.ev);
    expect(left).toBeGreaterThanOrEqual(400);
    expect(left).toBeLessThan(1000);
    const unread = await redis.xrange(K.ev, '-', '+');
    expect(unread.slice(-400).map(([, f]) => f[7])).toEqual(Array.from({ length: 400 }, (_, i) => `{"i":${600 + i}}`));
    // All read: trimmed by length, to about maxlen.
    await route(redis, K, 1000, 1);
    await redis.trimEventsV1(K.ev, maxlen, WEBHOOK_GROUP);
    expect(await redis.xlen(K.ev)).toBeGreaterThanOrEqual(maxlen);
    expect(await redis.xlen(K.ev)).toBeLessThan(400);
    // No group (no subscription left): by length.
    await redis.removeWebhookV1(K.subs, K.ev, 'whk_t', WEBHOOK_GROUP);
    for (let i = 0; i < 500; i++) await redis.xadd(K.ev, '*', 'type', 'session.start', 'ts', '0', 'site', '', 'data', '{}');
    await redis.trimEventsV1(K.ev, maxlen, WEBHOOK_GROUP);
    expect(await redis.xlen(K.ev)).toBeLessThan(300);
  });
});
