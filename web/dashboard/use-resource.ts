import { createContext } from 'preact';
import { useContext, useEffect, useRef, useState } from 'preact/hooks';
import { streamOf, type StreamHub, type StreamName, type StreamStatus } from './stream-hub.js';

/** The page's stream hub and the streams' current state, for the widgets below it. */
export interface LiveValue {
  hub: StreamHub | null;
  status: StreamStatus | null;
  /** Bumped by the page to make every resource refetch at once (a full refetch). */
  epoch: number;
}
export const LiveContext = createContext<LiveValue>({ hub: null, status: null, epoch: 0 });

/** Widgets without a stream, and stream widgets while their stream is down, refetch this often (the interface's limit "Dashboard widget polling: 60 s"). */
export const WIDGET_POLL_MS = 60_000;
/** Past this, a request counts as failed (shown as "could not be reached") and the next poll tries again. */
const FETCH_TIMEOUT_MS = 15_000;

export interface Resource<T> {
  data: T | null;
  /** The last failure, kept until a fetch succeeds. */
  error: unknown;
  /** When data last arrived (ms since epoch); 0 before the first answer. */
  updatedAt: number;
  /** How often it is refreshed now (ms), for the stale sign: the poll period, or null while a stream keeps it current. */
  everyMs: number | null;
  /** The stream it follows is down (it is polled meanwhile). */
  streamDown: boolean;
  /** It follows a stream that is up: changes show as they happen (and, with `everyMs` too, it is polled as well). */
  live: boolean;
  /** Fetches now (after an action). */
  reload(): void;
}

/**
 * One piece of the page's data: fetched at once, then every `everyMs`, or,
 * with `stream`, whenever that stream (or one of those streams) invalidates
 * it, and every 60 s while the stream is down. With both `stream` and
 * `everyMs` it is polled every `everyMs` whether the stream is up or not:
 * for data that also changes with no event (a "last minute" count).
 * `settleMs` delays the refetch for a stream's own invalidations, for data
 * the service answers from a short cache that may still hold the state
 * before the change (one refetch after the cache's age, not one too early).
 *
 * Never more than one request at a time: an invalidation that arrives during
 * a fetch marks the data dirty and causes exactly one more fetch when it
 * ends, so a burst of events costs two requests, not one per event, and a
 * fast stream cannot starve the fetch by aborting it over and over. A
 * page-wide refetch (`epoch`, which the page makes when a stream reconnects)
 * refetches too.
 */
export function useResource<T>(fetcher: (signal: AbortSignal) => Promise<T>, opts: {
  everyMs?: number; stream?: StreamName | readonly StreamName[]; settleMs?: Partial<Record<StreamName, number>>; deps?: unknown[];
}): Resource<T> {
  const { hub, status, epoch } = useContext(LiveContext);
  const streams: readonly StreamName[] = opts.stream === undefined ? [] : typeof opts.stream === 'string' ? [opts.stream] : opts.stream;
  const streamDown = status !== null && streams.some((name) => !status[name]);
  // With a stream, poll only while it is down (unless told to poll anyway): the stream says when data changed. Before
  // the streams start there is one fetch and no poll, so their start (optimistically up) does not restart the loop and
  // abort that fetch.
  const everyMs = streams.length > 0 ? (opts.everyMs ?? (streamDown ? WIDGET_POLL_MS : null)) : (opts.everyMs ?? WIDGET_POLL_MS);
  const [state, setState] = useState<{ data: T | null; error: unknown; updatedAt: number }>({ data: null, error: null, updatedAt: 0 });
  const kick = useRef<() => void>(() => undefined);
  const fetchRef = useRef(fetcher);
  fetchRef.current = fetcher;

  useEffect(() => {
    let stopped = false;
    let busy = false;
    let dirty = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let ctl: AbortController | null = null;
    const run = async (): Promise<void> => {
      if (busy) {
        dirty = true;
        return;
      }
      busy = true;
      clearTimeout(timer);
      do {
        dirty = false;
        // A request the service never answers is given up, so one hung connection cannot freeze the widget.
        const mine = new AbortController();
        ctl = mine;
        const deadline = setTimeout(() => mine.abort(new DOMException('no answer', 'TimeoutError')), FETCH_TIMEOUT_MS);
        try {
          const data = await fetchRef.current(mine.signal);
          if (!stopped) setState({ data, error: null, updatedAt: Date.now() });
        } catch (error) {
          if (!stopped && (error as Error).name !== 'AbortError') setState((s) => ({ ...s, error }));
        } finally {
          clearTimeout(deadline);
        }
      } while (dirty && !stopped);
      busy = false;
      if (!stopped && everyMs !== null) timer = setTimeout(() => void run(), everyMs);
    };
    kick.current = () => void run();
    void run();
    return () => {
      stopped = true;
      clearTimeout(timer);
      ctl?.abort();
    };
  }, [everyMs, epoch, ...(opts.deps ?? [])]);

  // Subscribed apart from the loop: the hub's arrival is no reason to refetch. A `resync` is left to the page, which
  // refetches everything (`epoch`) a moment later; fetching for it here too would fetch twice for one invalidation.
  const streamKey = streams.join();
  const settleRef = useRef(opts.settleMs);
  settleRef.current = opts.settleMs;
  useEffect(() => {
    if (streams.length === 0 || !hub) return undefined;
    const waiting = new Set<ReturnType<typeof setTimeout>>();
    const off = hub.subscribe(streams, (inv) => {
      if (inv.kind === 'resync') return;
      const stream = streamOf(inv.kind);
      const wait = stream ? settleRef.current?.[stream] ?? 0 : 0;
      if (wait <= 0) {
        kick.current();
        return;
      }
      const timer = setTimeout(() => {
        waiting.delete(timer);
        kick.current();
      }, wait);
      waiting.add(timer);
    });
    return () => {
      off();
      for (const timer of waiting) clearTimeout(timer);
    };
  }, [hub, streamKey]);

  return { ...state, everyMs, streamDown, live: streams.length > 0 && hub !== null && !streamDown, reload: () => kick.current() };
}
