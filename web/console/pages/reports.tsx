import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, loadSession, saveBlob, useI18n, usePoll } from '../../shared/index.js';
import type { ConsoleKey } from '../messages.js';
import { Field, OutcomeLine, useConsole, utcToday, val, type Outcome } from '../ui.js';
import { MAX_VENUES, PRESETS, reportsApi, type ConsoleReport, type Preset, type ReportQuery } from './reports-api.js';
import { ReportSections } from './reports-sections.js';
import './reports.css';

/** The API's refusals that are the operator's choice, not a failure: each as its own sentence. */
function refusal(err: unknown, venues: number): ConsoleKey | null {
  if (!(err instanceof ApiError)) return null;
  if (err.code === 'module_not_licensed') return venues > 1 ? 'r_refused_multi' : 'r_refused_module';
  if (err.code === 'report_too_many_venues') return 'r_too_many';
  return null;
}

/** A report's query as one string: the answer on screen is the one asked for only when the keys match. */
const keyOf = (q: ReportQuery): string => [q.preset, q.preset === 'custom' ? `${q.from}/${q.to}` : '', [...q.hotspots].sort().join(',')].join('|');

/**
 * Reports: one venue's (or, with the multi-venue module, up to ten venues')
 * figures over a preset period or two chosen days, from GET
 * /api/v1/reports/console, with the session CSV and the PDF report of the same
 * period. The sections keep their place while a new report loads (the old
 * figures stay, marked busy), so the page does not jump.
 */
export function ReportsPage(): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const multi = loadSession()?.tenant.modules.includes('multi_venue') ?? false;
  const hotspots = usePoll((signal) => api.hotspots.list(signal), null);
  const [query, setQuery] = useState<ReportQuery>({ preset: 'last_7_days', from: utcToday(), to: utcToday(), hotspots: [] });
  const list = hotspots.data?.data ?? [];
  useEffect(() => {
    if (query.hotspots.length === 0 && list[0]) setQuery((q) => ({ ...q, hotspots: [list[0]!.id] }));
  }, [list.length]);

  const key = keyOf(query);
  const ready = query.hotspots.length > 0 && (query.preset !== 'custom' || (query.from !== '' && query.to !== ''));
  const report = usePoll<{ key: string; data: ConsoleReport } | null>(
    async (signal) => (ready ? { key, data: await reportsApi.console(query, signal) } : null), null, [key, ready]);
  const current = report.data?.key === key ? report.data.data : null;
  // The last answer stays on screen while the next loads; after a refusal of this query it goes.
  const shown = current ?? (report.error ? null : report.data?.data ?? null);
  const loading = ready && !current && !report.error;
  const refused = current ? null : refusal(report.error, query.hotspots.length);

  const toggle = (id: string, on: boolean): void => {
    const rest = query.hotspots.filter((h) => h !== id);
    const next = on ? [...rest, id] : rest;
    if (next.length === 0 || next.length > MAX_VENUES) return;
    setQuery({ ...query, hotspots: next });
  };
  const full = query.hotspots.length >= MAX_VENUES;
  const names = (r: ConsoleReport): string => r.hotspots.map((h) => h.name).join(', ');
  const fmtDay = (d: string): string => new Date(`${d}T12:00:00Z`).toLocaleDateString(locale, { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });

  return (
    <>
      <h1>{t('r_title')}</h1>
      <section aria-label={t('r_choose')}>
        <form class="row" onSubmit={(e) => { e.preventDefault(); report.reload(); }}>
          <Field id="r-preset" label={t('r_preset')}>
            <select id="r-preset" value={query.preset} onChange={(e) => setQuery({ ...query, preset: val(e) as Preset })}>
              {PRESETS.map((p) => <option key={p} value={p}>{t(`r_p_${p}` as ConsoleKey)}</option>)}
            </select>
          </Field>
          {query.preset === 'custom' && (
            <>
              <Field id="r-from" label={t('r_from')}>
                <input id="r-from" type="date" required value={query.from} aria-describedby="r-dates-hint" onChange={(e) => setQuery({ ...query, from: val(e) })} />
              </Field>
              <Field id="r-to" label={t('r_to')}>
                <input id="r-to" type="date" required value={query.to} aria-describedby="r-dates-hint" onChange={(e) => setQuery({ ...query, to: val(e) })} />
              </Field>
              <p class="hint" id="r-dates-hint">{t('r_dates_hint')}</p>
            </>
          )}
        </form>
        <fieldset class="venues" aria-describedby="r-venues-hint">
          <legend>{t('r_venues')}</legend>
          <p class="hint" id="r-venues-hint">{multi ? t('r_venues_multi', { max: MAX_VENUES }) : t('r_venues_single')}</p>
          {hotspots.error ? <p class="error-summary" role="alert">{say(hotspots.error)}</p> : null}
          {hotspots.data && list.length === 0 && <p class="notice">{t('r_no_venues')}</p>}
          <div class="choices">
            {list.map((h) => {
              const on = query.hotspots.includes(h.id);
              return (
                <label key={h.id} class="inline">
                  <input type="checkbox" checked={on} disabled={!on && full} onChange={(e) => toggle(h.id, (e.target as HTMLInputElement).checked)} />
                  {h.name}
                </label>
              );
            })}
          </div>
          {full && <p class="hint">{t('r_venues_max', { max: MAX_VENUES })}</p>}
        </fieldset>
        <p role="status" class={loading ? 'meta stale' : 'meta'} aria-live="polite">
          {loading ? t('r_loading')
            : current ? t('r_showing', { from: fmtDay(current.period.from), to: fmtDay(current.period.to), days: current.period.days, zone: current.period.time_zone, venues: names(current) })
            : '\u00a0'}
        </p>
        {refused ? <p class="error-summary" role="alert">{t(refused)}</p>
          : report.error && !current ? <p class="error-summary" role="alert">{say(report.error)}</p> : null}
      </section>
      <Downloads report={current} hotspots={query.hotspots} all={list.map((h) => h.id)} />
      <ReportSections report={shown} busy={loading} />
    </>
  );
}

/** The CSV of the period's sessions and the PDF report; a service without either says so in words. */
function Downloads(props: { report: ConsoleReport | null; hotspots: string[]; all: string[] }): preact.JSX.Element {
  const { t, say } = useConsole();
  const { lang } = useI18n();
  const [outcome, setOutcome] = useState<Outcome>(null);
  const [busy, setBusy] = useState(false);
  const r = props.report;
  // The session CSV names one hotspot or none (all of the tenant's): several but not all cannot be asked for in one file.
  const csvIds = props.hotspots.length === 1 ? props.hotspots
    : props.hotspots.length === props.all.length && props.all.every((id) => props.hotspots.includes(id)) ? [] : null;
  const get = async (what: string, fetch: () => Promise<{ blob: Blob; filename: string }>): Promise<void> => {
    setBusy(true);
    setOutcome({ ok: true, text: t('r_preparing', { what }) });
    try {
      const { blob, filename } = await fetch();
      saveBlob(blob, filename);
      setOutcome({ ok: true, text: t('r_downloaded', { name: filename }) });
    } catch (err) {
      // A service without the route answers 404 for the path itself: not the operator's mistake, and the page goes on.
      const missing = err instanceof ApiError && err.status === 404 && err.code !== 'hotspot_not_found';
      setOutcome({ ok: false, text: missing ? t('r_export_missing') : say(err) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="r-dl-title">
      <h2 id="r-dl-title">{t('r_downloads')}</h2>
      <div class="actions">
        <button type="button" class="secondary" disabled={!r || busy || !csvIds} aria-describedby={csvIds ? undefined : 'r-csv-hint'}
          onClick={() => r && csvIds && void get(t('r_csv'), () => reportsApi.csv(r.period.from, r.period.to, csvIds))}>{t('r_csv')}</button>
        <button type="button" class="secondary" disabled={!r || busy} onClick={() => r && void get(t('r_pdf'), () => reportsApi.pdf(r.period.from, r.period.to, props.hotspots, lang))}>{t('r_pdf')}</button>
      </div>
      {!csvIds && <p class="hint" id="r-csv-hint">{t('r_csv_venues')}</p>}
      <OutcomeLine outcome={outcome} />
    </section>
  );
}
