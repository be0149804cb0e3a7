import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call, keys, newTenant, startService, until, type Running } from '../support/fixture.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { Redis } from 'ioredis';

/**
 * The dispatcher claims up to twice its tenant's concurrency: as many
 * attempts under way, as many waiting for a slot. A process that stops gives
 * back what it claimed and did not send (due again at once, the attempt not
 * counted), and finishes and records what it sent; another process then
 * sends the rest, each delivery exactly once. Before, a stopping process
 * left nothing claimed-and-unsent, so there was nothing to give back; now
 * there is, and without the release those deliveries would wait out their
 * 15 s lease with an attempt counted that never happened.
 */
// A Redis database of its own: every engine process dispatches every tenant in its Redis.
const env = (): Record<string, string> => ({
  REDIS_URL: `${inject('redisUrl')}/15`, SECRETS_KEY, WEBHOOK_TENANT_CONCURRENCY: '2', WEBHOOK_POLL_MS: '20',
});
const SECRETS_KEY = randomBytes(32).toString('base64');

describe('webhook dispatcher: claimed deliveries on stop', () => {
  let rx: WebhookReceiver;
  let redis: Redis;
  const running: Running[] = [];
  beforeAll(async () => {
    rx = await WebhookReceiver.start();
    redis = new Redis(`${inject('redisUrl')}/15`);
  });
  afterAll(async () => {
    for (const s of running) await s.stop().catch(() => undefined);
    await rx.close();
    redis.disconnect();
  });

  it('a stopping process releases its claimed, unsent deliveries; the next process sends each exactly once', async () => {
    const first = await startService(env());
    running.push(first);
    const t = await newTenant(first.service);
    const sub = await call(first.base, 'POST', '/v1/webhooks', { auth: t.apiKey, body: { url: rx.url, events: ['session.start'], secret: 'stop-test-secret-0123456789' } });
    expect(sub.status).toBe(201);
    // The first two requests are held until the test lets them go, so both slots stay busy while the rest are claimed.
    let letGo = (): void => undefined;
    const held = new Promise<void>((r) => { letGo = r; });
    rx.reply = (_r, i) => (i < 2 ? { status: 200, heldUntil: held } : { status: 200 });
    for (let i = 0; i < 6; i++) await first.service.engine.events.append(t.tenantId, 'session.start', t.hotspotId, { i });
    await rx.when(() => rx.requests.length >= 2, 'the two held requests');
    const states = async (): Promise<{ n: number; k?: string }[]> =>
      Object.values(await redis.hgetall(keys.webhookDeliveries(t.tenantId))).map((v) => JSON.parse(v) as { n: number; k?: string });
    // Two sent, two more claimed and waiting for a slot (twice the concurrency), two left in the queue. The dispatcher
    // runs on its own thread, so it may route the six events over two passes: wait for all six owed, four claimed.
    await until(async () => { const s = await states(); return s.length === 6 && s.filter((x) => x.k).length === 4; },
      { what: 'six owed, four claimed' });
    expect(rx.requests).toHaveLength(2);

    const stoppedAt = Date.now();
    const stopping = first.stop();
    // The two waiting are released at once, while the two in flight still hold their claims.
    await until(async () => (await states()).filter((s) => s.k).length === 2, { what: 'the two waiting released' });
    letGo();
    await stopping;
    running.splice(running.indexOf(first), 1);
    // The two in flight were answered and recorded; the two waiting were released: unclaimed, no attempt counted, due now.
    const after = await states();
    expect(after.filter((s) => s.k)).toEqual([]);
    expect(after.filter((s) => s.n === 1)).toHaveLength(2);
    expect(after.filter((s) => s.n === 0)).toHaveLength(4);
    const due = await redis.zrangebyscore(keys.webhookQueue(t.tenantId), '-inf', stoppedAt + 1_000);
    expect(due).toHaveLength(4);
    expect(rx.requests).toHaveLength(2);

    // The next process sends the four (due now, not after a lease), and nothing twice.
    const second = await startService(env());
    running.push(second);
    await rx.when(() => rx.requests.length >= 6 && rx.requests.every((r) => r.answered === 200), 'all six delivered');
    const ids = rx.requests.map((r) => r.headers['x-webhook-id']);
    expect(new Set(ids).size).toBe(6);
    await until(async () => (await redis.zcard(keys.webhookQueue(t.tenantId))) === 0, { what: 'the queue empty' });
    expect(rx.requests).toHaveLength(6);
    // Each was attempted once: the released ones carry no phantom attempt.
    expect((await states()).map((s) => s.n)).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
