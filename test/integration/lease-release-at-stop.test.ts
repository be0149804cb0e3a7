import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { call, keys, mac, newTenant, newVoucher, startService, until } from '../support/fixture.js';

/**
 * A graceful stop (SIGTERM: the service's stop()) gives up the hotspot leases its actor threads
 * hold (release-lease-2.lua) after their work in flight, so removing a process from a group costs its
 * hotspots no lease time (docs/scale.md, "Removing a process"); a kill -9 still costs the lease time.
 */
describe('hotspot leases at a graceful stop', () => {
  const redis = new Redis(inject('redisUrl'));
  afterAll(() => redis.disconnect());

  it('the stopped process\'s leases are gone at once, not after HOTSPOT_LEASE_MS', async () => {
    const nodeId = `lease-stop-${randomBytes(4).toString('hex')}`;
    const svc = await startService({ NODE_ID: nodeId, HOTSPOT_LEASE_MS: '300000' });
    let stopped = false;
    try {
      const t = await newTenant(svc.service, 'Lease Venue');
      const v = await newVoucher(svc.base, t);
      const r = await call(svc.base, 'POST', '/api/v1/hotspot-portal/voucher/verify', { body: { hotspot_id: t.hotspotId, code: v.code, mac: mac(1, 0x6c) } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const lease = keys.lease(t.tenantId, t.hotspotId);
      await until(async () => (await redis.get(lease)) === nodeId, { what: 'the hotspot\'s lease taken by the service' });
      expect(await redis.pttl(lease)).toBeGreaterThan(200_000);
      await svc.stop();
      stopped = true;
      // Given up: free, or already taken by another test file's service (every engine start wakes the hotspots with
      // live sessions and takes their free leases), never still ours for the 300 s it had left.
      expect(await redis.get(lease)).not.toBe(nodeId);
      // The session itself stays: it lives in Redis, for the process that takes the hotspot next.
      expect(await redis.zcard(keys.live(t.tenantId, t.hotspotId))).toBe(1);
    } finally {
      if (!stopped) await svc.stop();
    }
  });
});
