import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client';

/**
 * Every metric this service defines is named `guestwifi_<name>`; call sites
 * give `<name>` only. The default process metrics (process_cpu_seconds_total,
 * nodejs_heap_size_used_bytes, ...) keep their usual names, which dashboards
 * and the contract expect as they are.
 */
export const METRIC_PREFIX = 'guestwifi_';

/** Latency buckets in seconds: 1 ms to 10 s, fine where the targets are (RADIUS in ms, /overview at 0.2 and 0.5 s). */
export const SECONDS_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10];

/** A registry's values as plain data (prom-client's getMetricsAsJSON): what a worker thread posts to the main thread. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

type Labels = Record<string, string>;

interface CounterCell {
  names: string[];
  /** Running totals by label value (labelValues() joined); the hot path touches only this Map. */
  values: Map<string, number>;
  /** What the prom-client counter was last given, so a scrape adds only the difference. */
  pushed: Map<string, number>;
  labels: Map<string, Labels>;
}

/** One label value's observations: counts per bucket (not cumulative; the last slot is past every bound), sum, count. */
interface Observed {
  labels: Labels;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram counted here and shown to prom-client's registry as its `get()`
 * data, the shape prom-client's own Histogram gives (buckets cumulative with
 * `le` first, then `_sum` and `_count`), so scrapes, worker snapshots and
 * their aggregation are unchanged. Why not prom-client's Histogram: its
 * observe() validates and hashes the label object on every call, about 0.6 µs
 * against 0.03 here, a Map lookup and an array increment, on every RADIUS
 * request, HTTP request and script call (bench/results/radius-vs-freeradius.md).
 */
class HistogramCell {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly observed = new Map<string, Observed>();
  readonly labels = new Map<string, Labels>();

  constructor(readonly name: string, readonly help: string, readonly names: string[], private readonly bounds: readonly number[]) {}

  observe(labelValue: string, value: number): void {
    let o = this.observed.get(labelValue);
    if (!o) {
      o = { labels: labelsOf(this, labelValue), buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
      this.observed.set(labelValue, o);
    }
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i++;
    o.buckets[i]!++;
    o.sum += value;
    o.count++;
  }

  get(): { name: string; help: string; type: string; aggregator: string; values: { labels: Record<string, string | number>; value: number; metricName: string }[] } {
    const values = [];
    for (const o of this.observed.values()) {
      let below = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        below += o.buckets[i]!;
        values.push({ labels: { le: this.bounds[i]!, ...o.labels }, value: below, metricName: `${this.name}_bucket` });
      }
      values.push({ labels: { le: '+Inf', ...o.labels }, value: o.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...o.labels }, value: o.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...o.labels }, value: o.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    this.observed.clear();
  }
}

/**
 * The service's Prometheus registry, built on prom-client. The call-site API
 * is small and string-keyed so that code registers a metric once and then
 * counts with `inc(name, labelValue)`: an increment is a Map update (no
 * allocation after a label value's first use); prom-client's counter is
 * brought up to date when /metrics is scraped (its `collect`).
 *
 * Worker threads keep a Metrics of their own and post `snapshot()` to the
 * main thread, which `absorb`s it; /metrics then sums the main thread's
 * registry and every thread's last snapshot with prom-client's
 * AggregatorRegistry (the way it merges a cluster's workers). A thread that
 * is restarted is `retire`d first, so its counters and histograms keep
 * counting from where the dead thread left them.
 *
 * Tenant ids are never label values: a tenant must not see another in a
 * shared scrape, and a label per tenant is a series per tenant
 * (docs/observability.md).
 */
export class Metrics {
  private readonly registry = new Registry();
  private readonly counters = new Map<string, CounterCell>();
  private readonly histograms = new Map<string, HistogramCell>();
  private readonly absorbed = new Map<string, MetricsSnapshot>();
  private retired: MetricsSnapshot[] = [];

  /** `processMetrics`: also prom-client's default process and Node.js metrics (one registry per process should). */
  constructor(opts: { processMetrics?: boolean } = {}) {
    if (opts.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** A counter. `label` may name several labels, comma separated; their values are then given joined by labelValues(). */
  counter(name: string, help: string, label = ''): void {
    if (this.counters.has(name)) return;
    const cell: CounterCell = { names: splitNames(label), values: new Map(), pushed: new Map(), labels: new Map() };
    this.counters.set(name, cell);
    this.replace(new Counter({
      name: METRIC_PREFIX + name, help, labelNames: cell.names, registers: [],
      collect() {
        for (const [lv, n] of cell.values) {
          const before = cell.pushed.get(lv) ?? 0;
          if (n === before) continue;
          this.inc(labelsOf(cell, lv), n - before);
          cell.pushed.set(lv, n);
        }
      },
    }));
  }

  inc(name: string, labelValue = '', by = 1): void {
    const c = this.counters.get(name);
    if (!c || !(by > 0)) return;
    c.values.set(labelValue, (c.values.get(labelValue) ?? 0) + by);
  }

  /** A counter's current value in this thread (0 when never raised). */
  value(name: string, labelValue = ''): number {
    return this.counters.get(name)?.values.get(labelValue) ?? 0;
  }

  /** A gauge read when /metrics is scraped. A read that throws shows NaN. */
  gauge(name: string, help: string, read: () => number): void {
    this.replace(new Gauge({
      name: METRIC_PREFIX + name, help, registers: [],
      collect() {
        let v: number;
        try { v = read(); } catch { v = NaN; }
        this.set(v);
      },
    }));
  }

  /** A counter whose running total another object keeps, read when /metrics is scraped. */
  counterFrom(name: string, help: string, read: () => number): void {
    let last = 0;
    this.replace(new Counter({
      name: METRIC_PREFIX + name, help, registers: [],
      collect() {
        let v: number;
        try { v = read(); } catch { return; }
        if (!Number.isFinite(v)) return;
        // The object counting was replaced (a restart): a counter reset, which rate() understands.
        if (v < last) { this.reset(); last = 0; }
        if (v > last) this.inc(v - last);
        last = v;
      },
    }));
  }

  /** A histogram (latencies in seconds by default). `label` as for counter(). Registered once; later calls keep the first. */
  histogram(name: string, help: string, label = '', buckets: readonly number[] = SECONDS_BUCKETS): void {
    if (this.histograms.has(name)) return;
    const cell = new HistogramCell(METRIC_PREFIX + name, help, splitNames(label), [...buckets].sort((a, b) => a - b));
    this.replace(cell as unknown as Metric);
    this.histograms.set(name, cell);
  }

  /** One observation; `labelValue` as for inc(). Unknown names are ignored, as inc() ignores them. */
  observe(name: string, labelValue: string, value: number): void {
    if (!Number.isFinite(value)) return;
    this.histograms.get(name)?.observe(labelValue, value);
  }

  /** The Prometheus text exposition (what /metrics answers), this thread's registry plus what worker threads posted. */
  async render(): Promise<string> {
    if (this.absorbed.size === 0 && this.retired.length === 0) return this.registry.metrics();
    const own = await this.registry.getMetricsAsJSON();
    const merged = AggregatorRegistry.aggregate([own, ...this.retired, ...this.absorbed.values()]);
    const text = await merged.metrics();
    // Restarts are rare, but a long-lived process should not keep one snapshot per restart.
    if (this.retired.length > 8) this.retired = [onlyCumulative(await AggregatorRegistry.aggregate(this.retired).getMetricsAsJSON())];
    return text;
  }

  /** The media type of render()'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** This registry as plain data, for a worker thread to post to the main thread. */
  snapshot(): Promise<MetricsSnapshot> {
    return this.registry.getMetricsAsJSON();
  }

  /** A worker thread's latest snapshot (it replaces the one before from the same `source`). */
  absorb(source: string, snapshot: MetricsSnapshot): void {
    this.absorbed.set(source, snapshot);
  }

  /**
   * The thread behind `source` ended: its counters and histograms stay
   * counted as they were last posted (its gauges go), and its successor's
   * snapshots add to them.
   */
  retire(source: string): void {
    const last = this.absorbed.get(source);
    if (!last) return;
    this.absorbed.delete(source);
    this.retired.push(onlyCumulative(last));
  }

  private replace(metric: Counter | Gauge | Metric): void {
    const name = (metric as unknown as { name: string }).name;
    this.registry.removeSingleMetric(name);
    this.registry.registerMetric(metric);
  }
}

const LABEL_SEP = '\u001f';

/** The label value of a metric with several labels, in the order its `label` names them. */
export function labelValues(...values: string[]): string {
  return values.join(LABEL_SEP);
}

function splitNames(label: string): string[] {
  return label === '' ? [] : label.split(',').map((n) => n.trim());
}

/** A label value's prom-client labels object, made once per distinct value. */
function labelsOf(cell: { names: string[]; labels: Map<string, Labels> }, labelValue: string): Labels {
  let labels = cell.labels.get(labelValue);
  if (!labels) {
    labels = {};
    if (cell.names.length === 1) labels[cell.names[0]!] = labelValue;
    else if (cell.names.length > 1) {
      const vs = labelValue.split(LABEL_SEP);
      cell.names.forEach((n, i) => { labels![n] = vs[i] ?? ''; });
    }
    cell.labels.set(labelValue, labels);
  }
  return labels;
}

function onlyCumulative(s: MetricsSnapshot): MetricsSnapshot {
  // prom-client's types say an enum; what getMetricsAsJSON gives is the exposition's word ('counter', ...).
  return s.filter((m) => { const type = m.type as unknown as string; return type === 'counter' || type === 'histogram'; });
}
