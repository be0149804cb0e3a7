import { useMemo } from 'preact/hooks';
import { MinuteChart, toSeconds } from '../chart.js';
import { bytes, duration, num } from '../format.js';
import { useDash, Widget } from '../parts.js';
import type { ActiveSessions } from '../types.js';
import type { Resource } from '../use-resource.js';

/** Rows shown per table: a wall screen has no scrolling, the busiest ones matter. */
const TOP = 8;

/**
 * The live-sessions widget (sessions/active, refetched on the live-sessions
 * stream): the summary, connects and disconnects per minute over the last
 * hour, and the busiest SSIDs and access points.
 */
export function LiveSessions(props: { res: Resource<ActiveSessions>; siteName(id: string | null): string }): preact.JSX.Element {
  const { t, locale } = useDash();
  const d = props.res.data;
  const chart = useMemo(() => d && {
    times: toSeconds(d.per_minute.map((m) => m.minute)),
    series: [
      { label: t('series_connects'), stroke: '#1d4ed8', values: d.per_minute.map((m) => m.connects) },
      { label: t('series_disconnects'), stroke: '#b10e1e', dash: [6, 4], values: d.per_minute.map((m) => m.disconnects) },
    ],
  }, [d, t]);
  const sum = (k: 'connects' | 'disconnects'): number => (d ? d.per_minute.reduce((a, m) => a + m[k], 0) : 0);
  return (
    <Widget title={t('w_live')} res={props.res} wide>
      {(data) => (
        <>
          <dl class="figures">
            <div><dt>{t('live_active')}</dt><dd>{num(locale, data.summary.active_sessions)}</dd></div>
            <div><dt>{t('live_logins')}</dt><dd>{num(locale, data.summary.logins_24h)}</dd></div>
            <div><dt>{t('live_bytes')}</dt><dd>{bytes(locale, data.summary.bytes_total_24h)}</dd></div>
            <div><dt>{t('live_avg')}</dt><dd>{duration(locale, t, data.summary.avg_duration_sec_24h)}</dd></div>
            <div><dt>{t('live_bw')}</dt><dd>{`${data.bandwidth_mbps.toLocaleString(locale, { maximumFractionDigits: 2 })} Mbps`}</dd></div>
          </dl>
          {chart && <MinuteChart locale={locale} title={t('live_chart')} summary={t('live_chart_sum', { a: sum('connects'), b: sum('disconnects') })}
            times={chart.times} series={chart.series} />}
          <SessionTable sessions={data.sessions} siteName={props.siteName} />
          <div class="split">
            <CountTable caption={t('by_ssid')} nameHeader={t('col_ssid')} siteName={props.siteName}
              rows={data.by_ssid.map((r) => ({ name: r.ssid, site: r.hotspot_id, active: r.active }))} />
            <CountTable caption={t('by_ap')} nameHeader={t('col_ap')} siteName={props.siteName}
              rows={data.by_ap.map((r) => ({ name: r.ap, site: r.hotspot_id, active: r.active }))} />
          </div>
        </>
      )}
    </Widget>
  );
}

/**
 * The first live sessions themselves (sessions/active's page, the spec's console columns that fit a tile). A value
 * the network never reported (an access point, a signal) shows as the catalogue's "n/a", never as null.
 */
function SessionTable(props: { sessions: ActiveSessions['sessions']; siteName(id: string): string }): preact.JSX.Element {
  const { t, locale } = useDash();
  const none = t('value_none');
  const { data, total } = props.sessions;
  return (
    <table class="sessions">
      <caption>{t('live_list', { n: num(locale, data.length), total: num(locale, total) })}</caption>
      <thead><tr><th>{t('col_device')}</th><th>{t('col_site')}</th><th>{t('col_ssid')}</th><th>{t('col_ap')}</th>
        <th class="num">{t('col_duration')}</th><th class="num">{t('col_signal')}</th></tr></thead>
      <tbody>
        {data.length === 0 && <tr><td colSpan={6}>{t('live_none')}</td></tr>}
        {data.map((s) => (
          <tr key={s.id}>
            <td class="mono">{s.mac_address}{s.ip_address ? <span class="meta"> · {s.ip_address}</span> : null}</td>
            <td>{props.siteName(s.hotspot_id)}</td><td>{s.ssid ?? none}</td><td>{s.ap_name ?? none}</td>
            <td class="num">{s.duration}</td>
            <td class="num">{s.signal_strength === null ? none : t('signal_dbm', { n: num(locale, s.signal_strength) })}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Live sessions per SSID or per access point: the busiest rows, each with its site. */
function CountTable(props: { caption: string; nameHeader: string; rows: { name: string; site: string; active: number }[]; siteName(id: string): string }): preact.JSX.Element {
  const { t, locale } = useDash();
  return (
    <table>
      <caption>{props.caption}</caption>
      <thead><tr><th>{props.nameHeader}</th><th>{t('col_site')}</th><th class="num">{t('col_active')}</th></tr></thead>
      <tbody>
        {props.rows.length === 0 && <tr><td colSpan={3}>{t('live_none')}</td></tr>}
        {props.rows.slice(0, TOP).map((r) => (
          <tr key={`${r.site}|${r.name}`}><td>{r.name}</td><td>{props.siteName(r.site)}</td><td class="num">{num(locale, r.active)}</td></tr>
        ))}
      </tbody>
    </table>
  );
}
