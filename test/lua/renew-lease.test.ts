import { describe, expect } from 'vitest';
import { keys, luaTest as it } from '../support/lua.js';

/** renew-lease-1.lua: one engine process owns a hotspot's actor at a time. */
describe('renew-lease-1.lua', () => {
  it('takes a free lease, keeps it for its owner, refuses another until it expires', async ({ redis, tenant: t }) => {
    const lease = keys.lease(t, 'hs_lua');
    expect(await redis.renewLeaseV1(lease, 'node-a', 300)).toBe(1);
    expect(await redis.get(lease)).toBe('node-a');
    expect(await redis.renewLeaseV1(lease, 'node-b', 300)).toBe(0);
    expect(await redis.get(lease)).toBe('node-a');
    // The owner's renewal resets the time to live.
    expect(await redis.renewLeaseV1(lease, 'node-a', 60_000)).toBe(1);
    expect(await redis.pttl(lease)).toBeGreaterThan(59_000);
    expect(await redis.renewLeaseV1(lease, 'node-b', 300)).toBe(0);
  });

  it('an expired lease (its owner died) goes to the next process that asks', async ({ redis, tenant: t }) => {
    const lease = keys.lease(t, 'hs_lua');
    expect(await redis.renewLeaseV1(lease, 'node-a', 50)).toBe(1);
    await new Promise((r) => setTimeout(r, 120));
    expect(await redis.renewLeaseV1(lease, 'node-b', 300)).toBe(1);
    expect(await redis.get(lease)).toBe('node-b');
    expect(await redis.renewLeaseV1(lease, 'node-a', 300)).toBe(0);
  });
});
