import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  color: string;
  values: number[];
}

/**
 * A time-series chart drawn by uPlot. The canvas carries no text a screen
 * reader can use, so the figure is named by `label` (role img); the same
 * numbers are in a table next to the chart where a page needs them read.
 */
export function TimeChart(props: { label: string; locale: string; times: number[]; series: Series[]; height?: number }): preact.JSX.Element {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const shape = props.series.map((s) => `${s.label}:${s.color}`).join('|');

  useEffect(() => {
    const el = box.current!;
    const opts: uPlot.Options = {
      width: Math.max(300, el.clientWidth), height: props.height ?? 220,
      scales: { x: { time: true } },
      // Axis and legend times in the operator's language (uPlot's own templates are English).
      fmtDate: () => (d: Date) => d.toLocaleTimeString(props.locale, { hour: '2-digit', minute: '2-digit' }),
      series: [{}, ...props.series.map((s) => ({ label: s.label, stroke: s.color, width: 2, points: { show: false } }))],
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
  }, [shape, props.locale]);

  useEffect(() => {
    plot.current?.setData([props.times, ...props.series.map((s) => s.values)]);
  }, [props.times, props.series]);

  return <figure role="img" aria-label={props.label} class="chart"><div ref={box} /></figure>;
}
