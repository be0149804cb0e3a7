import type { LatencyFigures } from './json-lines.js';

/** Bucket i holds latencies in (STEP^(i-1), STEP^i] µs: 1% wide, so a percentile read from it is within 1% of the value. */
const STEP = 1.01;
const INV_LN_STEP = 1 / Math.log(STEP);
/** STEP^2100 µs is about 20 minutes: every latency a run can see. */
const BUCKETS = 2100;

/**
 * Latencies (ms) counted in logarithmic buckets: an add is a logarithm and an
 * increment, memory is fixed whatever the run's length, and the percentiles
 * come from a walk over the buckets, not from sorting every value (the storm
 * records several latencies per guest, a 100,000-guest run about half a
 * million). A percentile is the upper edge of its bucket (at most 1% above
 * the value, never above the maximum, which is kept exactly); rank as
 * `figures()` in json-lines.ts takes it: the value at floor(p/100 * n).
 */
export class LatencyHistogram {
  private readonly counts = new Uint32Array(BUCKETS);
  n = 0;
  max = 0;

  add(ms: number): void {
    const us = ms * 1000;
    const b = us <= 1 ? 0 : Math.min(BUCKETS - 1, Math.ceil(Math.log(us) * INV_LN_STEP));
    this.counts[b]!++;
    this.n++;
    if (ms > this.max) this.max = ms;
  }

  /** n and p50/p90/p99/max (ms, 3 decimals); null when empty. */
  figures(): LatencyFigures {
    if (this.n === 0) return { n: 0, p50: null, p90: null, p99: null, max: null };
    const ranks = [50, 90, 99].map((p) => Math.min(this.n - 1, Math.floor((p / 100) * this.n)));
    const at: number[] = [];
    let seen = 0;
    for (let b = 0; b < BUCKETS && at.length < ranks.length; b++) {
      seen += this.counts[b]!;
      while (at.length < ranks.length && seen > ranks[at.length]!) at.push(Math.min(this.max, STEP ** b / 1000));
    }
    const r = (x: number): number => Math.round(x * 1000) / 1000;
    return { n: this.n, p50: r(at[0]!), p90: r(at[1]!), p99: r(at[2]!), max: r(this.max) };
  }

  reset(): void {
    this.counts.fill(0);
    this.n = 0;
    this.max = 0;
  }
}

/** One kind of request's latencies: this second's (for the JSON lines) and the whole run's (for the summary). */
export class HistogramSeries {
  private readonly second = new LatencyHistogram();
  readonly run = new LatencyHistogram();

  add(ms: number): void {
    this.second.add(ms);
    this.run.add(ms);
  }

  /** This second's figures, and a new second begins. */
  take(): LatencyFigures {
    const f = this.second.figures();
    this.second.reset();
    return f;
  }
}
