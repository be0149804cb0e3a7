import { Worker } from 'node:worker_threads';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { projectPath } from '../util/project-root.js';
import { lagSeconds, SINK_COUNTERS } from './outbox-sink.js';

export interface SinkThreadData {
  redisUrl: string;
  databaseUrl: string;
  nodeId: string;
  logLevel: string;
}

export type ToSinkThread = { t: 'tenants_changed' } | { t: 'stop' };

export type FromSinkThread =
  | { t: 'stats'; counters: Record<string, number>; oldestPendingMs: number }
  | { t: 'stopped' };

/** How long a stopping sink may take to finish its batch before its thread is ended. */
const STOP_WAIT_MS = 10_000;
/** A sink thread that died is started again after this pause (its pending entries are re-read first). */
const RESTART_MS = 1_000;

/**
 * The sink thread's young generation. Each lane holds a batch of a few
 * thousand records (stream replies, maps, audit entries, COPY text) across
 * its Postgres round trips; with V8's default size much of it lived through
 * a scavenge and was copied, and garbage collection was a fifth of the
 * thread's time (its profile). It went in with 35cccc3, whose A/B is in
 * bench/RESULTS.md (audit-sink); a bigger one measured no better.
 */
const SINK_YOUNG_GENERATION_MB = 64;

/**
 * The outbox sink (see OutboxSink) on a worker thread of its own, seen from
 * the main thread: started and stopped with the engine, restarted if it
 * dies, and its counters and lag published in this process's metrics.
 *
 * Nothing is lost when the thread dies: entries are acknowledged in Redis
 * only after their transaction committed, and a new sink under the same
 * consumer name reads its own pending entries before any new one.
 */
export class SinkWorker {
  private worker: Worker | null = null;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private oldestPendingMs = 0;
  /** The thread's counters as last reported; a new thread counts from zero. */
  private seen: Record<string, number> = {};

  constructor(private readonly data: SinkThreadData, private readonly log: Logger, private readonly metrics: Metrics) {
    // The thread reports these as running totals (see SinkWorker.start).
    for (const [name, help] of Object.entries(SINK_COUNTERS)) metrics.counter(name, help);
    metrics.counter('outbox_sink_restarts_total', 'Times the sink thread died and was started again');
    metrics.gauge('outbox_sink_lag_seconds', 'Age of the oldest record the sink has read but not yet stored',
      () => lagSeconds(this.oldestPendingMs));
  }

  start(): void {
    if (this.worker || this.stopping) return;
    this.seen = {};
    const worker = new Worker(projectPath('dist', 'engine', 'store', 'sink-thread.js'),
      { workerData: this.data, resourceLimits: { maxYoungGenerationSizeMb: SINK_YOUNG_GENERATION_MB } });
    this.worker = worker;
    worker.on('message', (m: FromSinkThread) => {
      if (m.t !== 'stats') return;
      for (const [name, total] of Object.entries(m.counters)) this.metrics.inc(name, '', total - (this.seen[name] ?? 0));
      this.seen = m.counters;
      this.oldestPendingMs = m.oldestPendingMs;
    });
    worker.on('error', (err) => this.log.error({ err }, 'outbox sink thread crashed'));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      if (this.stopping) return;
      this.log.warn({ code }, 'outbox sink thread exited; starting it again');
      this.metrics.inc('outbox_sink_restarts_total');
      this.restartTimer = setTimeout(() => this.start(), RESTART_MS);
    });
  }

  /** For fault-injection tests: end the thread as a crash would (it is started again). */
  async killThread(): Promise<void> {
    await this.worker?.terminate();
  }

  /** A tenant was created: its stream is drained from now on, not a few seconds later. */
  tenantsChanged(): void {
    this.worker?.postMessage({ t: 'tenants_changed' } satisfies ToSinkThread);
  }

  /** Lets the current batch commit, then ends the thread. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const stopped = new Promise<void>((resolve) => worker.on('message', (m: FromSinkThread) => { if (m.t === 'stopped') resolve(); }));
    worker.postMessage({ t: 'stop' } satisfies ToSinkThread);
    const timer = setTimeout(() => {
      this.log.warn('outbox sink did not stop in time; ending its thread (its batch stays pending in Redis)');
      void worker.terminate();
    }, STOP_WAIT_MS);
    await Promise.race([stopped.then(() => worker.terminate()), exited]);
    clearTimeout(timer);
    await exited;
  }
}
