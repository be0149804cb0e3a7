import { request } from '../shared/index.js';
import type { StreamToken } from './types.js';

/** The dashboard's four invalidation streams (docs/dashboard-api.md, Streams); the page reads them all through `stream/all`. */
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
/** A stream token is only checked when a stream opens; one is reused until shortly before it expires. */
const TOKEN_MARGIN_MS = 15_000;

/** Which of the four streams each kind belongs to (docs/dashboard-api.md, Streams); `all` carries them all. */
const KIND_STREAM: Readonly<Record<string, StreamName>> = {
  session_started: 'live-sessions', session_ended: 'live-sessions', session_extended: 'live-sessions',
  // Sign-in counts written, a NAS heard from again or gone silent: what the live figures are read beside.
  signins_counted: 'live-sessions', nas_online: 'live-sessions', nas_offline: 'live-sessions',
  incident_raised: 'incidents', incident_updated: 'incidents',
  audit_appended: 'audit',
  jit_requested: 'jit-approvals', jit_decided: 'jit-approvals',
};

/** The one stream an invalidation's kind belongs to; null for kinds that concern them all (`connected`, `resync`, unknown). */
export const streamOf = (kind: string): StreamName | null => KIND_STREAM[kind] ?? null;

/**
 * Keeps one EventSource open on `stream/all` (every kind of the four streams)
 * and tells the widgets when to refetch. One connection, not four: a browser
 * keeps at most six HTTP/1.1 connections per host, and four long-lived
 * streams per tab starved a second tab, or the console beside it, of the
 * rest. Every event means "refetch what its stream covers"; `resync` and
 * every reopen after a drop mean that for all four, because events may have
 * been missed while it was down. A dropped stream is not left to the
 * browser's own retry: that would resend an expired `?token=` forever. It
 * is closed, and reopened with a fresh token after a back-off.
 */
export class StreamHub {
  private es: EventSource | null = null;
  private up = false;
  /** Opened at least once: the next open is a reconnect, and events may have been missed. */
  private opened = false;
  private failures = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private started = false;
  private readonly listeners = new Map<StreamName, Set<(inv: Invalidation) => void>>();
  private readonly statusListeners = new Set<(s: StreamStatus) => void>();
  private token: { value: string; until: number } | null = null;
  private tokenPending: Promise<string> | null = null;
  private stopped = false;

  /** Opens the stream; `stop()` closes it. */
  start(): void {
    this.started = true;
    void this.open();
    addEventListener('online', this.onOnline);
  }

  /** Back on the network: retry now rather than at the end of the back-off. */
  private readonly onOnline = (): void => {
    if (this.es || this.up || !this.started) return;
    clearTimeout(this.timer);
    this.failures = 0;
    void this.open();
  };

  stop(): void {
    this.stopped = true;
    removeEventListener('online', this.onOnline);
    clearTimeout(this.timer);
    this.es?.close();
    this.es = null;
    this.listeners.clear();
    this.statusListeners.clear();
  }

  /**
   * Calls `fn` for every invalidation of the stream, or of any of the
   * streams, with kind `connected` when it first opens and `resync` after a
   * reconnect. An invalidation that concerns several of them (`connected`,
   * `resync`, a kind this page does not know) calls `fn` once, not once per
   * stream: a widget that follows two streams costs one refetch per
   * invalidation, like one that follows one.
   */
  subscribe(names: StreamName | readonly StreamName[], fn: (inv: Invalidation) => void): () => void {
    const list: readonly StreamName[] = typeof names === 'string' ? [names] : names;
    // emit() hands one message's invalidation to every stream as the same object: seeing it again is the same message.
    let last: Invalidation | null = null;
    const once = list.length === 1 ? fn : (inv: Invalidation): void => {
      if (inv === last) return;
      last = inv;
      fn(inv);
    };
    const sets = list.map((name) => {
      let set = this.listeners.get(name);
      if (!set) this.listeners.set(name, (set = new Set()));
      set.add(once);
      return set;
    });
    return () => { for (const set of sets) set.delete(once); };
  }

  /** Calls `fn` now and whenever the stream goes up or down (after start(): before it, every stream reads as down). */
  onStatus(fn: (s: StreamStatus) => void): () => void {
    this.statusListeners.add(fn);
    fn(this.status());
    return () => this.statusListeners.delete(fn);
  }

  status(): StreamStatus {
    // Until its first attempt fails, the stream counts as up: the page does not flash "interrupted" while it connects.
    const up = this.started && (this.up || (!this.opened && this.failures === 0));
    const s = {} as StreamStatus;
    for (const name of STREAMS) s[name] = up;
    return s;
  }

  private async open(): Promise<void> {
    if (this.stopped) return;
    let token: string;
    try {
      token = await this.streamToken();
    } catch {
      this.retry();
      return;
    }
    if (this.stopped) return;
    const es = new EventSource(`${PREFIX}stream/all?token=${encodeURIComponent(token)}`);
    this.es = es;
    es.onopen = () => {
      // Back after a drop, or open at last after failed tries: events may have been missed, everything is refetched.
      // A first open is `connected`: the widgets fetched before it, and a change may fall between.
      const missed = this.opened || this.failures > 0;
      this.failures = 0;
      this.up = true;
      this.opened = true;
      this.emitStatus();
      const inv = { kind: missed ? 'resync' : 'connected', ts: new Date().toISOString() };
      for (const name of STREAMS) this.emit(name, inv);
    };
    es.onmessage = (e: MessageEvent<string>) => {
      let inv: Invalidation;
      try {
        inv = JSON.parse(e.data) as Invalidation;
      } catch {
        return; // not an invalidation: nothing to refetch for it
      }
      const name = KIND_STREAM[inv.kind];
      if (name) this.emit(name, inv);
      else for (const n of STREAMS) this.emit(n, inv); // resync, or a kind this page does not know yet: refetch all
    };
    es.onerror = () => {
      es.close();
      if (this.es === es) this.es = null;
      // A refused token (401) looks the same as a drop from here: mint a new one on the next try.
      this.token = null;
      this.retry();
    };
  }

  private retry(): void {
    if (this.stopped) return;
    this.up = false;
    const wait = BACKOFF_MS[Math.min(this.failures, BACKOFF_MS.length - 1)]!;
    this.failures += 1;
    this.emitStatus();
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.open(), wait);
  }

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
