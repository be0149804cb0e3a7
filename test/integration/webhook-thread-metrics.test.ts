import { randomBytes } from 'node:crypto';
import { describe, expect, inject } from 'vitest';
import { call, serviceTest, until } from '../support/fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The webhook dispatcher's thread has a Redis connection of its own; its
 * scripts (claim, route, settle) are timed as the main thread's are
 * (engine/redis/script-timing.ts), and /metrics shows them: the thread posts
 * its timings with its counters, the main thread sums them into the scrape.
 * A thread that dies and is started again does not take its timings with it.
 */
// WHL's Redis database: every engine process dispatches every tenant in its Redis.
const test = serviceTest(async () => ({
  REDIS_URL: `${inject('redisUrl')}/20`, SECRETS_KEY: randomBytes(32).toString('base64'), WEBHOOK_POLL_MS: '20',
}));
/** Failure bounds, not pauses: a thread's start took 2 s to 10+ s on the shared 2-core machine. */
const STARTUP_LIMIT_MS = 60_000;

/** How many calls of `script` the scrape's latency histogram counts (0 when it names none). */
function scriptCalls(text: string, script: string): number {
  const m = new RegExp(`^guestwifi_redis_script_duration_seconds_count\\{script="${script}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('webhook dispatcher thread metrics', () => {
  test('its Redis scripts are timed in /metrics, and the timings outlive a restart of the thread', { timeout: 150_000 }, async ({ svc, tenant }) => {
    const rx = await WebhookReceiver.start();
    try {
      const engine = svc.service.engine;
      const r = await call(svc.base, 'POST', '/v1/webhooks', { auth: tenant.apiKey, body: { url: rx.url, events: ['session.start'], secret: 'metrics-test-secret-0123' } });
      expect(r.status).toBe(201);
      await engine.events.append(tenant.tenantId, 'session.start', tenant.hotspotId, { n: 1 });
      await rx.when(() => rx.requests.length >= 1, 'the first delivery', STARTUP_LIMIT_MS);
      const scrape = (): Promise<string> => engine.metrics.render();
      // Only the thread runs these three: the main thread's connection never claims, routes or settles.
      for (const script of ['claimWebhookDeliveriesV1', 'routeWebhookEventsV2', 'settleWebhookDeliveriesV1']) {
        await until(async () => scriptCalls(await scrape(), script) > 0, { what: `${script} timed`, seen: async () => scriptCalls(await scrape(), script) });
      }

      const before = scriptCalls(await scrape(), 'settleWebhookDeliveriesV1');
      const restarts = engine.webhookDispatcher.stats.restarts;
      await engine.webhookDispatcher.killThread();
      await until(() => engine.webhookDispatcher.stats.restarts === restarts + 1 && engine.webhookDispatcher.stats.running,
        { what: 'the thread started again', seen: () => engine.webhookDispatcher.stats, timeoutMs: STARTUP_LIMIT_MS });
      // The dead thread's timings stay counted; the new thread's add to them.
      expect(scriptCalls(await scrape(), 'settleWebhookDeliveriesV1')).toBeGreaterThanOrEqual(before);
      await engine.events.append(tenant.tenantId, 'session.start', tenant.hotspotId, { n: 2 });
      await rx.when(() => rx.requests.length >= 2, 'a delivery from the new thread', STARTUP_LIMIT_MS);
      await until(async () => scriptCalls(await scrape(), 'settleWebhookDeliveriesV1') > before,
        { what: 'the new thread\'s settle timed on top', seen: async () => scriptCalls(await scrape(), 'settleWebhookDeliveriesV1') });
    } finally {
      await rx.close();
    }
  });
});
