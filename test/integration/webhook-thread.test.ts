import { randomBytes } from 'node:crypto';
import { threadId, Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, inject } from 'vitest';
import { call, serviceTest, until, type Running, type Tenant } from '../support/fixture.js';

/**
 * The webhook dispatcher runs on a thread of its own (engine/webhooks/
 * dispatcher-thread.ts), so its deliveries do not wait behind the main event
 * loop's sign-ins. Shown here the hard way: the main thread (which, with
 * startService, is this test's thread and the service's) is held in a
 * synchronous wait while an event is owed, and the delivery still reaches a
 * receiver that runs on another thread and counts in shared memory. With the
 * dispatcher on the main thread nothing can be sent while it is held, and the
 * wait runs out. A dispatcher thread that dies is started again and
 * deliveries go on; the service is unaffected.
 */
// W19's Redis database: every engine process dispatches every tenant in its Redis.
const test = serviceTest(async () => ({
  REDIS_URL: `${inject('redisUrl')}/21`, SECRETS_KEY: randomBytes(32).toString('base64'), WEBHOOK_POLL_MS: '20',
}));
const SECRET = 'thread-test-secret-0123456789';
/**
 * Failure bounds, not pauses (each wait ends at its event). A thread's start (its modules, connections and
 * first turn) took 2 s to 10+ s on the shared 2-core machine with other files' tests beside it.
 */
const STARTUP_LIMIT_MS = 60_000;
/** The held main thread is let go as soon as the delivery has arrived. */
const HOLD_LIMIT_MS = 30_000;
/** Each test waits for a thread's start, and the first for the held wait besides. */
const TEST_LIMIT = { timeout: 150_000 };

/** An HTTP receiver on a worker thread: counts every request in shared memory (Atomics) and answers 200. */
const RECEIVER = `
const { createServer } = require('node:http');
const { parentPort, workerData } = require('node:worker_threads');
const count = new Int32Array(workerData.shared);
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    Atomics.add(count, 0, 1);
    Atomics.notify(count, 0);
    res.writeHead(200).end('ok');
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => server.close(() => process.exit(0)));
`;

describe('webhook dispatcher thread', () => {
  const count = new Int32Array(new SharedArrayBuffer(4));
  let receiver: Worker;
  let url = '';
  beforeAll(async () => {
    receiver = new Worker(RECEIVER, { eval: true, workerData: { shared: count.buffer } });
    const port = await new Promise<number>((resolve) => receiver.once('message', resolve));
    url = `http://127.0.0.1:${port}/hook`;
  });
  afterAll(async () => {
    const exited = new Promise((r) => receiver.once('exit', r));
    receiver.postMessage('close');
    await exited;
  });

  async function subscribed(svc: Running, t: Tenant): Promise<void> {
    const r = await call(svc.base, 'POST', '/v1/webhooks', { auth: t.apiKey, body: { url, events: ['session.start'], secret: SECRET } });
    expect(r.status).toBe(201);
    // The first delivery: the thread knows the tenant and holds a connection to the receiver.
    const before = Atomics.load(count, 0);
    await svc.service.engine.events.append(t.tenantId, 'session.start', t.hotspotId, { warm: true });
    await until(() => Atomics.load(count, 0) > before, { what: 'the first delivery', timeoutMs: STARTUP_LIMIT_MS });
  }

  test('a delivery reaches the receiver while the main thread is held in a synchronous wait', TEST_LIMIT, async ({ svc, tenant }) => {
    await subscribed(svc, tenant);
    const stats = svc.service.engine.webhookDispatcher.stats;
    expect(stats.running).toBe(true);
    expect(stats.threadId).not.toBe(threadId);

    const before = Atomics.load(count, 0);
    await svc.service.engine.events.append(tenant.tenantId, 'session.start', tenant.hotspotId, { held: true });
    // From here to the wait's end this thread runs no callback: no Redis reply, no timer, no socket write.
    const started = performance.now();
    const outcome = Atomics.wait(count, 0, before, HOLD_LIMIT_MS);
    const heldMs = performance.now() - started;
    expect(outcome, `no delivery within ${Math.round(heldMs)} ms of a held main thread`).not.toBe('timed-out');
    expect(Atomics.load(count, 0)).toBe(before + 1);
  });

  test('a dispatcher thread that dies is started again, counted, and deliveries go on', TEST_LIMIT, async ({ svc, tenant }) => {
    await subscribed(svc, tenant);
    const engine = svc.service.engine;
    const restartsBefore = engine.webhookDispatcher.stats.restarts;
    const deliveredBefore = engine.metrics.value('webhook_deliveries_total', 'delivered');
    await engine.webhookDispatcher.killThread();
    await until(() => engine.webhookDispatcher.stats.restarts === restartsBefore + 1 && engine.webhookDispatcher.stats.running,
      { what: 'the thread started again', seen: () => engine.webhookDispatcher.stats, timeoutMs: STARTUP_LIMIT_MS });
    expect(engine.metrics.value('webhook_dispatcher_restarts_total')).toBe(restartsBefore + 1);
    // The service answered throughout, and the new thread delivers (and reports it: totals carry on, not reset).
    expect((await call(svc.base, 'GET', '/v1/webhooks', { auth: tenant.apiKey })).status).toBe(200);
    const before = Atomics.load(count, 0);
    await engine.events.append(tenant.tenantId, 'session.start', tenant.hotspotId, { after: 'restart' });
    await until(() => Atomics.load(count, 0) > before, { what: 'a delivery from the new thread', timeoutMs: STARTUP_LIMIT_MS });
    await until(() => engine.metrics.value('webhook_deliveries_total', 'delivered') > deliveredBefore,
      { what: 'the new thread\'s delivery counted' });
  });
});
