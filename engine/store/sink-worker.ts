import type { Logger } from '../logger.js';
import type { Metrics, MetricsSnapshot } from '../metrics.js';
import { projectPath } from '../util/project-root.js';
import { WorkerSupervisor, type WorkerStats } from '../workers/worker-supervisor.js';
import { declareSinkMetrics, lagSeconds } from './outbox-sink.js';

export interface SinkThreadData {
  redisUrl: string;
  databaseUrl: string;
  nodeId: string;
  logLevel: string;
}

export type ToSinkThread = { t: 'tenants_changed' } | { t: 'stop' };

export type FromSinkThread =
  | { t: 'stats'; metrics: MetricsSnapshot; oldestPendingMs: number }
  | { t: 'stopped' };

/** The sink thread's name among the snapshots the process's metrics sum. */
const METRICS_SOURCE = 'outbox-sink';

/** How long a stopping sink may take to finish its batch before its thread is ended. */
const STOP_WAIT_MS = 10_000;
/**
 * A sink thread that died is started again after this pause, doubling up to
 * RESTART_MAX_MS while it keeps dying within a minute of its start (its
 * pending entries are re-read first).
 */
const RESTART_MS = 1_000;
const RESTART_MAX_MS = 30_000;

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
  private readonly thread: WorkerSupervisor;
  private oldestPendingMs = 0;

  constructor(data: SinkThreadData, log: Logger, private readonly metrics: Metrics) {
    // The thread's own counters (SINK_COUNTERS) and store-lag histogram come in its 'stats' snapshots.
    declareSinkMetrics(metrics);
    metrics.counter('outbox_sink_restarts_total', 'Times the sink thread died and was started again');
    metrics.gauge('outbox_sink_lag_seconds', 'Age of the oldest record the sink has read but not yet stored',
      () => lagSeconds(this.oldestPendingMs));
    this.thread = new WorkerSupervisor({
      name: 'outbox sink thread',
      file: projectPath('dist', 'engine', 'store', 'sink-thread.js'),
      workerData: data,
      resourceLimits: { maxYoungGenerationSizeMb: SINK_YOUNG_GENERATION_MB },
      backoff: { firstMs: RESTART_MS, maxMs: RESTART_MAX_MS, healthyMs: 60_000 },
      log,
      // A new thread counts from zero: what the one before counted stays in the sums.
      onStart: () => this.metrics.retire(METRICS_SOURCE),
      onMessage: (msg) => this.receive(msg as FromSinkThread),
      onExit: ({ restarting }) => {
        if (restarting) this.metrics.inc('outbox_sink_restarts_total');
      },
    });
  }

  start(): void {
    this.thread.start();
  }

  /** Restarts, whether a thread runs, and how the last one ended. */
  get stats(): WorkerStats {
    return this.thread.stats;
  }

  /** For fault-injection tests: end the thread as a crash would (it is started again). */
  async killThread(): Promise<void> {
    await this.thread.kill();
  }

  /** A tenant was created: its stream is drained from now on, not a few seconds later. */
  tenantsChanged(): void {
    this.thread.post({ t: 'tenants_changed' } satisfies ToSinkThread);
  }

  /** Lets the current batch commit, then ends the thread. */
  async stop(): Promise<void> {
    await this.thread.stop((worker) => {
      const stopped = new Promise<void>((resolve) => worker.on('message', (m: FromSinkThread) => { if (m.t === 'stopped') resolve(); }));
      worker.postMessage({ t: 'stop' } satisfies ToSinkThread);
      return stopped;
    }, STOP_WAIT_MS);
  }

  private receive(m: FromSinkThread): void {
    if (m.t !== 'stats') return;
    this.metrics.absorb(METRICS_SOURCE, m.metrics);
    this.oldestPendingMs = m.oldestPendingMs;
  }
}
