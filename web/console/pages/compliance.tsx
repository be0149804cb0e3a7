import { useState } from 'preact/hooks';
import { api, saveBlob, usePoll } from '../../shared/index.js';
import { Field, OutcomeLine, useAction, useConsole, utcToday, val, when } from '../ui.js';

/** Compliance: the audit chain of a UTC day with its verdict, and the 5651 evidence pack of a range of days. */
export function CompliancePage(): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const [date, setDate] = useState(utcToday);
  const [shownDate, setShownDate] = useState(utcToday);
  const chain = usePoll((signal) => api.compliance.auditChain(shownDate, signal), null, [shownDate]);
  const [range, setRange] = useState({ from: utcToday(), to: utcToday() });
  const pack = useAction();
  const d = chain.data;
  return (
    <>
      <h1>{t('c_title')}</h1>
      <section aria-labelledby="chain-title">
        <h2 id="chain-title">{t('c_chain')}</h2>
        <form class="row" onSubmit={(e) => { e.preventDefault(); if (date === shownDate) chain.reload(); else setShownDate(date); }}>
          <Field id="c-date" label={t('c_date')}><input id="c-date" type="date" required value={date} onInput={(e) => setDate(val(e))} /></Field>
          <button type="submit">{t('c_show')}</button>
        </form>
        {chain.error ? <p class="error-summary" role="alert">{say(chain.error)}</p> : null}
        {d && (
          <p role="status" class={d.count > 0 && !d.chain_valid ? 'error-summary' : 'ok'}>
            {d.count === 0 ? t('c_empty', { date: d.date })
              : d.chain_valid ? t('c_valid', { date: d.date, count: d.count })
              : t('c_broken', { date: d.date, seq: d.first_break?.seq ?? '?', problem: d.first_break?.problem ?? '' })}
          </p>
        )}
        {d && d.records.length > 0 && (
          <table aria-labelledby="chain-title">
            <thead><tr>
              <th scope="col" class="num">{t('c_col_seq')}</th><th scope="col">{t('c_col_time')}</th><th scope="col">{t('c_col_event')}</th>
              <th scope="col">{t('c_col_mac')}</th><th scope="col">{t('c_col_user')}</th><th scope="col">{t('c_col_hash')}</th>
            </tr></thead>
            <tbody>{d.records.map((r) => (
              <tr key={r.seq}>
                <td class="num">{r.seq}</td><td>{when(r.timestamp, locale, true)}</td><td>{r.event_type}</td><td class="mono">{r.mac_address ?? ''}</td>
                <td>{r.username ?? ''}</td><td class="mono" title={r.hash_chain_value}>{r.hash_chain_value.slice(0, 19)}…</td>
              </tr>
            ))}</tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="pack-title">
        <h2 id="pack-title">{t('c_pack')}</h2>
        <form class="row" onSubmit={(e) => {
          e.preventDefault();
          void pack.run(async () => {
            const { blob, filename } = await api.compliance.evidencePack(range.from, range.to);
            saveBlob(blob, filename);
            return t('c_downloaded', { name: filename });
          });
        }}>
          <Field id="c-from" label={t('c_from')}><input id="c-from" type="date" required value={range.from} onInput={(e) => setRange({ ...range, from: val(e) })} /></Field>
          <Field id="c-to" label={t('c_to')}><input id="c-to" type="date" required value={range.to} onInput={(e) => setRange({ ...range, to: val(e) })} /></Field>
          <button type="submit" disabled={pack.busy}>{pack.busy ? t('c_downloading') : t('c_download')}</button>
        </form>
        <OutcomeLine outcome={pack.outcome} />
      </section>
    </>
  );
}
