import { useState } from 'preact/hooks';
import { api, saveBlob, usePoll } from '../../shared/index.js';
import { Field, OutcomeLine, useAction, useConsole, val } from '../ui.js';

/** Which vouchers a sheet prints: a batch just made, or rows ticked in the list. */
export type PrintSelection = { batch_id: string } | { ids: string[] };

/**
 * The print form: layout (A4 grid or 80 mm receipt roll), the sheet's language,
 * an optional message on every voucher, and the hotspot whose portal the QR
 * codes open when the tenant has several. Downloads the PDF the service draws.
 */
export function PrintSheet(props: { idPrefix: string; selection: PrintSelection | null; count: number }): preact.JSX.Element {
  const { t, locale } = useConsole();
  const act = useAction();
  const hotspots = usePoll((signal) => api.hotspots.list(signal), null);
  const several = (hotspots.data?.data.length ?? 0) > 1;
  const [f, setF] = useState({ layout: 'a4' as 'a4' | 'receipt', lang: locale.startsWith('tr') ? 'tr' : 'en', message: '', hotspot: '' });
  const id = (s: string): string => `${props.idPrefix}-${s}`;
  const submit = (e: Event): void => {
    e.preventDefault();
    const sel = props.selection;
    if (!sel) return;
    void act.run(async () => {
      const { blob, filename } = await api.vouchers.pdf({
        ...('batch_id' in sel ? { batch_id: sel.batch_id } : { ids: sel.ids.join(',') }),
        layout: f.layout, lang: f.lang, message: f.message.trim() || undefined, hotspot_id: several ? f.hotspot || undefined : undefined,
      });
      saveBlob(blob, filename);
      return t('v_printed', { count: props.count, name: filename });
    });
  };
  return (
    <form onSubmit={submit} aria-label={t('v_print_title')}>
      <fieldset>
        <legend>{t('v_print_title')}</legend>
        <div class="row">
          <Field id={id('layout')} label={t('v_print_layout')}>
            <select id={id('layout')} value={f.layout} onChange={(e) => setF({ ...f, layout: val(e) as 'a4' | 'receipt' })}>
              <option value="a4">{t('v_layout_a4')}</option>
              <option value="receipt">{t('v_layout_receipt')}</option>
            </select>
          </Field>
          <Field id={id('lang')} label={t('v_print_lang')}>
            <select id={id('lang')} value={f.lang} onChange={(e) => setF({ ...f, lang: val(e) })}>
              <option value="tr">Türkçe</option>
              <option value="en">English</option>
            </select>
          </Field>
          {several && (
            <Field id={id('hotspot')} label={t('v_print_hotspot')}>
              <select id={id('hotspot')} value={f.hotspot} required onChange={(e) => setF({ ...f, hotspot: val(e) })}>
                <option value="">{t('v_print_hotspot_pick')}</option>
                {hotspots.data!.data.map((h) => <option key={h.id} value={h.id}>{h.name}</option>)}
              </select>
            </Field>
          )}
        </div>
        <Field id={id('message')} label={t('v_print_message')} hint={t('v_print_message_hint')}>
          <input id={id('message')} class="wide" maxLength={200} aria-describedby={`${id('message')}-hint`} value={f.message}
            onInput={(e) => setF({ ...f, message: val(e) })} />
        </Field>
        <p><button type="submit" disabled={act.busy || !props.selection}>
          {act.busy ? t('v_printing') : t('v_print', { count: props.count })}
        </button></p>
      </fieldset>
      <OutcomeLine outcome={act.outcome} />
    </form>
  );
}
