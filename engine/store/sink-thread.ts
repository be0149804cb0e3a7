import { parentPort, workerData } from 'node:worker_threads';
import { createLogger } from '../logger.js';
import { Metrics } from '../metrics.js';
import { createRedis } from '../redis/scripts.js';
import { LANES, OutboxSink } from './outbox-sink.js';
import { createPool } from './postgres.js';
import type { FromSinkThread, SinkThreadData, ToSinkThread } from './sink-worker.js';

/**
 * The worker thread that runs the outbox sink, so that reading, hashing and
 * writing batches of thousands of records never holds up the thread that
 * answers the portal, the API and RADIUS. Its own Redis connection and a
 * small Postgres pool; it reports its counters and lag to the main thread.
 */

const data = workerData as SinkThreadData;
const port = parentPort!;
const log = createLogger(data.logLevel).child({ component: 'outbox-sink' });
// A command cut off by a lost connection fails instead of being sent again on the new one: a
// stream read that Redis ran before the cut would be run twice, and the entries of the first run
// left pending unseen; failed, the batch is read again from this consumer's pending entries.
const metrics = new Metrics();
const redis = createRedis(data.redisUrl, log, { autoResendUnfulfilledCommands: false }, metrics);
// A connection per lane, and two for partition creation and the waiting pass beside them.
const pool = createPool(data.databaseUrl, log, LANES + 2);

/** How often the main thread hears the counters and the lag. */
const REPORT_MS = 200;
/** Tenant ids are re-read this often, and at once when the main thread says one was created. */
const TENANTS_TTL_MS = 2_000;

let tenantCache: { ids: string[]; at: number } = { ids: [], at: 0 };
async function tenantIds(): Promise<string[]> {
  if (Date.now() - tenantCache.at > TENANTS_TTL_MS) {
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM tenants');
    tenantCache = { ids: rows.map((r) => r.id), at: Date.now() };
  }
  return tenantCache.ids;
}

const sink = new OutboxSink(redis, pool, tenantIds, data.nodeId, log, metrics);

function post(msg: FromSinkThread): void {
  port.postMessage(msg);
}

/** The thread's whole registry (counters and the store-lag histogram): the main thread sums it into /metrics. */
async function report(): Promise<void> {
  post({ t: 'stats', metrics: await metrics.snapshot(), oldestPendingMs: sink.oldestPendingMs });
}

const reporter = setInterval(() => void report(), REPORT_MS);

port.on('message', (m: ToSinkThread) => {
  switch (m.t) {
    case 'tenants_changed':
      tenantCache.at = 0;
      return;
    case 'stop':
      clearInterval(reporter);
      void sink.stop().finally(async () => {
        await report();
        redis.disconnect();
        await pool.end().catch(() => undefined);
        post({ t: 'stopped' });
      });
      return;
  }
});

sink.start();
