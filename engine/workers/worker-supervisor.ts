import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { Logger } from '../logger.js';

/** Restart pacing: the n-th restart in a row waits min(maxMs, firstMs * 2^(n-1)). */
export interface Backoff {
  firstMs: number;
  maxMs: number;
  /** A worker that ran this long without dying counts as healthy: the next restart waits firstMs again. */
  healthyMs: number;
}

export interface WorkerSupervisorOptions {
  /** Names the worker in logs ("actor thread 1", "outbox sink thread"). */
  name: string;
  /** The compiled JavaScript file the worker runs. */
  file: string;
  workerData?: unknown;
  resourceLimits?: ResourceLimits;
  backoff: Backoff;
  log: Logger;
  /** Every message the current worker posts. */
  onMessage?: (msg: unknown, worker: Worker) => void;
  /** A worker was started (the first one and every replacement). */
  onStart?: (worker: Worker) => void;
  /** A worker ended; `restarting` is false once stop() was called. */
  onExit?: (exit: { code: number; restarting: boolean }) => void;
}

export interface WorkerStats {
  running: boolean;
  /** Times a worker ended on its own and was started again (or is waiting to be). */
  restarts: number;
  lastError: string | null;
  lastExitCode: number | null;
}

/**
 * One worker thread kept running: started from a file with its data,
 * started again after it exits (crash, uncaught error, terminate()) with an
 * exponential back-off, so a worker that dies at start-up does not spin a
 * core; stopped for good by stop(). The actor pool and the outbox sink use
 * it; so will webhook delivery, PDF rendering and schedulers.
 *
 * A worker's 'error' event is always followed by its 'exit': the restart
 * hangs on 'exit' alone, so one death is one restart.
 */
export class WorkerSupervisor {
  private current: Worker | null = null;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | undefined;
  /** Restarts since the last healthy run; sets the next delay. */
  private streak = 0;
  private startedAt = 0;
  private readonly counts: WorkerStats = { running: false, restarts: 0, lastError: null, lastExitCode: null };

  constructor(private readonly opts: WorkerSupervisorOptions) {
    const { firstMs, maxMs, healthyMs } = opts.backoff;
    if (!(firstMs >= 0 && maxMs >= firstMs && healthyMs >= 0)) {
      throw new Error(`WorkerSupervisor(${opts.name}): back-off needs 0 <= firstMs <= maxMs and healthyMs >= 0`);
    }
  }

  /** The running worker, or null while it is down (between a death and its restart, or after stop()). */
  get worker(): Worker | null {
    return this.current;
  }

  get stats(): WorkerStats {
    return { ...this.counts, running: this.current !== null };
  }

  /** Starts the worker; does nothing if it runs, waits to restart, or was stopped. */
  start(): void {
    if (this.current || this.stopping || this.restartTimer) return;
    const worker = new Worker(this.opts.file, { workerData: this.opts.workerData, resourceLimits: this.opts.resourceLimits });
    this.current = worker;
    this.startedAt = Date.now();
    worker.on('message', (msg: unknown) => this.opts.onMessage?.(msg, worker));
    worker.on('error', (err) => {
      this.counts.lastError = err.message;
      this.opts.log.error({ err }, `${this.opts.name} crashed`);
    });
    worker.on('exit', (code) => this.exited(worker, code));
    this.opts.onStart?.(worker);
  }

  /** Posts to the running worker; false (nothing sent) while it is down. */
  post(msg: unknown, transfer?: readonly ArrayBuffer[]): boolean {
    if (!this.current) return false;
    this.current.postMessage(msg, transfer as ArrayBuffer[] | undefined);
    return true;
  }

  /** Ends the worker as a crash would: it is started again (fault-injection tests). */
  async kill(): Promise<void> {
    await this.current?.terminate();
  }

  /**
   * Stops for good. `drain` may ask the worker to finish its work first; it
   * gets `waitMs`, then the worker is terminated whatever it is doing.
   */
  async stop(drain?: (worker: Worker) => Promise<void>, waitMs = 10_000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    const worker = this.current;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    if (drain) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          this.opts.log.warn(`${this.opts.name} did not stop in time; ending it`);
          resolve();
        }, waitMs);
      });
      await Promise.race([drain(worker).catch(() => undefined), exited, late]);
      clearTimeout(timer);
    }
    await worker.terminate();
    await exited;
  }

  private exited(worker: Worker, code: number): void {
    if (this.current !== worker) return;
    this.current = null;
    this.counts.lastExitCode = code;
    const restarting = !this.stopping;
    this.opts.onExit?.({ code, restarting });
    if (!restarting) return;
    const { firstMs, maxMs, healthyMs } = this.opts.backoff;
    if (Date.now() - this.startedAt >= healthyMs) this.streak = 0;
    const delay = Math.min(maxMs, firstMs * 2 ** this.streak);
    this.streak++;
    this.counts.restarts++;
    this.opts.log.warn({ code, delayMs: delay }, `${this.opts.name} exited; starting it again`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.start();
    }, delay);
  }
}
