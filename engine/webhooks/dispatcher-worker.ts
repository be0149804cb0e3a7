import type { Logger } from '../logger.js';
import type { Metrics, MetricsSnapshot } from '../metrics.js';
import type { SecretKey } from '../secrets/secret-box.js';
import { projectPath } from '../util/project-root.js';
import { WorkerSupervisor, type WorkerStats } from '../workers/worker-supervisor.js';
import type { DispatcherSettings } from './webhook-dispatcher.js';
import { ATTEMPT_DEADLINE_MS } from './webhook-dispatcher.js';
import { DEAD_LETTERS_METRIC, DELIVERIES_METRIC, DELIVERY_OUTCOMES, WEBHOOK_METRICS_HELP } from './webhook-metrics.js';

/** What the dispatcher's thread is started with: plain data (its connections are its own). */
export interface DispatcherThreadData {
  redisUrl: string;
  databaseUrl: string;
  logLevel: string;
  /** ALLOW_PRIVATE_TARGETS: the outbound policy the thread's own HTTP client connects under. */
  allowPrivateTargets: boolean;
  /** SECRETS_KEY / SECRETS_KEY_OLD: the subscriptions' signing secrets are opened in the thread. */
  secretsKeys: { current: SecretKey | undefined; old: SecretKey[] };
  settings: DispatcherSettings;
}

export type ToDispatcherThread = { t: 'changed' } | { t: 'stop' };

export type FromDispatcherThread =
  /** Counters as running totals; `scripts` the thread's Redis script-latency registry (script-timing.ts), whole. */
  | { t: 'stats'; deliveries: Record<string, number>; deadLetters: number; inFlight: number; scripts: MetricsSnapshot }
  | { t: 'stopped' };

/**
 * A stopping dispatcher gives back what it claimed at once and lets attempts
 * under way finish, each within its deadline: this long, then the thread is
 * ended (what it still held lapses with its lease and is sent again).
 */
const STOP_WAIT_MS = ATTEMPT_DEADLINE_MS + 5_000;
/** The thread's script timings among the snapshots the process's metrics sum. */
const METRICS_SOURCE = 'webhook-dispatcher';
/** A dead thread is started again after this, doubling while it keeps dying within a minute. */
const RESTART_MS = 1_000;
const RESTART_MAX_MS = 30_000;

/**
 * The webhook dispatcher (WebhookDispatcher) on a worker thread of its own,
 * seen from the main thread. Before, its awaits queued behind the portal's
 * verifies on the main event loop (the first event of a 5,000-sign-in burst
 * waited 458 ms in the service); now it routes, claims, signs and sends
 * beside the loop that answers the portal, the API and RADIUS, with its own
 * Redis connection, Postgres pool and outbound HTTP client.
 *
 * Started and stopped with the engine; restarted if it dies (an uncaught
 * error, a crash, terminate()) after a back-off. Nothing owed is lost when it
 * dies: owed deliveries live in Redis, a claim lapses after its lease and
 * the delivery is claimed again by any process. Its counters are published
 * in this process's metrics under the names the service always had (running
 * totals, added to this thread's counters), and its Redis script timings
 * beside this thread's (a snapshot, summed at the scrape).
 */
export class DispatcherWorker {
  private readonly thread: WorkerSupervisor;
  /** The thread's counters as last reported; a new thread counts from zero. */
  private seen: FromDispatcherThread & { t: 'stats' } = emptyStats();
  private inFlight = 0;
  private threadId = 0;

  constructor(data: DispatcherThreadData, log: Logger, private readonly metrics: Metrics) {
    metrics.counter(DELIVERIES_METRIC, WEBHOOK_METRICS_HELP[DELIVERIES_METRIC], 'outcome');
    metrics.counter(DEAD_LETTERS_METRIC, WEBHOOK_METRICS_HELP[DEAD_LETTERS_METRIC]);
    metrics.gauge('webhook_attempts_in_flight', WEBHOOK_METRICS_HELP.inFlight, () => this.inFlight);
    metrics.counter('webhook_dispatcher_restarts_total', 'Times the webhook dispatcher thread died and was started again');
    this.thread = new WorkerSupervisor({
      name: 'webhook dispatcher thread',
      file: projectPath('dist', 'engine', 'webhooks', 'dispatcher-thread.js'),
      workerData: data,
      backoff: { firstMs: RESTART_MS, maxMs: RESTART_MAX_MS, healthyMs: 60_000 },
      log,
      onStart: (worker) => {
        // A new thread times from zero: what the one before timed stays in the sums.
        this.metrics.retire(METRICS_SOURCE);
        this.seen = emptyStats();
        this.inFlight = 0;
        this.threadId = worker.threadId;
      },
      onMessage: (msg) => this.receive(msg as FromDispatcherThread),
      onExit: ({ restarting }) => {
        this.inFlight = 0;
        if (restarting) this.metrics.inc('webhook_dispatcher_restarts_total');
      },
    });
  }

  start(): void {
    this.thread.start();
  }

  /** Restarts, whether a thread runs, and how the last one ended. */
  get stats(): WorkerStats & { threadId: number } {
    return { ...this.thread.stats, threadId: this.threadId };
  }

  /** For fault-injection tests: end the thread as a crash would (it is started again). */
  async killThread(): Promise<void> {
    await this.thread.kill();
  }

  /** A subscription changed in this process: the thread reads the tenants again and drops its cached targets. */
  changed(): void {
    this.thread.post({ t: 'changed' } satisfies ToDispatcherThread);
  }

  /** Gives back what was claimed and not sent, lets attempts under way be settled, then ends the thread. */
  async stop(): Promise<void> {
    await this.thread.stop((worker) => {
      const stopped = new Promise<void>((resolve) => worker.on('message', (m: FromDispatcherThread) => { if (m.t === 'stopped') resolve(); }));
      worker.postMessage({ t: 'stop' } satisfies ToDispatcherThread);
      return stopped;
    }, STOP_WAIT_MS);
  }

  private receive(m: FromDispatcherThread): void {
    if (m.t !== 'stats') return;
    // Running totals: the difference since the last report is added (a label appears when first raised, as before).
    for (const outcome of DELIVERY_OUTCOMES) {
      const by = (m.deliveries[outcome] ?? 0) - (this.seen.deliveries[outcome] ?? 0);
      if (by > 0) this.metrics.inc(DELIVERIES_METRIC, outcome, by);
    }
    if (m.deadLetters > this.seen.deadLetters) this.metrics.inc(DEAD_LETTERS_METRIC, '', m.deadLetters - this.seen.deadLetters);
    this.inFlight = m.inFlight;
    this.metrics.absorb(METRICS_SOURCE, m.scripts);
    this.seen = m;
  }
}

function emptyStats(): FromDispatcherThread & { t: 'stats' } {
  return { t: 'stats', deliveries: {}, deadLetters: 0, inFlight: 0, scripts: [] };
}
