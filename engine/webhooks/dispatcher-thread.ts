import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../logger.js';
import { Metrics } from '../metrics.js';
import { OutboundHttp } from '../net/outbound-http.js';
import { OutboundPolicy } from '../net/outbound-target.js';
import { createRedis } from '../redis/scripts.js';
import { SecretBox, type SecretKey } from '../secrets/secret-box.js';
import { SecretStore } from '../secrets/secret-store.js';
import { createPool } from '../store/postgres.js';
import type { DispatcherThreadData, FromDispatcherThread, ToDispatcherThread } from './dispatcher-worker.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { DEAD_LETTERS_METRIC, DELIVERIES_METRIC, DELIVERY_OUTCOMES } from './webhook-metrics.js';
import { WebhookStore } from './webhook-store.js';
import { OutboundWebhookTransport } from './webhook-transport.js';

/**
 * The worker thread that sends webhook deliveries (WebhookDispatcher), so
 * that routing, claiming, signing and the attempts' HTTP exchanges never
 * wait behind the portal's sign-ins on the main event loop, nor hold them
 * up. Its own Redis connection, a small Postgres pool (the subscriptions'
 * mirror, targets and sealed secrets) and its own outbound HTTP client under
 * the same policy as the main thread's (resolved, checked, pinned at each
 * connection). It reports its counters to the main thread.
 */

const data = workerData as DispatcherThreadData;
const port = parentPort!;
const log = createLogger(data.logLevel).child({ component: 'webhooks' });
/**
 * WEBHOOK_THREAD_NICE: Linux keeps a nice value per thread (setpriority on
 * pid 0 is the calling thread), so this lowers only this thread's share of a
 * busy CPU against the main thread's sign-ins; the main thread, RADIUS and
 * the libuv pool keep theirs. Raising one's own nice value needs no
 * privilege. docs/webhooks.md has what it was measured to do.
 */
if (data.settings.threadNice && process.platform !== 'linux') {
  // Elsewhere setpriority(PRIO_PROCESS, 0) lowers the whole process, sign-ins included: the opposite of the intent.
  log.warn({ nice: data.settings.threadNice, platform: process.platform }, 'WEBHOOK_THREAD_NICE works on Linux only (a priority per thread); ignored');
} else if (data.settings.threadNice) {
  try {
    setPriority(data.settings.threadNice);
  } catch (err) {
    log.warn({ err: (err as Error).message, nice: data.settings.threadNice }, 'webhook dispatcher thread priority not lowered');
  }
}
/**
 * The thread's Redis scripts' latency (script-timing.ts), in a registry of its
 * own: posted whole to the main thread, which sums it into /metrics beside
 * its own connection's (Metrics.absorb). The counters below go as running
 * totals instead, which the main thread adds to its own counters.
 */
const scriptTiming = new Metrics();
const redis = createRedis(data.redisUrl, log, {}, scriptTiming);
// reconcile, the tenant list, a target's row and its secret: one query at a time per turn, a few per cache miss.
const pool = createPool(data.databaseUrl, log, 4);
const metrics = new Metrics();
// A Buffer crosses to a thread as a plain Uint8Array: the keys are made Buffers again.
const key = (k: SecretKey): SecretKey => ({ id: k.id, key: Buffer.from(k.key) });
const box = new SecretBox(data.secretsKeys.current && key(data.secretsKeys.current), data.secretsKeys.old.map(key));
const outbound = new OutboundPolicy({ allowPrivate: data.allowPrivateTargets });
/**
 * Connections to one receiving host: room for several tenants' full concurrency, so tenants whose
 * subscriptions share a host (one SaaS receiver) do not wait for each other's connections; the
 * engine's default (64) is one tenant's WEBHOOK_TENANT_CONCURRENCY.
 */
const http = new OutboundHttp({ outbound, maxSocketsPerOrigin: Math.max(512, 8 * data.settings.tenantConcurrency) });
const store = new WebhookStore(pool, redis, new SecretStore(pool, box), outbound);
const dispatcher = new WebhookDispatcher(redis, store, new OutboundWebhookTransport(http), data.settings, metrics, log);

/** How often the main thread hears the counters. */
const REPORT_MS = 200;

function post(msg: FromDispatcherThread): void {
  port.postMessage(msg);
}

async function report(): Promise<void> {
  const deliveries: Record<string, number> = {};
  for (const outcome of DELIVERY_OUTCOMES) deliveries[outcome] = metrics.value(DELIVERIES_METRIC, outcome);
  const scripts = await scriptTiming.snapshot();
  post({ t: 'stats', deliveries, deadLetters: metrics.value(DEAD_LETTERS_METRIC), inFlight: dispatcher.inFlight, scripts });
}

const reporter = setInterval(() => void report(), REPORT_MS);

port.on('message', (m: ToDispatcherThread) => {
  switch (m.t) {
    case 'changed':
      dispatcher.changed();
      return;
    case 'stop':
      clearInterval(reporter);
      void dispatcher.stop().finally(async () => {
        await report();
        http.close();
        redis.disconnect();
        await pool.end().catch(() => undefined);
        post({ t: 'stopped' });
      });
      return;
  }
});

dispatcher.start();
