import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** Counts per minute are whole: the y axis steps by whole numbers only. */
const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000];

export interface Series {
  label: string;
  /** Stroke colour; each series also has its own dash so colour is never the only difference. */
  stroke: string;
  dash?: number[];
  values: number[];
}

/**
 * A per-minute line chart drawn by uPlot. The chart is made once and fed new
 * data with setData (no rebuild per refresh, so a fast stream does not churn
 * canvases); it follows its box's width. The canvas is hidden from assistive
 * technology: `summary` says in words what it shows.
 */
export function MinuteChart(props: { title: string; summary: string; locale: string; times: number[]; series: Series[]; height?: number }): preact.JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = props.series.map((s) => s.label).join('|');

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth), height: props.height ?? 180,
      legend: { show: true, live: false },
      cursor: { show: false },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [{ stroke: '#0b0c0c', grid: { stroke: '#e1e1e1' }, values: (_u, ticks) => ticks.map((x) => timeOfDay(props.locale, x)) }, { stroke: '#0b0c0c', grid: { stroke: '#e1e1e1' }, size: 44, incrs: COUNT_STEPS }],
      series: [{}, ...props.series.map((s) => ({ label: s.label, stroke: s.stroke, width: 2, dash: s.dash, points: { show: false } }))],
    };
    const u = new uPlot(opts, [props.times, ...props.series.map((s) => s.values)], el);
    plot.current = u;
    const ro = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height: props.height ?? 180 }));
    ro.observe(el);
    return () => {
      ro.disconnect();
      u.destroy();
      plot.current = null;
    };
  }, [shape, props.locale]);

  useEffect(() => {
    plot.current?.setData([props.times, ...props.series.map((s) => s.values)]);
  }, [props.times, props.series]);

  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} aria-hidden="true" />
      <p class="meta">{props.summary}</p>
    </figure>
  );
}

/** An x tick in the operator's language ("14:05", "2:05 PM"), not uPlot's own English format. */
const timeOfDay = (locale: string, sec: number): string => new Date(sec * 1000).toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit' });

/** Minute starts (ISO) as uPlot's x values (seconds). */
export const toSeconds = (minutes: string[]): number[] => minutes.map((m) => Date.parse(m) / 1000);
