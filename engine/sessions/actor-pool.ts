import type { Worker } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { AppError, Errors } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics, MetricsSnapshot } from '../metrics.js';
import { projectPath } from '../util/project-root.js';
import { WorkerSupervisor, type WorkerStats } from '../workers/worker-supervisor.js';
import { postBatch, readBatch } from './message-codec.js';
import { LEASES_RELEASED, RELEASE_LEASES, type FromThread, type Reply, type ReplyValue, type ToThread } from './messages.js';
import { ChangingDevices, MirrorView, threadIndex, type MirrorShare } from './mirror-view.js';
import { ActorForwarder, FORWARDED } from './actor-forwarder.js';
import { openRedis, type RedisClient } from '../redis/redis-client.js';
import type { AcceptMirror, ActorRequest, MirrorSource, NasCommandPort, SessionActors } from './actor-ports.js';
import type { AccessDecision } from './ports.js';
import type { ThreadData } from './actor-thread.js';

type Pending = {
  resolve: (v: ReplyValue | undefined) => void;
  reject: (e: Error) => void;
  deadline: number;
  /** Set when a refusal because another process holds the hotspot is to be forwarded to it (ActorForwarder). */
  forward?: ActorRequest;
  /** The device's counter in `changing` while this request is on its way (a sign-in or an accounting report); -1 none. */
  changing: number;
};

/** One actor thread slot: its supervised worker and what outlives a restart of it. */
interface Thread {
  supervisor: WorkerSupervisor;
  pending: Map<number, Pending>;
  queue: ToThread[];
  flushQueued: boolean;
  sessions: number;
  actors: number;
}

/** Requests not answered within this time fail with 503 (a hung or dying thread). */
const REQUEST_TIMEOUT_MS = 10_000;
/**
 * A dead actor thread is started again after this pause, doubling up to
 * RESTART_MAX_MS while it keeps dying within a minute of its start.
 * Requests meanwhile wait for it (or for their REQUEST_TIMEOUT_MS).
 */
const RESTART_MS = 100;
const RESTART_MAX_MS = 5_000;
/** How long a stopping thread may take to give its leases up (its actors' work in flight first); then it is ended and they run out. */
const LEASE_RELEASE_WAIT_MS = 3_000;

/** What a thread posts outside the msgpackr batches: its mirror table (shared, not copied) and its metrics. */
type PlainMessage = { t: 'mirror_table'; table: SharedArrayBuffer } | { t: 'metrics'; snapshot: MetricsSnapshot };

export interface ActorPoolOptions {
  threads: number;
  redisUrl: string;
  nodeId: string;
  logLevel: string;
  /** HOTSPOT_LEASE_MS; absent: the host's default (30 s). */
  leaseMs?: number;
  log: Logger;
  /** Where the threads' own metrics (their Redis scripts' latencies) are summed; none: not reported. */
  metrics?: Metrics;
  /** Runs a Disconnect/CoA the actors ask for. */
  nas: NasCommandPort;
  /**
   * The engine's Redis client: given, what this process's actors refuse because another process
   * holds the hotspot's lease (a sign-in's `started`, an operator's disconnect or extend, a live
   * read) is forwarded to that process (ActorForwarder), which listens on a connection of its own.
   */
  redis?: RedisClient;
}

/**
 * The main thread's side of the actors: N worker threads, each hotspot pinned
 * to one by a stable hash of its id; messages batched per thread per event
 * loop turn and encoded with msgpackr. A thread that dies fails its pending
 * requests with 503 and is started again (WorkerSupervisor); its actors
 * reload from Redis.
 */
export class ActorPool implements SessionActors, AcceptMirror, MirrorSource {
  private readonly threads: Thread[] = [];
  private readonly packr = new Packr({ useRecords: false });
  /** The actor threads' published accepts, and the devices with a sign-in or accounting message not yet answered by their actor. */
  private readonly mirror: MirrorView;
  /** Each actor thread's mirror table, as shared with the RADIUS threads (shareMirror). */
  private readonly tables: (SharedArrayBuffer | null)[] = [];
  private readonly sharedWith: ((share: MirrorShare) => void)[] = [];
  private seq = 0;
  private readonly timer: NodeJS.Timeout;
  /** Hotspots whose actor this process has started: key -> [tenant, hotspot, tz]. */
  private readonly woken = new Map<string, [string, string, string]>();
  /** Hands what the lease's holder must handle to it; null: refused here as before (no Redis client given). */
  readonly forwarder: ActorForwarder | null;

  constructor(private readonly opts: ActorPoolOptions) {
    if (!Number.isInteger(opts.threads) || opts.threads < 1) throw new Error(`ActorPool: threads must be a positive integer, got ${opts.threads}`);
    this.forwarder = opts.redis
      ? new ActorForwarder({
          redis: opts.redis, subscriber: openRedis(opts.redisUrl), nodeId: opts.nodeId, log: opts.log, metrics: opts.metrics,
          local: (msg) => this.ask(msg),
        })
      : null;
    this.mirror = new MirrorView(opts.threads, new ChangingDevices());
    for (let i = 0; i < opts.threads; i++) this.tables.push(null);
    for (let i = 0; i < opts.threads; i++) this.threads.push(this.thread(i));
    for (const t of this.threads) t.supervisor.start();
    this.timer = setInterval(() => this.expire(), 1000);
    this.timer.unref();
  }

  get size(): number {
    return this.threads.length;
  }

  /** Live sessions held in actor memory, per the threads' last report. */
  get liveSessions(): number {
    return this.threads.reduce((n, t) => n + t.sessions, 0);
  }

  /**
   * The answer the hotspot's actor gave this device's last Access-Request
   * through this NAS, while it still holds (see AuthMirrorWriter); null when
   * the request must go to the actor.
   */
  mirroredAccept(tenant: string, hs: string, mac: string, nasId: string, userName: string, ssid: string): AccessDecision | null {
    // A sign-in or accounting of the device still on its way to the actor may change the answer:
    // the request goes to the actor, behind it (one device's messages run in order there).
    return this.mirror.lookup(tenant, hs, mac, nasId, userName, ssid);
  }

  /** Access-Requests answered from the mirror on the main thread since start (RADIUS threads count their own). */
  get mirrorHits(): number {
    return this.mirror.hits;
  }

  /** The mirror's shared memory, now and after every change of it (an actor thread's table handed over or dropped). */
  shareMirror(listener: (share: MirrorShare) => void): void {
    this.sharedWith.push(listener);
    listener(this.share());
  }

  private share(): MirrorShare {
    return { tables: [...this.tables], changing: this.mirror.changing.buffer };
  }

  private tableChanged(index: number, table: SharedArrayBuffer | null): void {
    this.tables[index] = table;
    if (table) this.mirror.setTable(index, table);
    else this.mirror.dropTable(index);
    if (this.sharedWith.length === 0) return;
    const share = this.share();
    for (const l of this.sharedWith) l(share);
  }

  /**
   * Sends a request to the hotspot's actor; resolves with its answer. One the actor refuses because
   * another process holds the hotspot (hotspot_owned_elsewhere) goes to that process (forwarder).
   */
  request<V extends ReplyValue>(msg: ActorRequest): Promise<V> {
    return this.ask<V>(msg, this.forwarder !== null && FORWARDED.has(msg.t));
  }

  /**
   * Sends a request to the hotspot's actor in this process; resolves with its answer, or with the lease
   * holder's when `forward` and this process's actor refused it (settle). No promise beyond the one
   * answered: this is every RADIUS packet's path.
   */
  private ask<V extends ReplyValue>(msg: ActorRequest, forward = false): Promise<V> {
    const ref = this.mirror.ref(msg.tenant, msg.hs);
    const t = this.threads[ref.thread]!;
    const id = ++this.seq;
    // Until the actor has taken it in, the device's published accept may be out of date (mirroredAccept).
    const changing = (msg.t === 'started' || msg.t === 'acct') && msg.mac ? this.mirror.changing.mark(ref.key, msg.mac) : -1;
    return new Promise<V>((resolve, reject) => {
      t.pending.set(id, { resolve: resolve as (v: ReplyValue | undefined) => void, reject, deadline: Date.now() + REQUEST_TIMEOUT_MS, forward: forward ? msg : undefined, changing });
      this.send(t, { ...msg, id } as ToThread);
    });
  }

  /** A request leaves `pending` (answered, failed, timed out, or its thread gone): the device is no longer changing for it. */
  private taken(p: Pending): void {
    this.mirror.changing.unmark(p.changing);
    p.changing = -1;
  }

  /**
   * Makes sure a hotspot's actor runs (its clock and its sweep of overdue
   * sessions), once per hotspot per process; a restarted thread gets its
   * hotspots woken again. Cheap enough to call on every sign-in.
   */
  wake(tenant: string, hs: string, tz: string): void {
    const key = `${tenant}/${hs}`;
    if (this.woken.has(key)) return;
    this.woken.set(key, [tenant, hs, tz]);
    this.request({ t: 'wake', tenant, hs, tz }).catch(() => this.woken.delete(key));
  }

  /** Live sessions a hotspot's actor holds in memory (starting the actor if need be). */
  async hotspotSessions(tenant: string, hs: string, tz: string): Promise<number> {
    return (await this.request<{ sessions: number }>({ t: 'wake', tenant, hs, tz })).sessions;
  }

  /** Restarts and state of each thread's worker. */
  get threadStats(): WorkerStats[] {
    return this.threads.map((t) => t.supervisor.stats);
  }

  /** For fault-injection tests: kill one thread as a crash would. */
  async killThread(index: number): Promise<void> {
    await this.threads[index]?.supervisor.kill();
  }

  /** Stops the threads; each gives its hotspots' leases up first (bounded by the supervisor's wait), so another process takes them at once. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.threads.map((t) => t.supervisor.stop((worker) => new Promise<void>((resolve) => {
      const heard = (msg: { t?: string }): void => {
        if (msg?.t !== LEASES_RELEASED) return;
        worker.off('message', heard);
        resolve();
      };
      worker.on('message', heard);
      worker.postMessage(RELEASE_LEASES);
    }), LEASE_RELEASE_WAIT_MS)));
    // Only now: until its leases were given up, other processes' messages for its hotspots still came here.
    await this.forwarder?.close();
  }

  private thread(index: number): Thread {
    const workerData: ThreadData = { redisUrl: this.opts.redisUrl, nodeId: this.opts.nodeId, logLevel: this.opts.logLevel, leaseMs: this.opts.leaseMs, index };
    const t: Thread = { pending: new Map(), queue: [], flushQueued: false, sessions: 0, actors: 0, supervisor: new WorkerSupervisor({
      name: `actor thread ${index}`,
      // Worker threads load the compiled JavaScript (npm run build), also when the caller runs from source.
      file: projectPath('dist', 'engine', 'sessions', 'actor-thread.js'),
      workerData,
      backoff: { firstMs: RESTART_MS, maxMs: RESTART_MAX_MS, healthyMs: 60_000 },
      log: this.opts.log.child({ thread: index }),
      onMessage: (msg, worker) => this.onMessage(t, index, worker, msg as Uint8Array | PlainMessage),
      // Requests sent while the thread was down waited in its queue.
      onStart: () => this.flushSoon(t),
      onExit: ({ restarting }) => {
        this.tableChanged(index, null);
        // Its counts stay in the sums; its successor's add to them.
        this.opts.metrics?.retire(`actor-thread-${index}`);
        // What the dead thread was asked, answered or not, is lost with it; what was not yet sent belongs to those requests.
        const failure = Errors.SESSION_ENGINE_RESTARTING();
        for (const p of t.pending.values()) {
          this.taken(p);
          p.reject(failure);
        }
        t.pending.clear();
        t.queue.length = 0;
        t.sessions = 0;
        t.actors = 0;
        // Before the rejected wakes above forget their hotspots (their handlers run after this one).
        if (restarting) this.rewake(index);
      },
    }) };
    return t;
  }

  private onMessage(t: Thread, index: number, worker: Worker, msg: Uint8Array | PlainMessage): void {
    if (msg instanceof Uint8Array) {
      for (const m of readBatch<FromThread>(this.packr, msg)) this.receive(t, m);
    } else if (msg?.t === 'mirror_table' && t.supervisor.worker === worker) {
      this.tableChanged(index, msg.table);
    } else if (msg?.t === 'metrics' && t.supervisor.worker === worker) {
      this.opts.metrics?.absorb(`actor-thread-${index}`, msg.snapshot);
    }
  }

  /** A dead thread's hotspots are woken again on its successor, so their clocks run before their next message. */
  private rewake(index: number): void {
    // Collected first: re-waking deletes and re-adds keys, which a live Map iteration would visit again.
    const mine = [...this.woken].filter(([, [tenant, hs]]) => threadIndex(tenant, hs, this.threads.length) === index);
    for (const [key, [tenant, hs, tz]] of mine) {
      this.woken.delete(key);
      this.wake(tenant, hs, tz);
    }
  }

  private send(t: Thread, m: ToThread): void {
    t.queue.push(m);
    this.flushSoon(t);
  }

  private flushSoon(t: Thread): void {
    if (t.flushQueued) return;
    t.flushQueued = true;
    setImmediate(() => {
      t.flushQueued = false;
      const worker = t.supervisor.worker;
      if (worker && t.queue.length) postBatch(worker, this.packr, t.queue.splice(0, t.queue.length));
    });
  }

  private receive(t: Thread, m: FromThread): void {
    switch (m.t) {
      case 'reply': return this.settle(t, m);
      case 'nas':
        this.opts.nas.nasCommand(m).then(
          (result) => this.send(t, { t: 'nas_result', id: m.id, result }),
          () => this.send(t, { t: 'nas_result', id: m.id, result: { outcome: 'timeout' } }));
        return;
      case 'stats': t.sessions = m.sessions; t.actors = m.actors; return;
    }
  }

  private settle(t: Thread, m: Reply): void {
    const p = t.pending.get(m.id);
    if (!p) return;
    t.pending.delete(m.id);
    this.taken(p);
    if (m.ok) p.resolve(m.value);
    else if (p.forward && this.forwarder && m.code === 'hotspot_owned_elsewhere') {
      this.forwarder.forward(p.forward, AppError.fromWire(m.code, m.status, m.message)).then(p.resolve, p.reject);
    } else p.reject(AppError.fromWire(m.code, m.status, m.message));
  }

  private expire(): void {
    const now = Date.now();
    for (const t of this.threads) {
      for (const [id, p] of t.pending) {
        if (p.deadline > now) continue;
        t.pending.delete(id);
        this.taken(p);
        p.reject(Errors.SESSION_ENGINE_TIMEOUT());
      }
    }
  }
}
