import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger, Engine, loadConfig } from '../../engine/index.js';
import { startService, testEnv, until, type Running } from '../support/fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * One subscription's throughput (issue 19: lag p99 ≤ 1 s under a 5,000-event
 * burst). Its deliveries were limited by round trips, not CPU: 16 attempts
 * in flight per tenant, and new events routed only at the poll's turn, every
 * WEBHOOK_POLL_MS. Now a tenant may have 64 attempts in flight (the default
 * of WEBHOOK_TENANT_CONCURRENCY), still bounded; and a tenant whose events
 * are flowing is routed again within milliseconds, until a whole poll
 * interval passes without one. Each test has its own Redis database (18, 19):
 * every engine process dispatches every tenant of its database.
 */
const SECRETS_KEY = randomBytes(32).toString('base64');
const SECRET = 'one-subscription-secret-0123456789';
const db = (n: number): string => `${inject('redisUrl')}/${n}`;

/** An engine in the test's process that sends nothing (no dispatcher): it makes the tenant, the subscription and the events. */
async function sideEngine(redisUrl: string): Promise<Engine> {
  const engine = new Engine(loadConfig(testEnv({ REDIS_URL: redisUrl, SECRETS_KEY })), createLogger('silent'), { sink: false, actors: false });
  await engine.start();
  return engine;
}

async function tenantWithSubscription(engine: Engine, url: string): Promise<{ tenantId: string; hotspotId: string }> {
  const tenant = await engine.tenants.create(`One Subscription ${Math.random().toString(36).slice(2, 8)}`);
  const hs = await engine.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'Europe/Istanbul' });
  await engine.webhooks.create(tenant.id, { url, events: ['session.start'], secret: SECRET });
  return { tenantId: tenant.id, hotspotId: hs.id };
}

describe('webhooks: one subscription', () => {
  const engines: Engine[] = [];
  const running: Running[] = [];
  afterAll(async () => {
    for (const s of running) await s.stop().catch(() => undefined);
    for (const e of engines) await e.close().catch(() => undefined);
  });

  describe('attempts in flight', () => {
    let server: Server;
    let open = 0;
    let maxOpen = 0;
    const ids: string[] = [];
    let letGo = (): void => undefined;
    const held = new Promise<void>((r) => { letGo = r; });
    beforeAll(async () => {
      // Counts the requests open at once: each held until the test lets them go, its count dropped when its exchange ends.
      server = createServer((req, res) => {
        open++;
        maxOpen = Math.max(maxOpen, open);
        res.on('close', () => { open--; });
        // Counted when answered 200: an attempt the service gave up on (its 5 s deadline, on a slow machine) is retried, not delivered.
        res.on('finish', () => { ids.push(String(req.headers['x-webhook-id'])); });
        req.resume();
        req.on('end', () => { void held.then(() => { if (!res.destroyed) res.writeHead(200).end('ok'); }); });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    });
    afterAll(async () => {
      letGo();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });

    it('one subscription has more than 16 attempts in flight (the default WEBHOOK_TENANT_CONCURRENCY is 64), never more than 64; each delivered once', async () => {
      const side = await sideEngine(db(18));
      engines.push(side);
      const t = await tenantWithSubscription(side, `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`);
      const svc = await startService({ REDIS_URL: db(18), SECRETS_KEY });
      running.push(svc);
      for (let i = 0; i < 100; i++) await side.events.append(t.tenantId, 'session.start', t.hotspotId, { i });
      // Before, at most 16 were in flight: a held 17th never came (the 16 time out after 5 s, and 16 more replace them).
      await until(() => open >= 64, { what: '64 attempts of the one subscription in flight at once', timeoutMs: 20_000, seen: () => ({ open, maxOpen }) });
      expect(maxOpen).toBe(64);
      letGo();
      await until(() => ids.length >= 100 && open === 0, { what: 'all 100 delivered', timeoutMs: 30_000, seen: () => ({ got: ids.length, open }) });
      expect(new Set(ids).size).toBe(100);
      expect(ids).toHaveLength(100);
      // The bound held while the rest went through.
      expect(maxOpen).toBe(64);
    });
  });

  describe('routing while events flow', () => {
    let rx: WebhookReceiver;
    beforeAll(async () => { rx = await WebhookReceiver.start(); });
    afterAll(async () => { await rx.close(); });

    it('with a 60 s poll, an event that follows a routed one is delivered within half a poll (the tenant stays hot for one poll interval)', async () => {
      const side = await sideEngine(db(19));
      engines.push(side);
      const t = await tenantWithSubscription(side, rx.url);
      // Owed before the service starts: its first turn (at start) routes it, and the tenant turns hot.
      await side.events.append(t.tenantId, 'session.start', t.hotspotId, { i: 1 });
      const svc = await startService({ REDIS_URL: db(19), SECRETS_KEY, WEBHOOK_POLL_MS: '60000' });
      running.push(svc);
      await rx.when(() => rx.requests.some((r) => r.answered === 200), 'the first event delivered');
      // Before, the next event waited for the next turn, a whole 60 s poll after the first ended.
      const appendedAt = Date.now();
      await side.events.append(t.tenantId, 'session.start', t.hotspotId, { i: 2 });
      await rx.when(() => rx.requests.length >= 2, 'the second event within half a poll', 30_000);
      expect(rx.requests[1]!.at - appendedAt).toBeLessThan(30_000);
      expect(JSON.parse(rx.requests[1]!.body).data).toEqual({ i: 2 });
      expect(rx.requests).toHaveLength(2);
    });
  });
});
