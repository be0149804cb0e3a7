import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  color: string;
  values: number[];
  /** A dash pattern, so that a line is told apart by more than its colour (and seen where it runs under another). */
  dash?: number[];
}

/**
 * A time-series chart drawn by uPlot. The canvas carries no text a screen
 * reader can use, so the figure is named by `label` (role img); the same
 * numbers are in a table next to the chart where a page needs them read.
 */
export function TimeChart(props: { label: string; timeLabel: string; locale: string; times: number[]; series: Series[]; height?: number }): preact.JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = props.series.map((s) => `${s.label}:${s.color}:${s.dash?.join(',') ?? ''}`).join('|');

  useEffect(() => {
    const el = box.current!;
    const opts: uPlot.Options = {
      width: Math.max(300, el.clientWidth), height: props.height ?? 220,
      scales: { x: { time: true } },
      // Axis and legend times in the operator's language (uPlot's own templates are English).
      fmtDate: () => (d: Date) => d.toLocaleTimeString(props.locale, { hour: '2-digit', minute: '2-digit' }),
      // The x series names the legend's time in the operator's language too (uPlot's default is "Time").
      series: [{ label: props.timeLabel }, ...props.series.map((s) => ({ label: s.label, stroke: s.color, width: 2, dash: s.dash, points: { show: false } }))],
      axes: [{}, { size: 48 }],
      legend: { show: true },
    };
    plot.current = new uPlot(opts, [props.times, ...props.series.map((s) => s.values)], el);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: Math.max(300, el.clientWidth), height: props.height ?? 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape, props.locale, props.timeLabel]);

  useEffect(() => {
    plot.current?.setData([props.times, ...props.series.map((s) => s.values)]);
  }, [props.times, props.series]);

  return <figure role="img" aria-label={props.label} class="chart"><div ref={box} /></figure>;
}

export interface CategorySeries extends Series {
  /** Drawn as bars (else as a line with points); a line also gets a dash so colour is never the only difference. */
  bars?: boolean;
}

/** Whole-number steps for count axes and category ticks (a day, a week, a month of days). */
const WHOLE_STEPS = [1, 2, 3, 5, 7, 10, 14, 20, 30, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 1e6, 1e7];

/**
 * A chart over named categories (days, hours, sign-in methods) drawn by uPlot:
 * x is the category's index, its ticks and the legend show the category's
 * name. The box keeps its height while empty or loading so the page does not
 * jump. `slanted` tilts long category names (sign-in methods) so they do not
 * run into each other on a narrow screen; `empty` says in words that there is
 * nothing to draw; `steps` are the tick intervals allowed (hours: 1, 2, 3, 4, 6, 12). The canvas is hidden from assistive technology: `label` names the
 * figure and the same numbers are in a table beside it.
 */
export function CategoryChart(props: { label: string; categories: string[]; series: CategorySeries[]; height?: number; slanted?: boolean; empty?: string | null; steps?: number[] }): preact.JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const names = useRef(props.categories);
  names.current = props.categories;
  const height = props.height ?? 220;
  const shape = props.series.map((s) => `${s.label}:${s.color}:${s.bars ? 'b' : 'l'}`).join('|');
  const data = (): uPlot.AlignedData => [props.categories.map((_c, i) => i), ...props.series.map((s) => s.values)];

  useEffect(() => {
    const el = box.current!;
    const name = (i: number): string => (Number.isInteger(i) ? names.current[i] ?? '' : '');
    const bars = uPlot.paths.bars!({ size: [0.7, 48] });
    const opts: uPlot.Options = {
      width: Math.max(240, el.clientWidth), height,
      scales: {
        x: { time: false, range: () => [-0.5, Math.max(0, names.current.length - 1) + 0.5] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      series: [
        { label: '', value: (_u, v) => name(v) },
        ...props.series.map((s) => s.bars
          ? { label: s.label, stroke: s.color, fill: `${s.color}cc`, width: 1, paths: bars, points: { show: false } }
          : { label: s.label, stroke: s.color, width: 2, dash: s.dash ?? [8, 4], points: { show: true, size: 5 } }),
      ],
      axes: [
        { stroke: '#0b0c0c', grid: { show: false }, space: props.slanted ? 16 : 44, incrs: props.steps ?? WHOLE_STEPS, values: (_u, ticks) => ticks.map(name),
          ...(props.slanted ? { rotate: 30, size: 64 } : {}) },
        { stroke: '#0b0c0c', grid: { stroke: '#e1e1e1' }, size: 52, incrs: WHOLE_STEPS },
      ],
      legend: { show: true, live: false },
    };
    const u = new uPlot(opts, data(), el);
    plot.current = u;
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(240, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(data());
  }, [props.categories, props.series]);

  return <figure class="chart category" aria-label={props.label}><figcaption class="meta">{props.label}{props.empty ? <strong class="empty"> {props.empty}</strong> : null}</figcaption><div ref={box} aria-hidden="true" style={{ minHeight: `${height + 40}px` }} /></figure>;
}
