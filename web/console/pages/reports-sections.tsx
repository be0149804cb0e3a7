import { CategoryChart } from '../chart.js';
import type { ConsoleKey } from '../messages.js';
import { bytes, useConsole, when } from '../ui.js';
import { DEVICE_TYPES, METHODS, type ConsoleReport } from './reports-api.js';

/** The chart colours (7:1 against white is not needed for a filled area, 3:1 is; each is far above). */
const BLUE = '#1d4ed8';
const GREEN = '#00703c';
const DARK = '#0b0c0c';
/** Hour ticks that divide the day: every 3 hours on a phone, every 2 or 1 where there is room. */
const HOUR_STEPS = [1, 2, 3, 4, 6, 12];

/**
 * The sections of a report: KPI cards, days and hours, SSIDs, top devices,
 * sign-in methods, weekly guest analytics and the link to the 5651 summary.
 * `report` null (before the first answer, after a refusal) draws the same
 * boxes with dashes, so nothing moves when the figures arrive; `busy` marks
 * the figures on screen as those of the previous choice.
 */
export function ReportSections(props: { report: ConsoleReport | null; busy: boolean }): preact.JSX.Element {
  const { t, locale } = useConsole();
  const r = props.report;
  const n = (x: number): string => x.toLocaleString(locale);
  const pct = (x: number | null): string => (x === null ? '–' : x.toLocaleString(locale, { style: 'percent', maximumFractionDigits: 1 }));
  const mins = (x: number): string => t('r_minutes', { n: x.toLocaleString(locale, { maximumFractionDigits: 1 }) });
  const dash = '–';
  const card = (id: string, label: string, value: string, what: string): preact.JSX.Element => (
    <div class="card" data-kpi={id}><div class="what">{label}</div><div class="value">{value}</div><div class="what">{what}</div></div>
  );
  const s = r?.summary;
  const day = (d: string, long = false): string => new Date(`${d}T12:00:00Z`).toLocaleDateString(locale, long
    ? { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' } : { day: 'numeric', month: 'short', timeZone: 'UTC' });
  const hour = (h: number): string => `${String(h).padStart(2, '0')}:00`;
  const empty = (cols: number): preact.JSX.Element => <tr><td colSpan={cols}>{r ? t('r_empty_table') : '\u00a0'}</td></tr>;
  const none = r !== null && r.summary.total_sessions === 0;
  const methodName = (m: string): string => ((METHODS as readonly string[]).includes(m) ? t(`s_method_${m}` as ConsoleKey) : m);
  // The chart's ticks take short names (the table beside it has the full ones, in the same order).
  const shortName = (m: string): string => ((METHODS as readonly string[]).includes(m) ? t(`r_short_${m}` as ConsoleKey) : m);
  const g = r?.guests;
  const devicesTotal = g ? DEVICE_TYPES.reduce((a, k) => a + g.device_types[k], 0) : 0;

  return (
    <div class={props.busy ? 'report busy' : 'report'} aria-busy={props.busy}>
      <section aria-labelledby="r-kpi-title">
        <h2 id="r-kpi-title">{t('r_kpis')}</h2>
        {none && <p class="notice" role="status">{t('r_empty')}</p>}
        <div class="cards">
          {card('unique_devices', t('r_k_devices'), s ? n(s.unique_devices) : dash, t('r_k_over'))}
          {card('total_sessions', t('r_k_sessions'), s ? n(s.total_sessions) : dash, t('r_k_over'))}
          {card('signins_succeeded', t('r_k_ok'), s ? n(s.signins_succeeded) : dash, t('r_k_over'))}
          {card('signins_failed', t('r_k_failed'), s ? n(s.signins_failed) : dash, t('r_k_over'))}
          {card('bytes_in', t('r_k_in'), s ? bytes(s.bytes_in, locale) : dash, t('r_k_over'))}
          {card('bytes_out', t('r_k_out'), s ? bytes(s.bytes_out, locale) : dash, t('r_k_over'))}
          {card('peak_hour', t('r_k_peak'), s ? s.peak_hour ?? t('r_none_peak') : dash, t('r_k_peak_what'))}
          {card('avg_duration', t('r_k_avg'), s ? mins(s.avg_duration_minutes) : dash, t('r_k_over'))}
        </div>
      </section>

      <div class="grid2">
        <section aria-labelledby="r-daily-title">
          <h2 id="r-daily-title">{t('r_daily')}</h2>
          <CategoryChart label={t('r_daily_chart')} empty={none ? t('r_empty') : null} categories={r ? r.daily.map((d) => day(d.date)) : []} series={[
            { label: t('r_col_sessions'), color: BLUE, values: r ? r.daily.map((d) => d.sessions) : [], bars: true },
            { label: t('r_col_devices'), color: DARK, values: r ? r.daily.map((d) => d.unique_devices) : [] },
          ]} />
          <details>
            <summary>{t('r_daily_table')}</summary>
            <div class="table-wrap" tabIndex={0} role="region" aria-label={t('r_daily_table')}><table aria-label={t('r_daily_table')}>
              <thead><tr><th scope="col">{t('r_col_date')}</th><th scope="col" class="num">{t('r_col_sessions')}</th><th scope="col" class="num">{t('r_col_devices')}</th>
                <th scope="col" class="num">{t('r_col_failed')}</th><th scope="col" class="num">{t('r_col_data')}</th></tr></thead>
              <tbody>{r?.daily.map((d) => (
                <tr key={d.date}><td>{day(d.date, true)}</td><td class="num">{n(d.sessions)}</td><td class="num">{n(d.unique_devices)}</td>
                  <td class="num">{n(d.signins_failed)}</td><td class="num">{bytes(d.bytes_in, locale)} / {bytes(d.bytes_out, locale)}</td></tr>
              ))}</tbody>
            </table></div>
          </details>
        </section>
        <section aria-labelledby="r-hours-title">
          <h2 id="r-hours-title">{t('r_hours')}</h2>
          <CategoryChart label={t('r_hours_chart')} empty={none ? t('r_empty') : null} steps={HOUR_STEPS} categories={r ? r.hours.map((h) => hour(h.hour)) : []} series={[
            { label: t('r_col_sessions'), color: GREEN, values: r ? r.hours.map((h) => h.sessions) : [], bars: true },
          ]} />
          <details>
            <summary>{t('r_hours_table')}</summary>
            <div class="table-wrap" tabIndex={0} role="region" aria-label={t('r_hours_table')}><table aria-label={t('r_hours_table')}>
              <thead><tr><th scope="col">{t('r_col_hour')}</th><th scope="col" class="num">{t('r_col_sessions')}</th></tr></thead>
              <tbody>{r?.hours.map((h) => <tr key={h.hour}><td>{hour(h.hour)}</td><td class="num">{n(h.sessions)}</td></tr>)}</tbody>
            </table></div>
          </details>
        </section>
      </div>

      <div class="grid2">
        <section aria-labelledby="r-ssid-title">
          <h2 id="r-ssid-title">{t('r_ssids')}</h2>
          <table aria-labelledby="r-ssid-title">
            <thead><tr><th scope="col">{t('r_col_ssid')}</th><th scope="col" class="num">{t('r_col_sessions')}</th></tr></thead>
            <tbody>{!r || r.ssids.length === 0 ? empty(2) : r.ssids.map((x) => (
              <tr key={x.ssid}><td>{x.ssid === '' ? t('r_no_ssid') : x.ssid}</td><td class="num">{n(x.sessions)}</td></tr>
            ))}</tbody>
          </table>
        </section>
        <section aria-labelledby="r-top-title">
          <h2 id="r-top-title">{t('r_top')}</h2>
          <p class="hint">{t('r_top_hint')}</p>
          <div class="table-wrap" tabIndex={0} role="region" aria-label={t('r_top')}><table aria-labelledby="r-top-title">
            <thead><tr><th scope="col">{t('r_col_mac')}</th><th scope="col" class="num">{t('r_col_sessions')}</th><th scope="col">{t('r_col_last')}</th></tr></thead>
            <tbody>{!r || r.top_devices.length === 0 ? empty(3) : r.top_devices.map((d, i) => (
              // Masked MACs can coincide (two devices differing only in the hidden octets): the position keys the row.
              <tr key={i}><td class="mono">{d.mac}</td><td class="num">{n(d.sessions)}</td><td>{when(d.last_seen, locale)}</td></tr>
            ))}</tbody>
          </table></div>
        </section>
      </div>

      <section aria-labelledby="r-methods-title">
        <h2 id="r-methods-title">{t('r_methods')}</h2>
        <div class="grid2">
          <div class="table-wrap" tabIndex={0} role="region" aria-label={t('r_methods')}><table aria-labelledby="r-methods-title">
            <thead><tr><th scope="col">{t('r_col_method')}</th><th scope="col" class="num">{t('r_col_sessions')}</th><th scope="col" class="num">{t('r_col_attempts')}</th>
              <th scope="col" class="num">{t('r_col_ok')}</th><th scope="col" class="num">{t('r_col_failed')}</th><th scope="col" class="num">{t('r_col_rate')}</th></tr></thead>
            <tbody>{(r?.methods ?? METHODS.map((method) => ({ method, sessions: null, attempts: null, succeeded: null, failed: null, success_rate: null }))).map((m) => (
              <tr key={m.method}><th scope="row">{methodName(m.method)}</th><td class="num">{m.sessions === null ? dash : n(m.sessions)}</td>
                <td class="num">{m.attempts === null ? dash : n(m.attempts)}</td><td class="num">{m.succeeded === null ? dash : n(m.succeeded)}</td>
                <td class="num">{m.failed === null ? dash : n(m.failed)}</td><td class="num">{pct(m.success_rate)}</td></tr>
            ))}</tbody>
          </table></div>
          <CategoryChart label={t('r_methods_chart')} height={200} slanted empty={none ? t('r_empty') : null} categories={(r?.methods ?? []).map((m) => shortName(m.method))} series={[
            { label: t('r_col_sessions'), color: BLUE, values: (r?.methods ?? []).map((m) => m.sessions), bars: true },
          ]} />
        </div>
      </section>

      <section aria-labelledby="r-guests-title">
        <h2 id="r-guests-title">{t('r_guests')}</h2>
        <p class="hint">{t('r_g_count_hint')}</p>
        <div class="cards">
          {card('visitors', t('r_g_visitors'), g ? n(g.visitors) : dash, t('r_g_visitors_what'))}
          {card('returning_rate', t('r_g_returning'), g ? pct(g.returning_rate) : dash, g ? t('r_g_returning_what', { n: n(g.returning_visitors) }) : t('r_k_over'))}
          {card('avg_dwell', t('r_g_dwell'), g ? mins(g.avg_dwell_minutes) : dash, t('r_g_dwell_what'))}
        </div>
        <div class="grid2">
          <div class="table-wrap" tabIndex={0} role="region" aria-label={t('r_guests')}><table aria-label={t('r_guests')}>
            <thead><tr><th scope="col">{t('r_col_week')}</th><th scope="col" class="num">{t('r_g_visitors')}</th><th scope="col" class="num">{t('r_col_returning')}</th>
              <th scope="col" class="num">{t('r_col_dwell')}</th></tr></thead>
            <tbody>{!g || g.weeks.length === 0 ? empty(4) : g.weeks.map((w) => (
              <tr key={w.week_start}><td>{day(w.week_start, true)}</td><td class="num">{n(w.visitors)}</td><td class="num">{pct(w.returning_rate)}</td><td class="num">{mins(w.avg_dwell_minutes)}</td></tr>
            ))}</tbody>
          </table></div>
          <table aria-label={t('r_devices')}>
            <thead><tr><th scope="col">{t('r_col_type')}</th><th scope="col" class="num">{t('r_col_sessions')}</th><th scope="col" class="num">{t('r_col_share')}</th></tr></thead>
            <tbody>{DEVICE_TYPES.map((k) => (
              <tr key={k}><th scope="row">{t(`r_dt_${k}` as ConsoleKey)}</th><td class="num">{g ? n(g.device_types[k]) : dash}</td>
                <td class="num">{g ? pct(devicesTotal === 0 ? null : g.device_types[k] / devicesTotal) : dash}</td></tr>
            ))}</tbody>
          </table>
        </div>
      </section>

      <p class="notice">{t('r_log_summary')} <a href="#/compliance">{t('r_log_link')}</a>.</p>
    </div>
  );
}
