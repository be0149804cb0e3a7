import { describe, expect } from 'vitest';
import { call, keys, serviceTest, startService, until } from '../support/fixture.js';

const test = serviceTest({ ACTOR_THREADS: '2' });

/**
 * A hotspot's lease between engine processes (engine/sessions/actor-host.ts,
 * renew-lease-2.lua). Every engine wakes every hotspot with live sessions
 * when it starts; one starting in the moment a hotspot's lease is free must
 * not take the hotspot from the process whose requests it is (the suite's
 * services start all the time, so this was actor-crash's flake: its
 * take-back waited for the other service's whole life).
 */
describe('hotspot lease take-back', () => {
  test('a lease another process let go goes back to the process that serves the hotspot, not to one that woke it meanwhile', async ({ svc, redis, tenant: t }) => {
    const engine = svc.service.engine;
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'TAKEBACK-1', max_uses: null } });
    const mac = 'CC:00:00:00:02:01';
    const signIn = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'TAKEBACK-1', mac } });
    expect(signIn.status).toBe(200);
    const nas = { id: 'nas_none', tenantId: t.tenantId, hotspotId: t.hotspotId, ip: '127.0.0.9', secret: 'x', coaPort: 3799, requireMessageAuthenticator: false };
    const ask = async () => engine.radius.authorize({ nas, mac, userName: 'guest' });
    expect(await ask()).toMatchObject({ accept: true });

    // Another process takes the lease; this one finds out at its next renewal (every 10 s) and answers 503.
    const lease = keys.lease(t.tenantId, t.hotspotId);
    await redis.set(lease, 'another-node', 'PX', 60_000);
    const refused = async (p: Promise<unknown>): Promise<boolean> => p.then(() => false, (err: { code?: string }) => err.code === 'hotspot_owned_elsewhere');
    await until(() => refused(ask()), { timeoutMs: 20_000, what: 'the lease loss seen at the renewal' });

    // That process lets go, and a third starts right then: it wakes every hotspot with live sessions, this one too.
    await redis.del(lease);
    const third = await startService({ ACTOR_THREADS: '1' });
    try {
      const woken = third.service.engine.actors!.hotspotSessions(t.tenantId, t.hotspotId, 'Europe/Istanbul');
      expect(await refused(woken)).toBe(true);
      // This process takes it back at its next request (asked at most once a second), with the session.
      await until(async () => (await ask().catch(() => ({ accept: false }))).accept === true,
        { timeoutMs: 10_000, what: 'the take-back', seen: () => redis.get(lease) });
      expect(await ask()).toMatchObject({ accept: true, sessionId: signIn.body.session_id });
      expect(await redis.get(lease)).toBe(engine.config.nodeId);
    } finally {
      await third.stop();
    }
  });
});
