import type { MessagePort } from 'node:worker_threads';
import { createLogger } from '../logger.js';
import { PortSink, ProducerCancelled } from '../workers/port-stream.js';
import { createPool, type Pool } from '../store/postgres.js';
import { buildEvidencePack, type PackRequest } from './evidence-pack.js';
import { TimestampStore } from './timestamp-store.js';
import { TsaClient } from './tsa-client.js';

/**
 * The piscina task that builds an evidence pack off the request thread:
 * reading Postgres, CSV and JSON formatting, hashing and deflating are all
 * here. The archive goes back to the main thread over `port` in blocks with
 * a credit window (engine/workers/port-stream.ts, shared with the voucher
 * sheets): the build waits whenever the reader is a window behind, so a slow
 * client slows the build instead of filling memory.
 */
export interface PackTask extends PackRequest {
  port: MessagePort;
  databaseUrl: string;
  logLevel: string;
}

// One connection pool per worker thread, made on its first task and reused by
// the next ones: piscina keeps a thread for many tasks, and a pool per task
// would reconnect for every export. It dies with the thread (piscina's idle timeout).
const pools = new Map<string, Pool>();

function poolFor(databaseUrl: string, logLevel: string): Pool {
  let p = pools.get(databaseUrl);
  if (!p) {
    p = createPool(databaseUrl, createLogger(logLevel).child({ component: 'evidence-pack-worker' }), 3);
    pools.set(databaseUrl, p);
  }
  return p;
}

export default async function buildPack(task: PackTask): Promise<void> {
  const { port, databaseUrl, logLevel, ...req } = task;
  const sink = new PortSink(port);
  try {
    const pool = poolFor(databaseUrl, logLevel);
    const stamps = new TimestampStore(pool, req.tsaUrl ? new TsaClient(req.tsaUrl) : null);
    await buildEvidencePack(pool, stamps, req, (chunk) => {
      sink.write(chunk);
      return sink.drain();
    });
    await sink.end();
  } catch (err) {
    if (!(err instanceof ProducerCancelled)) sink.fail(err);
  } finally {
    // The main thread closes the channel once it has read the last message: closing
    // here could drop messages still in flight.
    port.unref();
  }
}
