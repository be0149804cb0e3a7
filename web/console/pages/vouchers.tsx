import { useEffect, useState } from 'preact/hooks';
import { api, usePoll, type CodeFormat, type ConsoleVoucher, type ConsoleVoucherStatus } from '../../shared/index.js';
import { ConfirmDialog, Field, OutcomeLine, useAction, useConsole, val, when } from '../ui.js';
import { ExportButton } from './voucher-export.js';
import { PrintSheet } from './voucher-print.js';
import { ImportCsv } from './voucher-import.js';

const STATUSES: ConsoleVoucherStatus[] = ['created', 'activated', 'used', 'expired'];
/** The list shows up to this many of the newest matching vouchers; the search runs on the server, over all of them. */
const LIST_LIMIT = 500;
/** The search is sent once typing pauses this long, not on every key. */
const SEARCH_PAUSE_MS = 300;

/** A date input (YYYY-MM-DD) as the end of that day in UTC, or null for none. */
const endOfDay = (d: string): string | null => (d ? `${d}T23:59:59Z` : null);
const intOrNull = (s: string): number | null => (s.trim() === '' ? null : Number(s));
/** A datetime-local input (this computer's zone) as an ISO 8601 UTC timestamp, or null for none. */
const instantOrNull = (s: string): string | null => (s ? new Date(s).toISOString() : null);

/** Vouchers: create one, create a batch with a code format, list with a status filter and search, delete. */
export function VouchersPage(): preact.JSX.Element {
  const { t } = useConsole();
  const [status, setStatus] = useState<ConsoleVoucherStatus | ''>('');
  const [search, setSearch] = useState('');
  const [sent, setSent] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setSent(search.trim()), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [search]);
  const list = usePoll((signal) => api.vouchers.list({ status: status || undefined, q: sent.slice(0, 64) || undefined, limit: LIST_LIMIT }, signal), null, [status, sent]);
  return (
    <>
      <h1>{t('nav_vouchers')}</h1>
      <div class="grid2">
        <CreateOne onDone={list.reload} />
        <CreateBatch onDone={list.reload} />
      </div>
      <ImportCsv onDone={list.reload} />
      <VoucherList rows={list.data?.data ?? null} total={list.data?.total ?? 0} error={list.error} status={status}
        setStatus={setStatus} search={search} setSearch={setSearch} reload={list.reload} />
    </>
  );
}

function CreateOne(props: { onDone(): void }): preact.JSX.Element {
  const { t } = useConsole();
  const act = useAction();
  const [f, setF] = useState({ code: '', max_uses: '1', duration: '', expires: '', notes: '' });
  const submit = (e: Event): void => {
    e.preventDefault();
    void act.run(async () => {
      const v = await api.vouchers.createOne({
        code: f.code.trim() || undefined, max_uses: intOrNull(f.max_uses), duration_minutes: intOrNull(f.duration) ?? undefined,
        expires_at: endOfDay(f.expires), notes: f.notes || undefined,
      });
      props.onDone();
      return t('v_created_one', { code: v.code });
    });
  };
  return (
    <section aria-labelledby="one-title">
      <h2 id="one-title">{t('v_one_title')}</h2>
      <form onSubmit={submit}>
        <Field id="one-code" label={t('v_code')}><input id="one-code" value={f.code} onInput={(e) => setF({ ...f, code: val(e) })} /></Field>
        <Field id="one-max" label={t('v_max_uses')} hint={t('v_max_uses_hint')}>
          <input id="one-max" type="number" min={1} value={f.max_uses} aria-describedby="one-max-hint" onInput={(e) => setF({ ...f, max_uses: val(e) })} />
        </Field>
        <Field id="one-duration" label={t('v_duration')}>
          <input id="one-duration" type="number" min={1} value={f.duration} onInput={(e) => setF({ ...f, duration: val(e) })} />
        </Field>
        <Field id="one-expires" label={t('v_expires')}>
          <input id="one-expires" type="date" value={f.expires} onInput={(e) => setF({ ...f, expires: val(e) })} />
        </Field>
        <Field id="one-notes" label={t('v_notes')}><input id="one-notes" class="wide" value={f.notes} onInput={(e) => setF({ ...f, notes: val(e) })} /></Field>
        <p><button type="submit" disabled={act.busy}>{t('v_create_one')}</button></p>
      </form>
      <OutcomeLine outcome={act.outcome} />
    </section>
  );
}

function CreateBatch(props: { onDone(): void }): preact.JSX.Element {
  const { t } = useConsole();
  const act = useAction();
  const profiles = usePoll(() => api.vouchers.profiles(), null);
  const [f, setF] = useState({ count: '10', max_uses: '1', profile: '', expires: '', notes: '', from: '', until: '' });
  // The batch just made, for its download and print buttons.
  const [made, setMade] = useState<{ batch_id: string; count: number } | null>(null);
  // The service's 40-bit default lengths (engine/vouchers/code-generator.ts): 9 alphanumeric, 13 numeric; shorter is allowed.
  const [fmt, setFmt] = useState<Required<CodeFormat>>({ charset: 'alphanumeric', length: 9, group_size: 0, separator: '-', letter_case: 'upper', prefix: '' });
  const submit = (e: Event): void => {
    e.preventDefault();
    void act.run(async () => {
      setMade(null);
      const { vouchers, batch_id } = await api.vouchers.createBatch({
        count: Number(f.count), max_uses: intOrNull(f.max_uses), bandwidth_profile: f.profile || undefined,
        expires_at: endOfDay(f.expires), notes: f.notes || undefined, format: fmt,
        valid_from: instantOrNull(f.from), valid_until: instantOrNull(f.until),
      });
      props.onDone();
      if (batch_id) setMade({ batch_id, count: vouchers.length });
      return t('v_created_batch', { count: vouchers.length, first: vouchers[0]?.code ?? '', last: vouchers.at(-1)?.code ?? '' });
    });
  };
  return (
    <section aria-labelledby="batch-title">
      <h2 id="batch-title">{t('v_batch_title')}</h2>
      <form onSubmit={submit}>
        <div class="row">
          <Field id="b-count" label={t('v_count')}>
            <input id="b-count" type="number" min={1} max={10000} required value={f.count} onInput={(e) => setF({ ...f, count: val(e) })} />
          </Field>
          <Field id="b-max" label={t('v_max_uses')}>
            <input id="b-max" type="number" min={1} value={f.max_uses} onInput={(e) => setF({ ...f, max_uses: val(e) })} />
          </Field>
          <Field id="b-profile" label={t('v_profile')}>
            <select id="b-profile" value={f.profile} onChange={(e) => setF({ ...f, profile: val(e) })}>
              <option value="">{t('v_profile_none')}</option>
              {Object.keys(profiles.data ?? {}).map((p) => <option key={p} value={p}>{p}</option>)}
            </select>
          </Field>
          <Field id="b-expires" label={t('v_expires')}>
            <input id="b-expires" type="date" value={f.expires} onInput={(e) => setF({ ...f, expires: val(e) })} />
          </Field>
        </div>
        <Field id="b-notes" label={t('v_notes')}><input id="b-notes" class="wide" value={f.notes} onInput={(e) => setF({ ...f, notes: val(e) })} /></Field>
        <fieldset>
          <legend>{t('v_col_window')}</legend>
          <p class="hint" id="b-window-hint">{t('v_window_hint')}</p>
          <div class="row">
            <Field id="b-from" label={t('v_valid_from')}>
              <input id="b-from" type="datetime-local" value={f.from} aria-describedby="b-window-hint" onInput={(e) => setF({ ...f, from: val(e) })} />
            </Field>
            <Field id="b-until" label={t('v_valid_until')}>
              <input id="b-until" type="datetime-local" value={f.until} aria-describedby="b-window-hint" onInput={(e) => setF({ ...f, until: val(e) })} />
            </Field>
          </div>
        </fieldset>
        <fieldset>
          <legend>{t('v_format')}</legend>
          <div class="row">
            <Field id="f-charset" label={t('v_charset')}>
              <select id="f-charset" value={fmt.charset} onChange={(e) => {
                const charset = val(e) as 'alphanumeric' | 'numeric';
                setFmt({ ...fmt, charset, length: charset === 'numeric' ? 13 : 9 });
              }}>
                <option value="alphanumeric">{t('v_charset_alphanumeric')}</option>
                <option value="numeric">{t('v_charset_numeric')}</option>
              </select>
            </Field>
            <Field id="f-length" label={t('v_length')}>
              <input id="f-length" type="number" min={4} max={32} value={fmt.length} onInput={(e) => setFmt({ ...fmt, length: Number(val(e)) })} />
            </Field>
            <Field id="f-group" label={t('v_group')}>
              <input id="f-group" type="number" min={0} max={16} value={fmt.group_size} onInput={(e) => setFmt({ ...fmt, group_size: Number(val(e)) })} />
            </Field>
            <Field id="f-sep" label={t('v_separator')}>
              <select id="f-sep" value={fmt.separator} onChange={(e) => setFmt({ ...fmt, separator: val(e) })}>
                {['-', '_', '.', ' '].map((s) => <option key={s} value={s}>{s === ' ' ? '␠' : s}</option>)}
              </select>
            </Field>
            <Field id="f-case" label={t('v_case')}>
              <select id="f-case" value={fmt.letter_case} onChange={(e) => setFmt({ ...fmt, letter_case: val(e) as 'upper' | 'lower' })}>
                <option value="upper">{t('v_case_upper')}</option>
                <option value="lower">{t('v_case_lower')}</option>
              </select>
            </Field>
            <Field id="f-prefix" label={t('v_prefix')}>
              <input id="f-prefix" value={fmt.prefix} maxLength={16} onInput={(e) => setFmt({ ...fmt, prefix: val(e) })} />
            </Field>
          </div>
        </fieldset>
        <p><button type="submit" disabled={act.busy}>{t('v_create_batch')}</button></p>
      </form>
      <OutcomeLine outcome={act.outcome} />
      {made && <ExportButton key={made.batch_id} batchId={made.batch_id} />}
      {made && <PrintSheet idPrefix="batch-print" selection={{ batch_id: made.batch_id }} count={made.count} />}
    </section>
  );
}

function VoucherList(props: {
  rows: ConsoleVoucher[] | null; total: number; error: unknown; status: ConsoleVoucherStatus | ''; setStatus(s: ConsoleVoucherStatus | ''): void;
  search: string; setSearch(s: string): void; reload(): void;
}): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const [deleting, setDeleting] = useState<ConsoleVoucher | null>(null);
  // Ticked rows, by id, for the print button (only rows still shown count).
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const act = useAction();
  const rows = props.rows ?? [];
  const chosen = rows.filter((v) => picked.has(v.id)).map((v) => v.id);
  const toggle = (vid: string, on: boolean): void => {
    const next = new Set(picked);
    if (on) next.add(vid); else next.delete(vid);
    setPicked(next);
  };
  return (
    <section aria-labelledby="list-title">
      <h2 id="list-title">{t('v_list_title')}</h2>
      <div class="row">
        <Field id="v-status" label={t('v_status_filter')}>
          <select id="v-status" value={props.status} onChange={(e) => props.setStatus(val(e) as ConsoleVoucherStatus | '')}>
            <option value="">{t('v_status_all')}</option>
            {STATUSES.map((s) => <option key={s} value={s}>{t(`v_status_${s}`)}</option>)}
          </select>
        </Field>
        <Field id="v-search" label={t('v_search')}>
          <input id="v-search" type="search" maxLength={64} value={props.search} onInput={(e) => props.setSearch(val(e))} />
        </Field>
      </div>
      <p class="hint" id="v-export-hint">{t('v_export_filter_hint')}</p>
      <ExportButton status={props.status} q={props.search.trim()} hintId="v-export-hint" />
      {props.error ? <p class="error-summary" role="alert">{say(props.error)}</p> : null}
      <OutcomeLine outcome={act.outcome} />
      {props.rows && <p class="meta">{t('v_shown', { shown: rows.length, total: props.total })}</p>}
      {props.rows && rows.length === 0 ? <p>{t('none_yet')}</p> : (
        <table>
          <thead><tr>
            <th scope="col"><input type="checkbox" aria-label={t('v_select_all')} checked={rows.length > 0 && chosen.length === rows.length}
              onChange={(e) => setPicked(new Set((e.target as HTMLInputElement).checked ? rows.map((v) => v.id) : []))} /></th>
            <th scope="col">{t('v_col_code')}</th><th scope="col">{t('v_col_status')}</th><th scope="col" class="num">{t('v_col_uses')}</th>
            <th scope="col">{t('v_col_expires')}</th><th scope="col">{t('v_col_window')}</th><th scope="col">{t('v_col_created')}</th><th scope="col">{t('v_col_profile')}</th>
            <th scope="col">{t('v_col_notes')}</th><th scope="col">{t('v_col_actions')}</th>
          </tr></thead>
          <tbody>
            {rows.map((v) => (
              <tr key={v.id}>
                <td><input type="checkbox" aria-label={t('v_select', { code: v.code })} checked={picked.has(v.id)}
                  onChange={(e) => toggle(v.id, (e.target as HTMLInputElement).checked)} /></td>
                <td class="mono">{v.code}</td><td>{t(`v_status_${v.status}`)}</td>
                <td class="num">{v.current_uses} / {v.max_uses ?? t('unlimited')}</td>
                <td>{v.expires_at ? when(v.expires_at, locale) : t('never')}</td>
                <td>{v.valid_from || v.valid_until ? `${when(v.valid_from, locale)} – ${when(v.valid_until, locale)}` : ''}</td><td>{when(v.created_at, locale)}</td>
                <td>{v.bandwidth_profile ?? ''}</td><td>{v.notes ?? ''}</td>
                <td><button type="button" class="secondary" aria-label={t('v_delete', { code: v.code })} onClick={() => setDeleting(v)}>{t('v_delete_short')}</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {chosen.length > 0 && <p class="meta" role="status">{t('v_selected', { count: chosen.length })}</p>}
      <PrintSheet idPrefix="list-print" selection={chosen.length > 0 ? { ids: chosen } : null} count={chosen.length} />
      {deleting && (
        <ConfirmDialog title={t('v_delete_confirm', { code: deleting.code })} confirmLabel={t('v_delete', { code: deleting.code })} danger
          onCancel={() => setDeleting(null)}
          onConfirm={() => {
            const v = deleting;
            setDeleting(null);
            void act.run(async () => { await api.vouchers.remove(v.id); props.reload(); return t('v_deleted', { code: v.code }); });
          }} />
      )}
    </section>
  );
}
