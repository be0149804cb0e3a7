import { useMemo } from 'preact/hooks';
import { MinuteChart, toSeconds } from '../chart.js';
import { num } from '../format.js';
import { useDash, Widget } from '../parts.js';
import type { SiteMetrics, Sites } from '../types.js';
import type { Resource } from '../use-resource.js';

/**
 * Each site's health, live sessions, NAS clients online and sign-in rates
 * (sites and sites/metrics, refetched on session and incident invalidations
 * and polled every 60 s), and the sign-ins and failures
 * of all sites per minute over the last hour. Health is a word as well as a
 * colour.
 */
export function SiteHealth(props: { sites: Resource<Sites>; metrics: Resource<SiteMetrics> }): preact.JSX.Element {
  const { t, locale } = useDash();
  const m = props.metrics.data;
  const byId = useMemo(() => new Map((m?.data ?? []).map((s) => [s.site_id, s])), [m]);
  const chart = useMemo(() => {
    const first = m?.data[0];
    if (!m || !first) return null;
    const total = (k: 'signins' | 'failures'): number[] => first.per_minute.map((_, i) => m.data.reduce((a, s) => a + (s.per_minute[i]?.[k] ?? 0), 0));
    return {
      times: toSeconds(first.per_minute.map((p) => p.minute)),
      series: [
        { label: t('series_signins'), stroke: '#00703c', values: total('signins') },
        { label: t('series_failures'), stroke: '#b10e1e', dash: [6, 4], values: total('failures') },
      ],
    };
  }, [m, t]);
  const sum = (vals: number[] | undefined): number => (vals ?? []).reduce((a, v) => a + v, 0);
  return (
    <Widget title={t('w_sites')} res={props.sites} wide>
      {(d) => d.data.length === 0 ? <p>{t('sites_none')}</p> : (
        <>
          <table>
            <thead><tr><th>{t('col_site')}</th><th>{t('col_health')}</th><th class="num">{t('col_active')}</th><th class="num">{t('col_nas')}</th>
              <th class="num">{t('col_signins_1m')}</th><th class="num">{t('col_failures_1m')}</th></tr></thead>
            <tbody>
              {d.data.map((s) => {
                const x = byId.get(s.id);
                return (
                  <tr key={s.id}>
                    <td>{s.name}{s.location && <span class="meta"> · {s.location}</span>}</td>
                    <td><span class={`health health-${s.health}`}>{t(`health_${s.health}`)}</span></td>
                    <td class="num">{num(locale, s.active_sessions)}</td>
                    <td class="num">{`${num(locale, s.nas_online)} / ${num(locale, s.nas_total)}`}</td>
                    <td class="num">{x ? num(locale, x.signins_1m) : ''}</td>
                    <td class="num">{x ? num(locale, x.failures_1m) : ''}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {chart && <MinuteChart locale={locale} title={t('sites_chart')} height={150} times={chart.times} series={chart.series}
            summary={t('sites_chart_sum', { a: sum(chart.series[0]?.values), b: sum(chart.series[1]?.values) })} />}
        </>
      )}
    </Widget>
  );
}
