import type { MessagePort } from 'node:worker_threads';
import { createLogger } from '../logger.js';
import { createPool, type Pool } from '../store/postgres.js';
import { buildEvidencePack, type PackRequest } from './evidence-pack.js';
import { TimestampStore } from './timestamp-store.js';
import { TsaClient } from './tsa-client.js';

/**
 * The piscina task that builds an evidence pack off the request thread:
 * reading Postgres, CSV and JSON formatting, hashing and deflating are all
 * here. The archive goes back to the main thread over `port` in blocks of
 * BLOCK_BYTES, transferred (not copied), with a credit window: at most
 * WINDOW blocks are unacknowledged, and the main thread acknowledges one
 * only when the HTTP response has taken the one before. So a slow client
 * slows the build instead of filling memory.
 */
export const BLOCK_BYTES = 64 * 1024;
export const WINDOW = 8;

export interface PackTask extends PackRequest {
  port: MessagePort;
  databaseUrl: string;
  logLevel: string;
}

/** Main thread to worker. */
export type ToBuilder = { t: 'ack' } | { t: 'cancel' };
/** Worker to main thread; `end` and `error` are last. */
export type FromBuilder =
  | { t: 'data'; chunk: Uint8Array }
  | { t: 'end'; days: number; files: number }
  | { t: 'error'; code: string; message: string };

class Cancelled extends Error {
  constructor() {
    super('export cancelled by the client');
  }
}

/** Coalesces the archive into blocks and sends them within the credit window. */
class PortSink {
  private block = new Uint8Array(BLOCK_BYTES);
  private used = 0;
  private credits = WINDOW;
  private wake: (() => void) | null = null;
  cancelled = false;

  constructor(private readonly port: MessagePort) {
    port.on('message', (m: ToBuilder) => {
      if (m.t === 'ack') this.credits++;
      else this.cancelled = true;
      this.wake?.();
    });
    // The main thread closing its end without a word is a cancel too.
    port.on('close', () => {
      this.cancelled = true;
      this.wake?.();
    });
  }

  async write(chunk: Buffer): Promise<void> {
    for (let off = 0; off < chunk.length;) {
      const n = Math.min(BLOCK_BYTES - this.used, chunk.length - off);
      this.block.set(chunk.subarray(off, off + n), this.used);
      this.used += n;
      off += n;
      if (this.used === BLOCK_BYTES) await this.send();
    }
  }

  async flush(): Promise<void> {
    if (this.used > 0) await this.send();
  }

  private async send(): Promise<void> {
    while (this.credits === 0 && !this.cancelled) await new Promise<void>((r) => { this.wake = r; });
    this.wake = null;
    if (this.cancelled) throw new Cancelled();
    this.credits--;
    const msg: FromBuilder = { t: 'data', chunk: this.block.subarray(0, this.used) };
    // The block's memory moves to the main thread; a fresh one takes its place.
    this.port.postMessage(msg, [this.block.buffer]);
    this.block = new Uint8Array(BLOCK_BYTES);
    this.used = 0;
  }
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
    const manifest = await buildEvidencePack(pool, stamps, req, (chunk) => sink.write(chunk));
    await sink.flush();
    const end: FromBuilder = { t: 'end', days: manifest.days.length, files: manifest.files.length };
    port.postMessage(end);
  } catch (err) {
    if (!sink.cancelled) {
      const e = err as Error & { code?: string };
      const msg: FromBuilder = { t: 'error', code: e.code ?? 'internal_error', message: e.message };
      port.postMessage(msg);
    }
  } finally {
    // The main thread closes the channel once it has read the last message: closing
    // here could drop messages still in flight.
    port.unref();
  }
}
