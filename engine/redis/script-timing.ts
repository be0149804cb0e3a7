import type { RedisClient as Redis } from './redis-client.js';
import type { Metrics } from '../metrics.js';

/** The Redis scripts' latency histogram, by script (its command name, e.g. `admitDeviceV1`: a fixed set). */
export const SCRIPT_DURATION_METRIC = 'redis_script_duration_seconds';

/** Sub-millisecond to a second: a script holds Redis for its whole run, so the low buckets matter. */
const SCRIPT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

type Command = (this: Redis, ...args: unknown[]) => Promise<unknown>;

/**
 * Times every call of the named scripts on a connection (the command
 * defineCommand made, with its round trip: what the caller waits for),
 * failures included, auto-pipelining's wait for its batch too. Scripts a
 * caller queues in its own pipeline or MULTI are not timed: their calls are the pipeline's.
 */
export function timeScripts(redis: Redis, names: readonly string[], metrics: Metrics): void {
  metrics.histogram(SCRIPT_DURATION_METRIC, 'Redis script latency as its caller sees it (round trip included), by script', 'script', SCRIPT_BUCKETS);
  const commands = redis as unknown as Record<string, Command | undefined>;
  for (const name of names) {
    const run = commands[name];
    if (typeof run !== 'function') continue;
    const observe = (startMs: number): void => metrics.observe(SCRIPT_DURATION_METRIC, name, (performance.now() - startMs) / 1000);
    commands[name] = function timed(this: Redis, ...args: unknown[]): Promise<unknown> {
      // ioredis copies the connection's commands onto its pipelines (auto-pipelining sends every call
      // through one): there the call queues and returns the pipeline, and the outer call is the one timed.
      if (this !== redis) return run.apply(this, args);
      const startMs = performance.now();
      const p = run.apply(this, args);
      // Observed on either outcome; the caller still gets (and must handle) `p` itself.
      p.then(() => observe(startMs), () => observe(startMs));
      return p;
    };
  }
}
