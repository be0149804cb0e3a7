import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { activityBuckets } from '../../engine/events/activity-keys.js';
import { ActivityTally } from '../../engine/events/activity-tally.js';
import { createLogger } from '../../engine/logger.js';
import { ACTIVITY_TTL } from '../../engine/redis/records.js';
import { storesTest as test } from '../support/fixture.js';

/** engine/events/activity-tally.ts against the real Redis: accounting's byte counts, summed and written per tenant. */
describe('ActivityTally', () => {
  const AT = 1_790_000_000_000 - (1_790_000_000_000 % 3_600_000) + 5_000;

  test('sums deltas per tenant, site, minute and hour, and writes them with their lifetimes', async ({ redis }) => {
    const [a, b] = [`tn_tal${randomBytes(4).toString('hex')}`, `tn_tal${randomBytes(4).toString('hex')}`];
    const tally = new ActivityTally(redis);
    tally.add(a, 'hs_1', AT, 1_000, 200);
    tally.add(a, 'hs_1', AT + 1_000, 500, 0);
    tally.add(a, 'hs_2', AT + 2_000, 0, 50);
    tally.add(a, 'hs_1', AT + 61_000, 7, 3); // the next minute, the same hour
    tally.add(b, 'hs_9', AT, 42, 0);
    tally.add(b, 'hs_9', AT, 0, 0); // a retransmit: nothing
    await tally.close();

    const [m1, h] = activityBuckets(a, AT);
    const [m2] = activityBuckets(a, AT + 61_000);
    expect(await redis.hgetall(m1)).toEqual({ bin: '1500', 'bin@hs_1': '1500', bout: '250', 'bout@hs_1': '200', 'bout@hs_2': '50' });
    expect(await redis.hgetall(m2)).toEqual({ bin: '7', 'bin@hs_1': '7', bout: '3', 'bout@hs_1': '3' });
    expect(await redis.hgetall(h)).toEqual({ bin: '1507', 'bin@hs_1': '1507', bout: '253', 'bout@hs_1': '203', 'bout@hs_2': '50' });
    expect(await redis.ttl(m1)).toBeGreaterThan(ACTIVITY_TTL.minute - 60);
    expect(await redis.ttl(h)).toBeGreaterThan(ACTIVITY_TTL.hour - 60);
    expect(await redis.hgetall(activityBuckets(b, AT)[0])).toEqual({ bin: '42', 'bin@hs_9': '42' });

    // A second flush adds to what is there.
    const again = new ActivityTally(redis);
    again.add(a, 'hs_1', AT, 1, 1);
    await again.close();
    expect(await redis.hget(m1, 'bin')).toBe('1501');
    await redis.del(m1, m2, h, ...activityBuckets(b, AT));
  });

  test('with Redis away, add() neither throws nor waits, and the flush fails quietly', async () => {
    const dead = new Redis('redis://127.0.0.1:1', { maxRetriesPerRequest: 0, lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    dead.on('error', () => undefined);
    const tally = new ActivityTally(dead, createLogger('silent'));
    // Neither waits: every call returns before the event loop turns once (no promise, no I/O awaited).
    let turned = false;
    setImmediate(() => { turned = true; });
    for (let i = 0; i < 10_000; i++) expect(tally.add('tn_away', `hs_${i % 10}`, AT + i, 100, 10)).toBeUndefined();
    expect(turned).toBe(false);
    await expect(tally.close()).resolves.toBeUndefined();
    dead.disconnect();
  });
});
