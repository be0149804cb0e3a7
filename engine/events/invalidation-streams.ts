import { Errors } from '../errors.js';
import type { EventFanout } from './event-fanout.js';
import type { DomainEvent, EventType } from './types.js';

/**
 * The dashboard's streams (docs/dashboard-api.md, Streams), by the last part
 * of their path: the spec's four, and `all`, which carries every kind of the
 * four on one connection. A browser keeps at most six HTTP/1.1 connections
 * per host, so a page holding four streams open left two for everything else
 * (a second dashboard tab, the console beside it, every fetch): the
 * dashboard page opens `all`. Kinds are unique across streams, so a client
 * tells them apart by `kind`.
 */
export const STREAM_NAMES = ['incidents', 'audit', 'live-sessions', 'jit-approvals', 'all'] as const;
export type StreamName = (typeof STREAM_NAMES)[number];

type KindMap = Readonly<Partial<Record<EventType, string>>>;
const SPEC_STREAMS: Readonly<Record<Exclude<StreamName, 'all'>, KindMap>> = {
  // Besides the sessions, what the live figures are read beside (sign-in counts, NAS presence): each of these
  // events is written in the same script as the counts it announces (record-decisions-6.lua, mark-nas-seen-2.lua),
  // so a refetch on it sees them. Without them a widget refetched on `session_started` read the sign-in counts a
  // quarter second before the decision recorder wrote them, and a site's NAS before presence marked it online,
  // and kept that until its next poll (docs/dashboard-api.md, Streams).
  'live-sessions': {
    'session.start': 'session_started', 'session.end': 'session_ended', 'session.extend': 'session_extended',
    'auth.success': 'signins_counted', 'auth.failure': 'signins_counted', 'nas.online': 'nas_online', 'nas.offline': 'nas_offline',
  },
  incidents: { 'incident.raised': 'incident_raised', 'incident.updated': 'incident_updated' },
  audit: { 'audit.written': 'audit_appended' },
  'jit-approvals': { 'jit.requested': 'jit_requested', 'jit.decided': 'jit_decided' },
};

/** Per stream: the event types it carries, and the `kind` each is sent as. Other types do not reach it. */
export const STREAM_KINDS: Readonly<Record<StreamName, KindMap>> = {
  ...SPEC_STREAMS,
  all: Object.assign({}, ...Object.values(SPEC_STREAMS)) as KindMap,
};

/**
 * "Refetch what `kind` concerns": one or more events of a kind, coalesced.
 * `siteId` is the site when every event it stands for was at that one site,
 * else null; `id` and `ts` are the newest event's.
 */
export interface Invalidation {
  kind: string;
  ts: number;
  siteId: string | null;
  id: string;
}

export interface InvalidationListener {
  /**
   * What changed since the last call: one invalidation per kind, oldest
   * first (the last one carries the newest id). More than one only when a
   * window closes with several kinds pending: a listener writing to many
   * clients then writes them together, once per client. `spent(ms)` is to be
   * called once the batch is written, with the main thread's time the
   * writing took (a listener may write in slices, over several turns of the
   * event loop): the stream's budget (STRETCH) is made of it.
   */
  invalidate(batch: readonly Invalidation[], spent: (ms: number) => void): void;
  /** The engine is closing: no more invalidations will come. */
  end(): void;
}

/**
 * During a sustained burst this process's broadcasts together take at most
 * about 1/STRETCH of the main thread: a window that closes with events
 * pending is followed by one at least STRETCH times as long as the last
 * broadcast of every busy stream of the process took, added up. With 10,000
 * clients a broadcast costs the main thread ~130 ms (the send syscalls, whose
 * kernel work on the host is in it), and each client's read and refetch cost
 * as much again wherever the client runs: at STRETCH 10 (two broadcasts every
 * 1.3 s) sign-ins kept 0.77-0.86 of their rate in bench/sse-fanout, whose
 * clients share the service's 2 cores. A stream with a few clients costs
 * well under a millisecond a broadcast and keeps the 500 ms window.
 */
const STRETCH = 40;
/**
 * The stretch's ceiling: on a machine short of CPU a broadcast can take far longer, and forty times
 * that would hold changes back for many seconds. With 10,000 clients a busy stream is told about
 * every 4 s; a quiet stream's first change still goes out at once.
 */
const MAX_STRETCHED_MS = 4_000;

/**
 * What the process's busy streams cost per broadcast, shared by every hub:
 * the sum of the last broadcast cost of each hub whose window is open. A
 * hub's budget is the process's, so two busy tenants of 5,000 clients each
 * take no more of the thread than one of 10,000.
 */
class BroadcastBudget {
  private openCostMs = 0;

  /** A hub with an open window moved its share from `before` to `after` ms (0: it closed). */
  move(before: number, after: number): void {
    this.openCostMs = Math.max(0, this.openCostMs - before + after);
  }

  /** The window that follows a broadcast of a still-busy stream. */
  windowAfterBusy(windowMs: number): number {
    return Math.max(windowMs, Math.min(this.openCostMs * STRETCH, MAX_STRETCHED_MS));
  }
}

/** A kind with changes since the last broadcast: where they were, and the newest. */
interface Pending {
  siteId: string | null;
  id: string;
  ts: number;
}

/**
 * One tenant's stream in this process: maps the tenant's events to kinds and
 * coalesces them, so a burst of a thousand sign-ins becomes a handful of
 * invalidations whatever number of clients listen. One window per stream,
 * not per kind: the first event of a quiet stream goes out at once; what
 * comes within the window goes out at its end, one invalidation per kind
 * that changed, all in one batch (one write per client, however many kinds
 * were busy). Coalescing here, once per tenant and stream rather than per
 * client, gives every client the same bound and lets the HTTP layer encode
 * each batch once.
 */
class StreamHub {
  readonly listeners = new Set<InvalidationListener>();
  /** Kinds changed within the open window, in the order of their newest event (the last is the newest). */
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | null = null;
  /** What the listeners reported the last broadcast cost them, ms, added up. */
  private lastCostMs = 0;
  /** This hub's part of the budget: lastCostMs while its window is open, else 0. */
  private share = 0;
  unsubscribe: () => void = () => undefined;

  constructor(private readonly kinds: KindMap, private readonly windowMs: number, private readonly budget: BroadcastBudget) {}

  onEvent(e: DomainEvent): void {
    const kind = this.kinds[e.type];
    if (kind === undefined) return;
    if (this.windowMs === 0) {
      this.emit([{ kind, ts: e.ts, siteId: e.siteId, id: e.id }]);
      return;
    }
    if (this.timer === null) {
      this.emit([{ kind, ts: e.ts, siteId: e.siteId, id: e.id }]);
      this.arm(this.windowMs);
      this.setShare(this.lastCostMs);
      return;
    }
    const p = this.pending.get(kind);
    // null (tenant-wide, or several sites) absorbs: once the window holds two sites it names none.
    const siteId = p && p.siteId !== e.siteId ? null : e.siteId;
    // Re-inserted, so the map stays in the order of each kind's newest event.
    if (p) this.pending.delete(kind);
    this.pending.set(kind, { siteId, id: e.id, ts: e.ts });
  }

  dispose(): void {
    this.unsubscribe();
    this.close();
    this.pending.clear();
  }

  /** Closes the window: the stream is quiet (or gone), and its cost leaves the budget. */
  private close(): void {
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.setShare(0);
  }

  private setShare(ms: number): void {
    this.budget.move(this.share, ms);
    this.share = ms;
  }

  private arm(delayMs: number): void {
    this.timer = setTimeout(() => {
      if (this.pending.size === 0) {
        this.close();
        return;
      }
      const batch: Invalidation[] = [];
      for (const [kind, p] of this.pending) batch.push({ kind, ts: p.ts, siteId: p.siteId, id: p.id });
      this.pending.clear();
      this.emit(batch);
      // Still busy: the next window stretches with what broadcasting costs the process (STRETCH).
      this.arm(this.budget.windowAfterBusy(this.windowMs));
    }, delayMs);
    this.timer.unref();
  }

  private emit(batch: readonly Invalidation[]): void {
    this.lastCostMs = 0;
    for (const l of this.listeners) l.invalidate(batch, this.spent);
  }

  /** A listener wrote the batch (see InvalidationListener): the cost counts from now on. */
  private readonly spent = (ms: number): void => {
    this.lastCostMs += ms;
    if (this.timer !== null) this.setShare(this.lastCostMs);
  };
}

/**
 * The dashboard's invalidation streams of this process, over the event
 * fan-out: a tenant's stream is read while someone listens to it here.
 */
export class InvalidationStreams {
  private readonly hubs = new Map<string, StreamHub>();
  private readonly budget = new BroadcastBudget();

  /** @param windowMs coalescing window per kind (STREAM_COALESCE_MS; 0: none, every event goes out). */
  constructor(private readonly fanout: EventFanout, private readonly windowMs: number) {}

  /** Streams listened to now (tenant and stream pairs). */
  get hubCount(): number {
    return this.hubs.size;
  }

  /**
   * Listens to one stream of a tenant. Resolves, with the function that
   * stops listening, once every event written from now on will reach the
   * listener; 503 service_unavailable when Redis cannot say where the
   * tenant's events stand.
   */
  async subscribe(tenantId: string, stream: StreamName, listener: InvalidationListener): Promise<() => void> {
    const key = `${tenantId}\n${stream}`;
    let hub = this.hubs.get(key);
    if (!hub) {
      const created = new StreamHub(STREAM_KINDS[stream], this.windowMs, this.budget);
      created.unsubscribe = this.fanout.subscribe(tenantId, (e) => created.onEvent(e));
      this.hubs.set(key, created);
      hub = created;
    }
    const joined = hub;
    joined.listeners.add(listener);
    const leave = (): void => {
      joined.listeners.delete(listener);
      if (joined.listeners.size === 0 && this.hubs.get(key) === joined) {
        this.hubs.delete(key);
        joined.dispose();
      }
    };
    try {
      await this.fanout.ready(tenantId);
    } catch (err) {
      leave();
      throw Errors.SERVICE_UNAVAILABLE('The event stream').withCause(err);
    }
    return leave;
  }

  /** Ends every listener (the engine is closing). */
  close(): void {
    for (const hub of this.hubs.values()) {
      for (const l of hub.listeners) l.end();
      hub.dispose();
    }
    this.hubs.clear();
  }
}
