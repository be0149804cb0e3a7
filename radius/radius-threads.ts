import type { Worker } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import {
  WorkerSupervisor, projectPath,
  type AccessRequestMsg, type AccountingMsg, type Logger, type MetricsSnapshot, type MirrorShare, type MirrorSource,
  type NasRow, type RadiusHandler,
} from '../engine/index.js';
import { DropReason, RadiusErrors } from './errors.js';
import type { RadiusServerStats } from './radius-server-options.js';
import type { FromRadiusThread, RadiusThreadData, ReplyItem, RequestItem, ToRadiusThread } from './radius-thread-messages.js';

/** Where the threads' metrics are summed (the engine's Metrics). */
export interface ThreadMetricsSink {
  absorb(source: string, snapshot: MetricsSnapshot): void;
  retire(source: string): void;
}

/** Requests waiting for the engine, over all threads: RadiusServer's own default for one server. */
const MAX_IN_FLIGHT = 10_000;

export interface RadiusThreadsOptions {
  /** How many threads bind the ports (RADIUS_THREADS, at least 1). */
  threads: number;
  /** The engine side (RadiusGateway): decides on the main thread what the threads decoded. */
  handler: RadiusHandler;
  /** The main thread's NAS registry: its rows, and every change of them, go to each thread's copy. */
  registry: { onChange(listener: (rows: readonly NasRow[]) => void): void };
  host: string;
  authPort: number;
  acctPort: number;
  logLevel: string;
  dictionaryDir?: string;
  log: Logger;
  metrics?: ThreadMetricsSink;
  /**
   * The actors' auth mirror: a thread answers a device's re-check from it itself, without the hop to the
   * main thread, and reports what it answered (RadiusHandler.answeredFromMirror). Absent: every request hops.
   */
  mirror?: MirrorSource;
}

interface Slot {
  data: RadiusThreadData;
  supervisor: WorkerSupervisor;
  /** Bumped when the thread exits: an answer to a dead thread's request is not posted to its successor. */
  generation: number;
  replies: ReplyItem[];
  flushQueued: boolean;
  last: RadiusServerStats | null;
  /** The running thread has bound the ports. */
  listening: boolean;
  onBound: ((r: { auth: number; acct: number } | Error) => void) | null;
  onClosed: (() => void) | null;
}

/** A dead thread is started again after this pause, doubling while it keeps dying. */
const RESTART_MS = 100;
const RESTART_MAX_MS = 5_000;

/**
 * RADIUS over UDP on several threads (RADIUS_THREADS > 0; docs/radius.md
 * "Threads"). Each thread binds the auth and acct ports with SO_REUSEPORT
 * and runs a RadiusServer of its own; the kernel hashes every datagram by
 * its addresses and ports to one socket, so one NAS source port keeps one
 * thread: its duplicate cache (RFC 5080 §2.2.2) sees every retransmission,
 * and the reply leaves from the port the request reached. A thread answers
 * a device's re-check from the actors' auth mirror itself (shared memory,
 * MirrorSource) and reports what it answered in batches; for anything else
 * it posts the decoded request (batched per event loop turn, msgpackr), the
 * main thread calls the handler and posts the decision back. A thread that dies is started again on the same ports,
 * which the other threads keep bound meanwhile.
 */
export class RadiusThreads {
  private readonly slots: Slot[] = [];
  private readonly packr = new Packr({ useRecords: false });
  private rows: readonly NasRow[] = [];
  private mirrorShare: MirrorShare | null = null;
  private bound = { auth: 0, acct: 0 };
  /** Counts of threads that exited, kept so stats() does not go backwards after a restart. */
  private readonly retired: RadiusServerStats[] = [];

  constructor(private readonly opts: RadiusThreadsOptions) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) {
      throw RadiusErrors.RADIUS_BAD_OPTIONS(`RadiusThreads: threads must be a positive integer, got ${String(opts.threads)}`);
    }
  }

  /**
   * Starts the first thread on the configured ports (0: free ones), then the
   * others on the ports it bound; resolves with them once every thread has
   * bound. Rejects (with every thread stopped) when a port cannot be bound.
   */
  async start(): Promise<{ auth: number; acct: number }> {
    if (this.slots.length) return this.ports;
    this.opts.registry.onChange((rows) => {
      this.rows = rows;
      for (const s of this.slots) s.supervisor.post({ t: 'nas', rows } satisfies ToRadiusThread);
    });
    this.opts.mirror?.shareMirror((share) => {
      this.mirrorShare = share;
      for (const s of this.slots) s.supervisor.post({ t: 'mirror', share } satisfies ToRadiusThread);
    });
    try {
      this.bound = await this.open(0, this.opts.authPort, this.opts.acctPort);
      const rest: Promise<unknown>[] = [];
      for (let i = 1; i < this.opts.threads; i++) rest.push(this.open(i, this.bound.auth, this.bound.acct));
      await Promise.all(rest);
    } catch (err) {
      await this.stop();
      throw err;
    }
    this.opts.log.info({ host: this.opts.host, threads: this.opts.threads, ...this.bound }, 'RADIUS threads listening');
    return this.ports;
  }

  get ports(): { auth: number; acct: number } {
    return { ...this.bound };
  }

  get size(): number {
    return this.slots.length;
  }

  /** Threads whose sockets are bound now (one restarting after a crash is not, until it has bound them again). */
  get listening(): number {
    return this.slots.filter((s) => s.listening).length;
  }

  /** Each thread's counters as it last reported them (about once a second); null before its first report. */
  threadStats(): (RadiusServerStats | null)[] {
    return this.slots.map((s) => s.last);
  }

  /** The counters of every thread, summed (as last reported, plus those of threads that exited). */
  stats(): RadiusServerStats {
    const sum = emptyStats();
    for (const s of [...this.retired, ...this.slots.map((x) => x.last)]) {
      if (!s) continue;
      sum.received.auth += s.received.auth;
      sum.received.acct += s.received.acct;
      sum.accepts += s.accepts;
      sum.rejects += s.rejects;
      sum.accountingResponses += s.accountingResponses;
      sum.duplicatesAnswered += s.duplicatesAnswered;
      sum.statusAnswered += s.statusAnswered;
      sum.inFlight += s.inFlight;
      for (const r of Object.values(DropReason)) sum.dropped[r] += s.dropped[r];
    }
    return sum;
  }

  /** For fault-injection tests: end one thread as a crash would (it is started again on the same ports). */
  async killThread(index: number): Promise<void> {
    await this.slots[index]?.supervisor.kill();
  }

  /** Closes every thread's sockets, then ends the threads. */
  async stop(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.supervisor.stop((worker) => new Promise<void>((resolve) => {
      s.onClosed = resolve;
      worker.postMessage({ t: 'stop' } satisfies ToRadiusThread);
    }))));
  }

  private open(index: number, authPort: number, acctPort: number): Promise<{ auth: number; acct: number }> {
    const data: RadiusThreadData = {
      index, host: this.opts.host, authPort, acctPort, logLevel: this.opts.logLevel, dictionaryDir: this.opts.dictionaryDir,
      // One engine (the main thread) answers them all: its bound on waiting requests is shared, not multiplied.
      maxInFlight: Math.max(1, Math.ceil(MAX_IN_FLIGHT / this.opts.threads)),
    };
    const source = `radius-thread-${index}`;
    const slot: Slot = {
      data, generation: 0, replies: [], flushQueued: false, last: null, listening: false, onBound: null, onClosed: null,
      supervisor: new WorkerSupervisor({
        name: `RADIUS thread ${index}`,
        file: projectPath('dist', 'radius', 'radius-thread.js'),
        workerData: data,
        backoff: { firstMs: RESTART_MS, maxMs: RESTART_MAX_MS, healthyMs: 60_000 },
        log: this.opts.log.child({ thread: index }),
        onStart: (worker) => worker.postMessage({ t: 'start', rows: this.rows, mirror: this.mirrorShare } satisfies ToRadiusThread),
        onMessage: (msg, worker) => this.onMessage(slot, worker, msg as Uint8Array | FromRadiusThread),
        onExit: () => {
          slot.generation++;
          slot.listening = false;
          slot.replies = [];
          // Its requests in flight ended with it: only its counts since start are kept.
          if (slot.last) this.retired.push({ ...slot.last, inFlight: 0 });
          slot.last = null;
          this.opts.metrics?.retire(source);
          slot.onClosed?.();
        },
      }),
    };
    this.slots.push(slot);
    const bound = new Promise<{ auth: number; acct: number }>((resolve, reject) => {
      slot.onBound = (r) => (r instanceof Error ? reject(r) : resolve(r));
    });
    slot.supervisor.start();
    return bound;
  }

  private onMessage(slot: Slot, worker: Worker, msg: Uint8Array | FromRadiusThread): void {
    if (slot.supervisor.worker !== worker) return;
    if (msg instanceof Uint8Array) {
      const generation = slot.generation;
      for (const item of this.packr.unpack(msg) as RequestItem[]) this.decide(slot, generation, item);
      return;
    }
    switch (msg.t) {
      case 'bound':
        // A restarted thread binds the ports its predecessor had (the first start may have asked for 0).
        slot.data.authPort = msg.auth;
        slot.data.acctPort = msg.acct;
        slot.listening = true;
        slot.onBound?.({ auth: msg.auth, acct: msg.acct });
        slot.onBound = null;
        return;
      case 'bind_failed':
        if (!slot.onBound) {
          // A restart that could not bind would otherwise sit alive without sockets: end it, so the back-off tries again.
          this.opts.log.error({ thread: slot.data.index, err: msg.message }, 'a restarted RADIUS thread could not bind its ports; trying again');
          void slot.supervisor.kill();
        }
        slot.onBound?.(RadiusErrors.RADIUS_BAD_OPTIONS(`RADIUS thread could not bind ${this.opts.host}: ${msg.message}`));
        slot.onBound = null;
        return;
      case 'closed':
        slot.onClosed?.();
        slot.onClosed = null;
        return;
      case 'report':
        slot.last = msg.stats;
        this.opts.metrics?.absorb(`radius-thread-${slot.data.index}`, msg.snapshot);
        return;
      case 'mirrored':
        this.opts.handler.answeredFromMirror?.(msg.answers);
        return;
    }
  }

  /** One request to the engine; its answer goes back to the thread that asked, if it still lives. */
  private decide(slot: Slot, generation: number, [id, kind, msg]: RequestItem): void {
    let done: Promise<unknown>;
    try {
      // authorize may answer with a plain value (a mirrored accept): the reply goes back in the next post either way.
      done = Promise.resolve(kind === 0 ? this.opts.handler.authorize(msg as AccessRequestMsg) : this.opts.handler.account(msg as AccountingMsg));
    } catch (err) {
      done = Promise.reject(err);
    }
    done.then(
      (value) => this.answer(slot, generation, [id, 1, kind === 0 ? value as ReplyItem[2] : null]),
      (err: unknown) => {
        if (this.opts.log.isLevelEnabled('debug')) this.opts.log.debug({ err }, 'RADIUS request failed in the engine');
        this.answer(slot, generation, [id, 0, null]);
      },
    );
  }

  private answer(slot: Slot, generation: number, item: ReplyItem): void {
    if (slot.generation !== generation) return;
    slot.replies.push(item);
    if (slot.flushQueued) return;
    slot.flushQueued = true;
    setImmediate(() => {
      slot.flushQueued = false;
      if (slot.replies.length === 0) return;
      const bytes = new Uint8Array(this.packr.pack(slot.replies));
      slot.replies = [];
      slot.supervisor.post(bytes, [bytes.buffer as ArrayBuffer]);
    });
  }
}

function emptyStats(): RadiusServerStats {
  const dropped = {} as Record<DropReason, number>;
  for (const r of Object.values(DropReason)) dropped[r] = 0;
  return { received: { auth: 0, acct: 0 }, accepts: 0, rejects: 0, accountingResponses: 0, duplicatesAnswered: 0, statusAnswered: 0, dropped, inFlight: 0 };
}
