import { useState } from 'preact/hooks';
import { api, type VoucherImportReport } from '../../shared/index.js';
import { Field, OutcomeLine, useAction, useConsole } from '../ui.js';

const REASONS = new Set(['column_count', 'csv_malformed', 'code_invalid', 'max_uses_invalid', 'expires_at_invalid',
  'unknown_bandwidth_profile', 'notes_invalid', 'duplicate_in_file', 'code_exists']);

/** The vouchers page's CSV upload: posts the file to /api/v1/vouchers/import and shows the report (docs/vouchers-bulk.md). */
export function ImportCsv(props: { onDone(): void }): preact.JSX.Element {
  const { t } = useConsole();
  const act = useAction();
  const [file, setFile] = useState<File | null>(null);
  const [report, setReport] = useState<VoucherImportReport | null>(null);
  const submit = (e: Event): void => {
    e.preventDefault();
    if (!file) return;
    setReport(null);
    void act.run(async () => {
      const r = await api.vouchers.importCsv(file);
      setReport(r);
      props.onDone();
      return t('vi_result', { imported: r.imported, invalid: r.invalid });
    });
  };
  // A reason the page does not know (a newer service) is shown as the service's own sentence.
  const reason = (r: { reason: string; message: string }): string => (REASONS.has(r.reason) ? t(`vi_reason_${r.reason}` as 'vi_reason_code_exists') : r.message);
  return (
    <section aria-labelledby="import-title">
      <h2 id="import-title">{t('vi_title')}</h2>
      <form onSubmit={submit}>
        <Field id="import-file" label={t('vi_file')} hint={t('vi_file_hint')}>
          <input id="import-file" type="file" accept=".csv,text/csv" required aria-describedby="import-file-hint"
            onChange={(e) => setFile((e.currentTarget as HTMLInputElement).files?.[0] ?? null)} />
        </Field>
        <p><button type="submit" disabled={act.busy || !file}>{t('vi_submit')}</button></p>
      </form>
      <OutcomeLine outcome={act.outcome} />
      {report && <p class="meta">{t('vi_zone', { zone: report.time_zone })}</p>}
      {report && report.invalid_rows.length > 0 && (
        <table aria-labelledby="import-invalid-title">
          <caption id="import-invalid-title">{t('vi_invalid_title')}</caption>
          <thead><tr><th scope="col" class="num">{t('vi_col_line')}</th><th scope="col">{t('vi_col_reason')}</th></tr></thead>
          <tbody>
            {report.invalid_rows.map((r) => (
              <tr key={r.line}><td class="num">{r.line}</td><td>{reason(r)}</td></tr>
            ))}
          </tbody>
        </table>
      )}
      {report?.invalid_rows_truncated && <p class="meta">{t('vi_truncated', { shown: report.invalid_rows.length })}</p>}
    </section>
  );
}
