import { api, saveBlob, type ConsoleVoucherStatus } from '../../shared/index.js';
import { OutcomeLine, useAction, useConsole } from '../ui.js';

/**
 * A labelled button that downloads vouchers as CSV (the service streams it;
 * GET /api/v1/vouchers/export): a batch just made, or whatever the list's
 * status filter and search select (all of them, not just the rows shown).
 */
export function ExportButton(props: { batchId?: string; status?: ConsoleVoucherStatus | ''; q?: string; hintId?: string }): preact.JSX.Element {
  const { t } = useConsole();
  const act = useAction();
  const click = (): void => {
    void act.run(async () => {
      const { blob, filename } = await api.vouchers.exportCsv(props.batchId
        ? { batch_id: props.batchId }
        : { status: props.status || undefined, q: props.q ? props.q.slice(0, 64) : undefined });
      saveBlob(blob, filename);
      return t('v_exported', { name: filename });
    });
  };
  return (
    <div class="export">
      <button type="button" class="secondary" disabled={act.busy} aria-describedby={props.hintId} onClick={click}>
        {act.busy ? t('v_exporting') : t(props.batchId ? 'v_export_batch' : 'v_export_filter')}
      </button>
      <OutcomeLine outcome={act.outcome} />
    </div>
  );
}
