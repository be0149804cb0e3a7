import { request } from '../shared/index.js';
import type { StreamToken } from './types.js';

/** The dashboard's four invalidation streams (docs/dashboard-api.md, Streams). */
export const STREAMS = ['live-sessions', 'incidents', 'audit', 'jit-approvals'] as const;
export type StreamName = (typeof STREAMS)[number];

/** One invalidation: what changed, never the data itself ("an invalidation signal {kind, ts, site_id?} with no data payload"). */
export interface Invalidation {
  kind: string;
  ts: string;
  site_id?: string;
}

export type StreamStatus = Record<StreamName, boolean>;

const PREFIX = '/api/v1/tenants/me/';
/** Reconnect back-off: quick after a blip, at most half a minute while the service is away. */
const BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000] as const;
/** A stream token is only checked when a stream opens; one is reused by all four streams until shortly before it expires. */
const TOKEN_MARGIN_MS = 15_000;

interface Line {
  es: EventSource | null;
  up: boolean;
  /** Opened at least once: the next open is a reconnect, and events may have been missed. */
  opened: boolean;
  failures: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * Keeps the four EventSource connections open and tells the widgets when to
 * refetch. Every event, whatever its kind, means "refetch what this stream
 * covers"; `resync` and every reopen after a drop mean the same, because
 * events may have been missed while it was down. A dropped stream is not left
 * to the browser's own retry: that would resend an expired `?token=` forever.
 * It is closed, and reopened with a fresh token after a back-off.
 */
export class StreamHub {
  private readonly lines = new Map<StreamName, Line>();
  private readonly listeners = new Map<StreamName, Set<(inv: Invalidation) => void>>();
  private readonly statusListeners = new Set<(s: StreamStatus) => void>();
  private token: { value: string; until: number } | null = null;
  private tokenPending: Promise<string> | null = null;
  private stopped = false;

  /** Starts every stream; `stop()` closes them all. */
  start(): void {
    for (const name of STREAMS) {
      this.lines.set(name, { es: null, up: false, opened: false, failures: 0, timer: undefined });
      void this.open(name);
    }
    addEventListener('online', this.onOnline);
  }

  /** Back on the network: retry the streams that are down now rather than at the end of their back-off. */
  private readonly onOnline = (): void => {
    for (const [name, line] of this.lines) {
      if (line.es || line.up) continue;
      clearTimeout(line.timer);
      line.failures = 0;
      void this.open(name);
    }
  };

  stop(): void {
    this.stopped = true;
    removeEventListener('online', this.onOnline);
    for (const line of this.lines.values()) {
      clearTimeout(line.timer);
      line.es?.close();
      line.es = null;
    }
    this.lines.clear();
    this.listeners.clear();
    this.statusListeners.clear();
  }

  /** Calls `fn` for every invalidation of the stream, with kind `connected` when it first opens and `resync` after a reconnect. */
  subscribe(name: StreamName, fn: (inv: Invalidation) => void): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /** Calls `fn` now and whenever a stream goes up or down (after start(): before it, every stream reads as down). */
  onStatus(fn: (s: StreamStatus) => void): () => void {
    this.statusListeners.add(fn);
    fn(this.status());
    return () => this.statusListeners.delete(fn);
  }

  status(): StreamStatus {
    const s = {} as StreamStatus;
    for (const name of STREAMS) {
      const line = this.lines.get(name);
      // Until its first attempt fails, a stream counts as up: the page does not flash "interrupted" while it connects.
      s[name] = line ? line.up || (!line.opened && line.failures === 0) : false;
    }
    return s;
  }

  private async open(name: StreamName): Promise<void> {
    const line = this.lines.get(name);
    if (!line || this.stopped) return;
    let token: string;
    try {
      token = await this.streamToken();
    } catch {
      this.retry(name, line);
      return;
    }
    if (this.stopped) return;
    const es = new EventSource(`${PREFIX}stream/${name}?token=${encodeURIComponent(token)}`);
    line.es = es;
    es.onopen = () => {
      // Back after a drop, or open at last after failed tries: events may have been missed, everything is refetched.
      // A first open refetches only this stream's widgets: they were fetched before it, and a change may fall between.
      const missed = line.opened || line.failures > 0;
      line.failures = 0;
      line.up = true;
      line.opened = true;
      this.emitStatus();
      this.emit(name, { kind: missed ? 'resync' : 'connected', ts: new Date().toISOString() });
    };
    es.onmessage = (e: MessageEvent<string>) => {
      let inv: Invalidation;
      try {
        inv = JSON.parse(e.data) as Invalidation;
      } catch {
        return; // not an invalidation: nothing to refetch for it
      }
      this.emit(name, inv);
    };
    es.onerror = () => {
      es.close();
      if (line.es === es) line.es = null;
      // A refused token (401) looks the same as a drop from here: mint a new one on the next try.
      this.token = null;
      this.retry(name, line);
    };
  }

  private retry(name: StreamName, line: Line): void {
    if (this.stopped) return;
    line.up = false;
    const wait = BACKOFF_MS[Math.min(line.failures, BACKOFF_MS.length - 1)]!;
    line.failures += 1;
    this.emitStatus();
    clearTimeout(line.timer);
    line.timer = setTimeout(() => void this.open(name), wait);
  }

  /** One token for all four streams: the four opens at start-up share one request. */
  private streamToken(): Promise<string> {
    if (this.token && this.token.until > Date.now()) return Promise.resolve(this.token.value);
    this.tokenPending ??= request<StreamToken>(`${PREFIX}stream-token`, { method: 'POST' })
      .then((t) => {
        this.token = { value: t.token, until: Date.now() + t.expires_in * 1000 - TOKEN_MARGIN_MS };
        return t.token;
      })
      .finally(() => { this.tokenPending = null; });
    return this.tokenPending;
  }

  private emit(name: StreamName, inv: Invalidation): void {
    for (const fn of this.listeners.get(name) ?? []) fn(inv);
  }

  private emitStatus(): void {
    const s = this.status();
    for (const fn of this.statusListeners) fn(s);
  }
}
