import { describe, expect } from 'vitest';
import { keys, luaTest as it } from '../support/lua.js';

/** release-lease-2.lua: a process stopping gracefully gives its lease and its own place in line up, nobody else's. */
describe('release-lease-2.lua', () => {
  const lease = (t: string) => keys.lease(t, 'hs_lua');
  const next = (t: string) => keys.leaseNext(t, 'hs_lua');

  it('deletes the lease only for its holder; another process next in line keeps its place', async ({ redis, tenant: t }) => {
    await redis.set(lease(t), 'node-a', 'PX', 30_000);
    await redis.set(next(t), 'node-b', 'PX', 40_000);
    expect(await redis.releaseLeaseV1(lease(t), next(t), 'node-c')).toBe(0);
    expect(await redis.get(lease(t))).toBe('node-a');
    expect(await redis.releaseLeaseV1(lease(t), next(t), 'node-a')).toBe(1);
    expect(await redis.exists(lease(t))).toBe(0);
    expect(await redis.get(next(t))).toBe('node-b');
  });

  it('a stopping process waiting in line leaves the line: no holder yields to it', async ({ redis, tenant: t }) => {
    await redis.set(lease(t), 'node-a', 'PX', 30_000);
    await redis.set(next(t), 'node-b', 'PX', 40_000);
    expect(await redis.releaseLeaseV1(lease(t), next(t), 'node-b')).toBe(0);
    expect(await redis.exists(next(t))).toBe(0);
    // The holder asked to yield now keeps the lease: nobody waits.
    expect(await redis.renewLeaseV2(lease(t), next(t), 'node-a', 30_000, 1, 10_000, 1)).toBe(1);
  });
});
