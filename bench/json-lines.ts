import { createWriteStream, type WriteStream } from 'node:fs';

/**
 * A bench's run as JSON lines, one per second, for load testers who chart a run:
 * `{"t": <second of the run>, "<series>": {"n", "p50", "p90", "p99", "max"}, "<counter>": n, ...}`,
 * every latency in ms, every counter what happened in that second only. The
 * summary line on stdout stays the bench's verdict; this file is beside it.
 */

/** Latencies (ms) of one kind of request within the current second. */
export class SecondSeries {
  private xs: number[] = [];
  /** Every value of the run, for the summary's percentiles, when `keepAll`. */
  readonly all: number[] = [];

  constructor(private readonly keepAll = false) {}

  add(ms: number): void {
    this.xs.push(ms);
    if (this.keepAll) this.all.push(ms);
  }

  /** This second's figures, and a new second begins. */
  take(): LatencyFigures {
    const f = figures(this.xs);
    this.xs = [];
    return f;
  }
}

export interface LatencyFigures { n: number; p50: number | null; p90: number | null; p99: number | null; max: number | null }

/** n and p50/p90/p99/max (ms, 3 decimals) of `values`; null when there are none. Sorts in place. */
export function figures(values: number[]): LatencyFigures {
  const s = values.sort((a, b) => a - b);
  const at = (p: number): number | null => (s.length ? Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 1000) / 1000 : null);
  return { n: s.length, p50: at(50), p90: at(90), p99: at(99), max: s.length ? Math.round(s[s.length - 1]! * 1000) / 1000 : null };
}

/** Counters of one second: incremented as things happen, taken and reset each second. */
export class SecondCounters {
  private c: Record<string, number> = {};

  add(name: string, n = 1): void {
    this.c[name] = (this.c[name] ?? 0) + n;
  }

  take(): Record<string, number> {
    const out = this.c;
    this.c = {};
    return out;
  }
}

/** The file of JSON lines, or nothing when no path was given; writes are streamed, never held. */
export class JsonLines {
  private readonly out: WriteStream | undefined;

  constructor(path: string | undefined) {
    this.out = path ? createWriteStream(path, { flags: 'w' }) : undefined;
  }

  write(record: Record<string, unknown>): void {
    this.out?.write(JSON.stringify(record) + '\n');
  }

  close(): Promise<void> {
    const out = this.out;
    if (!out) return Promise.resolve();
    return new Promise((resolve, reject) => { out.once('error', reject); out.end(() => resolve()); });
  }
}
