import { api, ApiError, usePoll } from '../../shared/index.js';
import { TimeChart } from '../chart.js';
import { bytes, hms, useConsole } from '../ui.js';

/** The contract's limit: "Console session panel refresh: 5 s". */
export const LIVE_REFRESH_MS = 5_000;

/** The statistics endpoint's refusals that are not failures: a tenant without the dashboard package (403), a service without the endpoint (404). */
export function statsUnavailable(err: unknown): 'l_stats_unavailable' | 'l_stats_missing' | null {
  if (err instanceof ApiError && err.status === 403) return 'l_stats_unavailable';
  if (err instanceof ApiError && err.status === 404) return 'l_stats_missing';
  return null;
}

/**
 * The panel's summary cards, per-SSID counts, per-AP load, the connect and
 * disconnect rate of the last hour and the bandwidth, from the dashboard
 * API's sessions/active (docs/dashboard-api.md). Without it (403: not in the
 * tenant's package; 404: not offered) a sentence says so and the active count
 * comes from the session list.
 */
export function LiveStats(props: { fallbackActive: number | null }): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const stats = usePoll((signal) => api.sessions.stats(signal), LIVE_REFRESH_MS);
  const s = stats.data;
  const missing = s ? null : statsUnavailable(stats.error);
  const card = (label: string, value: string, what: string): preact.JSX.Element => (
    <div class="card"><div class="what">{label}</div><div class="value">{value}</div><div class="what">{what}</div></div>
  );
  const n = (x: number): string => x.toLocaleString(locale);
  const empty = <tr><td colSpan={2}>{t('none_yet')}</td></tr>;
  return (
    <section aria-label={t('l_card_active')}>
      <div class="cards">
        {card(t('l_card_active'), s ? n(s.summary.active_sessions) : props.fallbackActive === null ? '–' : n(props.fallbackActive), t('l_card_active_what'))}
        {s && card(t('l_card_logins'), n(s.summary.logins_24h), t('l_card_logins_what'))}
        {s && card(t('l_card_data'), bytes(s.summary.bytes_total_24h, locale), t('l_card_data_what'))}
        {s && card(t('l_card_avg'), hms(s.summary.avg_duration_sec_24h), t('l_card_avg_what'))}
        {s && card(t('l_card_bw'), `${s.bandwidth_mbps.toLocaleString(locale, { maximumFractionDigits: 1 })} Mbps`, t('l_card_bw_what'))}
      </div>
      {missing && <p class="notice" role="status">{t(missing)}</p>}
      {!s && !missing && stats.error ? <p class="error-summary" role="alert">{say(stats.error)}</p> : null}
      {s && (
        <div class="grid2">
          <div>
            <h2 id="ssid-title">{t('l_by_ssid')}</h2>
            <table aria-labelledby="ssid-title">
              <thead><tr><th scope="col">{t('l_col_ssid')}</th><th scope="col" class="num">{t('l_col_active')}</th></tr></thead>
              <tbody>{s.by_ssid.length === 0 ? empty : s.by_ssid.map((r) => <tr key={`${r.hotspot_id}/${r.ssid}`}><td>{r.ssid}</td><td class="num">{n(r.active)}</td></tr>)}</tbody>
            </table>
            <h2 id="ap-title">{t('l_by_ap')}</h2>
            <table aria-labelledby="ap-title">
              <thead><tr><th scope="col">{t('l_col_ap')}</th><th scope="col" class="num">{t('l_col_active')}</th></tr></thead>
              <tbody>{s.by_ap.length === 0 ? empty : s.by_ap.map((r) => <tr key={`${r.hotspot_id}/${r.ap}`}><td>{r.ap}</td><td class="num">{n(r.active)}</td></tr>)}</tbody>
            </table>
          </div>
          <div>
            <h2>{t('l_rate')}</h2>
            <TimeChart label={t('l_rate')} timeLabel={t('l_minute')} locale={locale} times={s.per_minute.map((m) => Date.parse(m.minute) / 1000)} series={[
              { label: t('l_connects'), color: '#00703c', values: s.per_minute.map((m) => m.connects) },
              { label: t('l_disconnects'), color: '#b10e1e', dash: [6, 4], values: s.per_minute.map((m) => m.disconnects) },
            ]} />
          </div>
        </div>
      )}
    </section>
  );
}
