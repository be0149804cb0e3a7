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
  'live-sessions': { 'session.start': 'session_started', 'session.end': 'session_ended', 'session.extend': 'session_extended' },
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
  invalidate(inv: Invalidation): void;
  /** The engine is closing: no more invalidations will come. */
  end(): void;
}

/**
 * During a sustained burst a stream's broadcasts may take at most about 1/STRETCH of the thread:
 * a window that closes with events pending is followed by one at least STRETCH times as long as
 * the last broadcast took. With 10,000 clients a broadcast costs ~150-200 ms of the main thread
 * (bench/sse-fanout), and two a second took a third of the core sign-ins need; a quiet stream's
 * first event still goes out at once.
 */
const STRETCH = 10;
/**
 * The stretch's ceiling: on a machine short of CPU a broadcast can take far longer, and ten times
 * that would hold changes back for many seconds (bench/sse-fanout with a competing load).
 */
const MAX_STRETCHED_MS = 2_000;

/** One kind's window: the first event goes out at once; those within the next windowMs go out as one at its end. */
interface KindWindow {
  timer: NodeJS.Timeout | null;
  pending: boolean;
  siteId: string | null;
  id: string;
  ts: number;
}

/**
 * One tenant's stream in this process: maps the tenant's events to kinds and
 * coalesces them, so a burst of a thousand sign-ins becomes a handful of
 * invalidations (a leading one at once, then at most one per kind per
 * window), whatever number of clients listen. Coalescing here, once per
 * tenant and stream rather than per client, gives every client the same
 * bound and lets the HTTP layer encode each invalidation once.
 */
class StreamHub {
  readonly listeners = new Set<InvalidationListener>();
  private readonly windows = new Map<string, KindWindow>();
  /** How long the last broadcast to every listener took, ms. */
  private lastCostMs = 0;
  unsubscribe: () => void = () => undefined;

  constructor(private readonly kinds: Readonly<Partial<Record<EventType, string>>>, private readonly windowMs: number) {}

  onEvent(e: DomainEvent): void {
    const kind = this.kinds[e.type];
    if (kind === undefined) return;
    if (this.windowMs === 0) {
      this.emit({ kind, ts: e.ts, siteId: e.siteId, id: e.id });
      return;
    }
    let w = this.windows.get(kind);
    if (!w) this.windows.set(kind, (w = { timer: null, pending: false, siteId: null, id: '', ts: 0 }));
    if (w.timer === null) {
      this.emit({ kind, ts: e.ts, siteId: e.siteId, id: e.id });
      this.arm(kind, w, this.windowMs);
      return;
    }
    // null (tenant-wide, or several sites) absorbs: once the window holds two sites it names none.
    w.siteId = w.pending && w.siteId !== e.siteId ? null : e.siteId;
    w.pending = true;
    w.id = e.id;
    w.ts = e.ts;
  }

  dispose(): void {
    this.unsubscribe();
    for (const w of this.windows.values()) if (w.timer) clearTimeout(w.timer);
    this.windows.clear();
  }

  private arm(kind: string, w: KindWindow, delayMs: number): void {
    w.timer = setTimeout(() => {
      if (!w.pending) {
        w.timer = null;
        return;
      }
      w.pending = false;
      this.emit({ kind, ts: w.ts, siteId: w.siteId, id: w.id });
      // Still busy: the next window stretches with what broadcasting costs (STRETCH).
      this.arm(kind, w, Math.max(this.windowMs, Math.min(this.lastCostMs * STRETCH, MAX_STRETCHED_MS)));
    }, delayMs);
    w.timer.unref();
  }

  private emit(inv: Invalidation): void {
    const started = performance.now();
    for (const l of this.listeners) l.invalidate(inv);
    this.lastCostMs = performance.now() - started;
  }
}

/**
 * The dashboard's invalidation streams of this process, over the event
 * fan-out: a tenant's stream is read while someone listens to it here.
 */
export class InvalidationStreams {
  private readonly hubs = new Map<string, StreamHub>();

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
      const created = new StreamHub(STREAM_KINDS[stream], this.windowMs);
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
