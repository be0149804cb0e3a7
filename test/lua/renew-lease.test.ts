import { describe, expect } from 'vitest';
import { keys, luaTest as it } from '../support/lua.js';
import { until } from '../support/poll.js';

const GRACE = 10_000;

/** renew-lease-2.lua: one engine process owns a hotspot's actor at a time; one that serves it is next in line. */
describe('renew-lease-2.lua', () => {
  const lease = (t: string) => keys.lease(t, 'hs_lua');
  const next = (t: string) => keys.leaseNext(t, 'hs_lua');

  it('takes a free lease, keeps it for its owner, refuses another until it expires and says for how long', async ({ redis, tenant: t }) => {
    // Redis counts a time to live on the clock this process reads: what is left is at least the time set less the time
    // these calls took, however long a busy machine held them up.
    const taken = Date.now();
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 30_000, 0, GRACE)).toBe(1);
    expect(await redis.get(lease(t))).toBe('node-a');
    const refused = await redis.renewLeaseV2(lease(t), next(t), 'node-b', 300, 0, GRACE);
    expect(refused).toBeLessThan(0);
    expect(-refused).toBeGreaterThanOrEqual(30_000 - (Date.now() - taken));
    expect(-refused).toBeLessThanOrEqual(30_000);
    expect(await redis.get(lease(t))).toBe('node-a');
    // The owner's renewal resets the time to live.
    const renewed = Date.now();
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 60_000, 0, GRACE)).toBe(1);
    expect(await redis.pttl(lease(t))).toBeGreaterThanOrEqual(60_000 - (Date.now() - renewed));
    expect(await redis.exists(next(t))).toBe(0); // refused without asking to be next: not in line
  });

  it('an expired lease (its owner died) goes to the next process that asks', async ({ redis, tenant: t }) => {
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 50, 0, GRACE)).toBe(1);
    await until(async () => (await redis.exists(lease(t))) === 0, { intervalMs: 10, what: 'the lease expired' });
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-b', 300, 0, GRACE)).toBe(1);
    expect(await redis.get(lease(t))).toBe('node-b');
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 300, 0, GRACE)).toBeLessThan(0);
  });

  it('a process refused while it serves the hotspot is next in line: a free lease is kept for it, not given to one that only woke it', async ({ redis, tenant: t }) => {
    const held = Date.now();
    await redis.set(lease(t), 'node-there', 'PX', 60_000);
    // node-a serves the hotspot and is refused: next in line, for the holder's time left and the grace.
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 30_000, 1, GRACE)).toBeLessThan(0);
    expect(await redis.get(next(t))).toBe('node-a');
    expect(await redis.pttl(next(t))).toBeGreaterThanOrEqual(60_000 + GRACE - (Date.now() - held));
    // The first in line keeps its place: another that serves it too is refused without taking it.
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-c', 30_000, 1, GRACE)).toBeLessThan(0);
    expect(await redis.get(next(t))).toBe('node-a');

    // The holder lets go: a process that only woke the hotspot is refused, told how long the place in line lasts.
    await redis.del(lease(t));
    const wait = await redis.renewLeaseV2(lease(t), next(t), 'node-b', 30_000, 0, GRACE);
    expect(-wait).toBeGreaterThanOrEqual(60_000 + GRACE - (Date.now() - held));
    expect(await redis.exists(lease(t))).toBe(0);
    // The one next in line takes it, and the line is empty again.
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 30_000, 0, GRACE)).toBe(1);
    expect(await redis.get(lease(t))).toBe('node-a');
    expect(await redis.exists(next(t))).toBe(0);
  });

  it('a place in line runs out: then the lease goes to whoever asks', async ({ redis, tenant: t }) => {
    // Held for a minute while node-a is refused (a lease of 30 ms could lapse before the refusal on a busy machine, and
    // node-a would take it); then the holder is gone and the place's grace is down to its last 30 ms.
    await redis.set(lease(t), 'node-there', 'PX', 60_000);
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 30_000, 1, 30)).toBeLessThan(0);
    expect(await redis.get(next(t))).toBe('node-a');
    await redis.del(lease(t));
    await redis.pexpire(next(t), 30);
    await until(async () => (await redis.exists(next(t))) === 0, { intervalMs: 10, what: 'the place in line ran out' });
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-b', 30_000, 0, GRACE)).toBe(1);
    expect(await redis.get(lease(t))).toBe('node-b');
  });

  it('the holder renewing keeps the place of the process in line', async ({ redis, tenant: t }) => {
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 30_000, 0, GRACE)).toBe(1);
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-b', 30_000, 1, GRACE)).toBeLessThan(0);
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 30_000, 1, GRACE)).toBe(1);
    expect(await redis.get(next(t))).toBe('node-b');
  });
});
