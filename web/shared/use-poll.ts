import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Poll<T> {
  data: T | null;
  /** The last failure (kept until a fetch succeeds); the page shows it as a sentence. */
  error: unknown;
  /** When data last arrived (ms since epoch); 0 before the first answer. */
  updatedAt: number;
  /** Fetches now (after an action), without waiting for the next tick. */
  reload(): void;
}

/**
 * Fetches at once and then every `everyMs` from the start of the last fetch
 * (not from its answer, which added each answer's time to the period), so
 * the page's data is at most about a period and an answer old. One request
 * at a time: after an answer slower than the period, the next fetch waits a
 * quarter period rather than requests piling up. Data from an older request
 * never overwrites a newer one. `deps` restart it (a filter).
 */
export function usePoll<T>(fetcher: (signal: AbortSignal) => Promise<T>, everyMs: number | null, deps: unknown[] = []): Poll<T> {
  const [state, setState] = useState<{ data: T | null; error: unknown; updatedAt: number }>({ data: null, error: null, updatedAt: 0 });
  const kick = useRef<() => void>(() => undefined);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let ctl: AbortController | null = null;
    const tick = async (): Promise<void> => {
      clearTimeout(timer);
      ctl?.abort();
      const mine = new AbortController();
      ctl = mine;
      const startedAt = Date.now();
      try {
        const data = await fetcher(mine.signal);
        if (!stopped && ctl === mine) setState({ data, error: null, updatedAt: Date.now() });
      } catch (error) {
        if (!stopped && ctl === mine && (error as Error).name !== 'AbortError') setState((s) => ({ ...s, error }));
      }
      if (!stopped && ctl === mine && everyMs !== null) {
        timer = setTimeout(() => void tick(), Math.max(everyMs / 4, everyMs - (Date.now() - startedAt)));
      }
    };
    kick.current = () => void tick();
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
      ctl?.abort();
    };
  }, deps);
  const reload = useCallback(() => kick.current(), []);
  return { ...state, reload };
}
