/**
 * A small Prometheus registry: labelled counters and gauges, rendered in the
 * text exposition format. Counters are plain numbers in a Map keyed by label
 * value, so an increment on the hot path allocates nothing after the first.
 */
export class Metrics {
  private readonly counters = new Map<string, { help: string; label: string; values: Map<string, number> }>();
  private readonly gauges = new Map<string, { help: string; read: () => number }>();
  /** Counters kept elsewhere (another object's running total), read when scraped. */
  private readonly readCounters = new Map<string, { help: string; read: () => number }>();

  /** `label` may name several labels, comma separated; their values are then given joined by labelValues(). */
  counter(name: string, help: string, label = ''): void {
    if (!this.counters.has(name)) this.counters.set(name, { help, label, values: new Map() });
  }

  inc(name: string, labelValue = '', by = 1): void {
    const c = this.counters.get(name);
    if (!c) return;
    c.values.set(labelValue, (c.values.get(labelValue) ?? 0) + by);
  }

  /** A counter's current value (0 when never raised). */
  value(name: string, labelValue = ''): number {
    return this.counters.get(name)?.values.get(labelValue) ?? 0;
  }

  /** A gauge read when /metrics is scraped. */
  gauge(name: string, help: string, read: () => number): void {
    this.gauges.set(name, { help, read });
  }

  /** A counter whose running total another object keeps, read when /metrics is scraped. */
  counterFrom(name: string, help: string, read: () => number): void {
    this.readCounters.set(name, { help, read });
  }

  render(): string {
    const out: string[] = [];
    for (const [name, c] of this.counters) {
      out.push(`# HELP ${name} ${c.help}`, `# TYPE ${name} counter`);
      if (c.values.size === 0) out.push(`${name} 0`);
      for (const [lv, n] of c.values) out.push(c.label ? `${name}{${renderLabels(c.label, lv)}} ${n}` : `${name} ${n}`);
    }
    for (const [kind, reads] of [['counter', this.readCounters], ['gauge', this.gauges]] as const) {
      for (const [name, g] of reads) {
        let v: number;
        try { v = g.read(); } catch { v = NaN; }
        out.push(`# HELP ${name} ${g.help}`, `# TYPE ${name} ${kind}`, `${name} ${v}`);
      }
    }
    return out.join('\n') + '\n';
  }
}

const LABEL_SEP = '\u001f';

/** The label value of a counter with several labels, in the order its `label` names them. */
export function labelValues(...values: string[]): string {
  return values.join(LABEL_SEP);
}

function renderLabels(names: string, value: string): string {
  if (!names.includes(',')) return `${names}="${escapeLabel(value)}"`;
  const vs = value.split(LABEL_SEP);
  return names.split(',').map((n, i) => `${n}="${escapeLabel(vs[i] ?? '')}"`).join(',');
}

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
