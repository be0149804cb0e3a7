import type { Engine, Invalidation, InvalidationListener, InvalidationStreams, Logger, StreamName, StreamSettings } from '../engine/index.js';
import type { Exchange } from './respond.js';
import { StreamPlaces } from './stream-places.js';

/** The reconnect delay EventSource is told to use. */
const RETRY_MS = 5000;
const HEARTBEAT = Buffer.from(': hb\n\n');
/**
 * Written from onWritable when nothing is waiting: uWS leaves its own buffer
 * alone while a handler is registered, and drains it only when the handler
 * writes. An empty comment line is the smallest write a client ignores.
 */
const NUDGE = Buffer.from(':\n');

type Metrics = Engine['metrics'];
type DropReason = 'buffer' | 'stalled';

/** One invalidation as the wire carries it: `id:` and `data: {kind, ts, site_id?}`; about 50 bytes of data. */
function encodeInvalidation(inv: Invalidation): string {
  const ts = new Date(inv.ts).toISOString();
  const data = inv.siteId === null ? { kind: inv.kind, ts } : { kind: inv.kind, ts, site_id: inv.siteId };
  return `id: ${inv.id}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * A batch of invalidations as one chunk: written to a client in one write,
 * so a window that closes with three kinds pending costs the thread, the
 * kernel and the client one send and one read, not three.
 */
function encodeBatch(batch: readonly Invalidation[]): Buffer {
  return Buffer.from(batch.length === 1 ? encodeInvalidation(batch[0]!) : batch.map(encodeInvalidation).join(''));
}

/**
 * One EventSource connection. Back-pressure, as uWS reports it: write()
 * returns false when the socket did not take everything, and uWS keeps the
 * rest in a buffer of its own that it never bounds. From then on the client
 * is "backed up": nothing more goes to uWS until onWritable, and what comes
 * meanwhile waits here, counted. uWS does not say how much of a refused
 * write it sent (getWriteOffset moves only with tryEnd), so `held` counts
 * all of every refused write: an upper bound that is cleared when a write
 * is taken whole. A client is dropped once held plus waiting bytes pass
 * maxBufferedBytes, or when it stays backed up longer than maxBackedUpMs,
 * so a client that reads nothing costs at most that bound, never more.
 */
class SseClient {
  private waiting: Buffer[] = [];
  private waitingBytes = 0;
  private held = 0;
  /** When the client backed up (ms); 0 while the socket takes everything. */
  backedUpSince = 0;
  private done = false;

  constructor(private readonly ex: Exchange, private readonly broker: SseBroker, readonly channel: SseChannel, readonly place: () => void) {}

  /** Status, headers and the first bytes (the retry hint, and resync after a reconnect) in one cork. */
  start(first: Buffer): void {
    const res = this.ex.res;
    // Replaces the router's handler (uWS keeps one).
    res.onAborted(() => {
      this.ex.aborted = true;
      this.finish();
    });
    res.onWritable(() => this.drain());
    let ok = true;
    res.cork(() => {
      res.writeStatus('200 OK');
      res.writeHeader('content-type', 'text/event-stream; charset=utf-8');
      res.writeHeader('cache-control', 'no-cache, no-transform');
      // Proxies that buffer responses (nginx) would hold the events back.
      res.writeHeader('x-accel-buffering', 'no');
      if (this.ex.requestId !== undefined) res.writeHeader('x-request-id', this.ex.requestId);
      ok = res.write(first);
    });
    if (!ok) this.backUp(first.length);
  }

  send(frame: Buffer): void {
    if (this.done) return;
    if (this.backedUpSince !== 0) {
      this.waiting.push(frame);
      this.waitingBytes += frame.length;
      this.checkBound();
      return;
    }
    let ok = true;
    this.ex.res.cork(() => { ok = this.ex.res.write(frame); });
    if (!ok) this.backUp(frame.length);
  }

  /** Drops the client when it has been backed up since before `since`. */
  stalledSince(since: number): void {
    if (this.backedUpSince !== 0 && this.backedUpSince < since) this.drop('stalled');
  }

  /** The engine is closing: a clean end of the response; EventSource reconnects elsewhere. */
  end(): void {
    if (this.done) return;
    this.ex.res.cork(() => this.ex.res.end());
    this.ex.aborted = true;
    this.finish();
  }

  private backUp(bytes: number): void {
    this.held += bytes;
    if (this.backedUpSince === 0) {
      this.backedUpSince = Date.now();
      this.broker.backedUp.add(this);
    }
    this.checkBound();
  }

  private checkBound(): void {
    if (this.held + this.waitingBytes > this.broker.settings.maxBufferedBytes) this.drop('buffer');
  }

  /** onWritable: hand uWS what waited (or a nudge, so it drains its own buffer); true once it took all. */
  private drain(): boolean {
    if (this.done) return true;
    const chunk = this.waiting.length === 0 ? NUDGE : this.waiting.length === 1 ? this.waiting[0]! : Buffer.concat(this.waiting, this.waitingBytes);
    this.waiting = [];
    this.waitingBytes = 0;
    let ok = true;
    this.ex.res.cork(() => { ok = this.ex.res.write(chunk); });
    if (!ok) {
      this.backUp(chunk.length);
      return false;
    }
    this.held = 0;
    this.backedUpSince = 0;
    this.broker.backedUp.delete(this);
    return true;
  }

  private drop(reason: DropReason): void {
    if (this.done) return;
    this.broker.dropped(reason);
    this.ex.aborted = true;
    this.finish();
    // Closes the socket at once (uWS discards its buffer for it); onAborted then finds the client finished.
    this.ex.res.close();
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.waiting = [];
    this.broker.left(this);
    this.ex.release?.();
  }
}

/**
 * Clients written to in one turn of the event loop. A write costs ~10-14 µs
 * (most of it the send syscall), so a broadcast to 10,000 clients in one go
 * held the main thread ~130 ms: every request arriving meanwhile (a guest's
 * sign-in among them) waited for it, and Redis and Postgres sat idle for
 * want of work. In slices of 500 the thread is held ~6 ms at a time.
 */
const SLICE = 500;

type Spent = (ms: number) => void;

/** A broadcast under way: the clients it writes to (those there when it began) and how far it got. */
interface Pass {
  clients: SseClient[];
  next: number;
  frame: Buffer;
  spentMs: number;
  /** Whom to tell the pass's cost, each once: batches of one hub merged into one pass are one write. */
  done: Set<Spent>;
}

/**
 * The clients of one tenant's stream in this process: one listener of the
 * engine's invalidations, so each batch is encoded once and written to
 * every client, in slices (SLICE). A frame that comes while a broadcast is
 * under way waits for it to finish, so every client gets frames in order.
 */
class SseChannel implements InvalidationListener {
  readonly clients = new Set<SseClient>();
  /** Clients, and requests that joined but have not taken over their response yet. */
  members = 0;
  ready: Promise<void> = Promise.resolve();
  ended = false;
  /** When an invalidation was last written to the clients (ms): the heartbeat skips a channel that is not idle. */
  lastWriteAt = 0;
  leave: () => void = () => undefined;
  private pass: Pass | null = null;
  /** Frames that came during the pass under way, and whom to tell when they are written: the next pass writes them as one. */
  private queued: Buffer[] = [];
  private queuedDone = new Set<Spent>();

  constructor(readonly key: string) {}

  invalidate(batch: readonly Invalidation[], spent: Spent): void {
    if (this.clients.size === 0 || batch.length === 0) return spent(0);
    this.lastWriteAt = Date.now();
    this.broadcast(encodeBatch(batch), new Set([spent]));
  }

  /** A comment for the heartbeat; nothing when a broadcast is under way (the stream is not idle). */
  heartbeat(frame: Buffer): void {
    if (this.pass === null) this.broadcast(frame, new Set());
  }

  end(): void {
    this.ended = true;
    this.pass = null;
    this.queued = [];
    this.queuedDone = new Set();
    for (const c of [...this.clients]) c.end();
  }

  private broadcast(frame: Buffer, done: Set<Spent>): void {
    if (this.pass !== null) {
      this.queued.push(frame);
      for (const d of done) this.queuedDone.add(d);
      return;
    }
    this.pass = { clients: [...this.clients], next: 0, frame, spentMs: 0, done };
    // The first slice at once: a channel of up to SLICE clients is written in this very turn.
    this.slice();
  }

  private readonly slice = (): void => {
    const p = this.pass;
    if (p === null) return;
    const started = performance.now();
    const end = Math.min(p.next + SLICE, p.clients.length);
    for (let i = p.next; i < end; i++) p.clients[i]!.send(p.frame);
    p.next = end;
    p.spentMs += performance.now() - started;
    if (end < p.clients.length) {
      setImmediate(this.slice);
      return;
    }
    this.pass = null;
    for (const d of p.done) d(p.spentMs);
    if (this.queued.length > 0) {
      const frames = this.queued;
      const done = this.queuedDone;
      this.queued = [];
      this.queuedDone = new Set();
      this.broadcast(frames.length === 1 ? frames[0]! : Buffer.concat(frames), done);
    }
  };
}

/**
 * The dashboard's server-sent-event clients of this process
 * (docs/dashboard-api.md, Streams): channels per tenant and stream, the
 * heartbeat, and the bounds on clients that stop reading.
 */
export class SseBroker {
  private readonly channels = new Map<string, SseChannel>();
  /** Clients backed up now, checked against maxBackedUpMs. */
  readonly backedUp = new Set<SseClient>();
  private clients = 0;
  private readonly places: StreamPlaces;
  private heartbeat: NodeJS.Timeout | null = null;
  private sweep: NodeJS.Timeout | null = null;

  constructor(private readonly streams: InvalidationStreams, readonly settings: StreamSettings, private readonly metrics: Metrics, private readonly log: Logger) {
    this.places = new StreamPlaces(settings, metrics);
    metrics.gauge('stream_clients', 'Dashboard stream (SSE) clients connected to this process', () => this.clients);
    metrics.gauge('stream_clients_backed_up', 'Stream clients whose socket did not take the last write (events wait for them, bounded)', () => this.backedUp.size);
    metrics.counter('stream_clients_dropped_total', 'Stream clients dropped for not reading: buffer (unsent bytes past STREAM_MAX_BUFFERED_BYTES) or stalled (backed up past STREAM_MAX_BACKED_UP_MS)', 'reason');
  }

  /**
   * Joins the tenant's stream. Resolves once every event written from now on
   * will reach the client, with the function that takes over the response
   * (it must be called, in the same turn: it also releases the place when
   * the client has gone meanwhile). 503 when Redis cannot be read.
   */
  async join(tenantId: string, credential: string, stream: StreamName): Promise<(ex: Exchange, resync: boolean) => void> {
    const place = this.places.take(tenantId, credential);
    try {
      return await this.joinChannel(tenantId, stream, place);
    } catch (err) {
      place();
      throw err;
    }
  }

  private async joinChannel(tenantId: string, stream: StreamName, place: () => void): Promise<(ex: Exchange, resync: boolean) => void> {
    const key = `${tenantId}\n${stream}`;
    let ch = this.channels.get(key);
    if (!ch || ch.ended) {
      const created = new SseChannel(key);
      created.ready = this.streams.subscribe(tenantId, stream, created).then(
        (leave) => { created.leave = leave; },
        (err: unknown) => {
          if (this.channels.get(key) === created) this.channels.delete(key);
          throw err;
        });
      this.channels.set(key, created);
      ch = created;
    }
    const channel = ch;
    channel.members++;
    try {
      await channel.ready;
    } catch (err) {
      channel.members--;
      throw err;
    }
    return (ex, resync) => this.attach(channel, ex, resync, place);
  }

  /** A client went (aborted, dropped or ended). */
  left(client: SseClient): void {
    this.backedUp.delete(client);
    client.channel.clients.delete(client);
    this.clients--;
    client.place();
    this.release(client.channel);
    if (this.clients === 0) this.stopTimers();
  }

  dropped(reason: DropReason): void {
    this.metrics.inc('stream_clients_dropped_total', reason);
    this.log.debug({ reason }, 'stream client dropped: it does not read');
  }

  private attach(channel: SseChannel, ex: Exchange, resync: boolean, place: () => void): void {
    if (ex.aborted) {
      place();
      this.release(channel);
      ex.release?.();
      return;
    }
    const client = new SseClient(ex, this, channel, place);
    channel.clients.add(client);
    this.clients++;
    this.startTimers();
    const first = resync
      ? `retry: ${RETRY_MS}\n\ndata: ${JSON.stringify({ kind: 'resync', ts: new Date().toISOString() })}\n\n`
      : `retry: ${RETRY_MS}\n\n`;
    client.start(Buffer.from(first));
    if (channel.ended) client.end();
  }

  private release(channel: SseChannel): void {
    if (--channel.members > 0) return;
    if (this.channels.get(channel.key) === channel) this.channels.delete(channel.key);
    channel.leave();
  }

  private startTimers(): void {
    if (this.heartbeat) return;
    const { heartbeatMs, maxBackedUpMs } = this.settings;
    // A channel that carried an event in the last half period needs no comment to look alive: during
    // a surge that saves a whole broadcast (10,000 writes) every period. No stream is silent longer
    // than 1.5 periods (22.5 s by default; proxies' idle limits are commonly 60 s).
    this.heartbeat = setInterval(() => {
      const busySince = Date.now() - heartbeatMs / 2;
      for (const ch of this.channels.values()) {
        if (ch.lastWriteAt <= busySince) ch.heartbeat(HEARTBEAT);
      }
    }, heartbeatMs);
    this.sweep = setInterval(() => {
      const since = Date.now() - maxBackedUpMs;
      for (const c of [...this.backedUp]) c.stalledSince(since);
    }, Math.min(1000, Math.max(50, maxBackedUpMs / 4)));
    this.heartbeat.unref();
    this.sweep.unref();
  }

  private stopTimers(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.sweep) clearInterval(this.sweep);
    this.heartbeat = null;
    this.sweep = null;
  }
}
