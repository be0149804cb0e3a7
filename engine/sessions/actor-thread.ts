import { parentPort, workerData } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { createLogger } from '../logger.js';
import { Metrics } from '../metrics.js';
import { createRedis } from '../redis/scripts.js';
import { ActorHost } from './actor-host.js';
import { postBatch, readBatch } from './message-codec.js';
import { LEASES_RELEASED, RELEASE_LEASES, type ToThread } from './messages.js';

/**
 * The entry of a worker thread hosting hotspot actors (see ActorHost): one
 * host, one Redis connection, wired to the thread's port. Messages arrive
 * and leave in msgpackr-encoded batches.
 */
export interface ThreadData {
  redisUrl: string;
  nodeId: string;
  logLevel: string;
  /** HOTSPOT_LEASE_MS. */
  leaseMs?: number;
  index: number;
}

const data = workerData as ThreadData;
const port = parentPort!;
const log = createLogger(data.logLevel).child({ component: 'actor-thread', thread: data.index });
const packr = new Packr({ useRecords: false });
const metrics = new Metrics();
/** How often the main thread hears this thread's metrics (summed into its /metrics). */
const METRICS_MS = 1_000;

const host = new ActorHost({
  redis: createRedis(data.redisUrl, log, {}, metrics),
  nodeId: data.nodeId,
  leaseMs: data.leaseMs,
  log,
  send: (batch) => postBatch(port, packr, batch),
  // A SharedArrayBuffer is shared, not copied: handed over outside the msgpackr batches.
  publishMirror: (table) => port.postMessage({ t: 'mirror_table', table }),
});

port.on('message', (msg: Uint8Array | typeof RELEASE_LEASES) => {
  if (msg instanceof Uint8Array) host.receive(readBatch<ToThread>(packr, msg));
  // A graceful stop: the leases go before the thread is ended (ActorPool.close).
  else if (msg?.t === RELEASE_LEASES.t) void host.releaseLeases().then((n) => port.postMessage({ t: LEASES_RELEASED, n }));
});
host.start();
setInterval(() => void metrics.snapshot().then((snapshot) => port.postMessage({ t: 'metrics', snapshot })), METRICS_MS).unref();
