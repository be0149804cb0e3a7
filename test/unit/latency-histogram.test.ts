import { describe, expect, it } from 'vitest';
import { figures } from '../../bench/json-lines.js';
import { HistogramSeries, LatencyHistogram } from '../../bench/latency-histogram.js';

/**
 * The storm's latency recording (bench/latency-histogram.ts): log buckets instead of every
 * value sorted at the end. Its percentiles must say what the sorted values say, to 1%, with
 * the same rank rule, and never less than the true value (a latency target read from it is
 * never flattered).
 */
describe('LatencyHistogram', () => {
  /** A deterministic spread from microseconds to seconds, with a long tail. */
  const sample = (n: number, seed: number): number[] => {
    let x = seed;
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
      const u = x / 2_147_483_648;
      out.push(u < 0.9 ? 0.05 + u * 20 : 20 + ((u - 0.9) * 10) ** 3 * 5_000);
    }
    return out;
  };

  it('gives each percentile within 1% above the exact one, n and max exactly, for spreads of several sizes', () => {
    for (const [n, seed] of [[1, 7], [7, 3], [100, 11], [10_000, 5], [250_000, 9]] as const) {
      const values = sample(n, seed);
      const h = new LatencyHistogram();
      for (const v of values) h.add(v);
      const exact = figures([...values]);
      const got = h.figures();
      expect(got.n).toBe(exact.n);
      expect(got.max).toBe(exact.max);
      for (const p of ['p50', 'p90', 'p99'] as const) {
        expect(got[p]!, `${p} of ${n}`).toBeGreaterThanOrEqual(exact[p]! - 0.001);
        expect(got[p]!, `${p} of ${n}`).toBeLessThanOrEqual(exact[p]! * 1.01 + 0.001);
      }
    }
  });

  it('is empty as figures() of no values is, and a series starts each second afresh while the run keeps everything', () => {
    expect(new LatencyHistogram().figures()).toEqual(figures([]));
    const s = new HistogramSeries();
    s.add(5); s.add(7);
    expect(s.take()).toMatchObject({ n: 2, max: 7 });
    expect(s.take()).toEqual(figures([]));
    s.add(100);
    expect(s.take()).toMatchObject({ n: 1, p50: 100, max: 100 });
    expect(s.run.figures()).toMatchObject({ n: 3, max: 100 });
  });
});
