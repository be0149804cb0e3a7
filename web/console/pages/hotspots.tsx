import { useState } from 'preact/hooks';
import { api, usePoll, type Hotspot, type HotspotInput } from '../../shared/index.js';
import { Field, OutcomeLine, useAction, useConsole, val } from '../ui.js';
import { NasClients } from './nas-clients.js';

const guessZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'Europe/Istanbul';

/** Hotspots (sites): list, add, edit; each one's NAS clients. */
export function HotspotsPage(): preact.JSX.Element {
  const { t, say } = useConsole();
  const list = usePoll((signal) => api.hotspots.list(signal), null);
  const [editing, setEditing] = useState<Hotspot | null>(null);
  const [nasOf, setNasOf] = useState<Hotspot | null>(null);
  const rows = list.data?.data ?? [];
  return (
    <>
      <h1>{t('h_title')}</h1>
      {list.error ? <p class="error-summary" role="alert">{say(list.error)}</p> : null}
      {list.data && rows.length === 0 ? <p>{t('none_yet')}</p> : (
        <table>
          <thead><tr>
            <th scope="col">{t('h_col_name')}</th><th scope="col">{t('h_col_location')}</th><th scope="col">{t('h_col_timezone')}</th>
            <th scope="col">{t('h_col_id')}</th><th scope="col">{t('l_col_actions')}</th>
          </tr></thead>
          <tbody>{rows.map((h) => (
            <tr key={h.id}>
              <td>{h.name}</td><td>{h.location}</td><td>{h.timezone}</td><td class="mono">{h.id}</td>
              <td><div class="actions">
                <button type="button" class="secondary" aria-label={t('h_edit', { name: h.name })} onClick={() => { setNasOf(null); setEditing(h); }}>{t('h_edit_short')}</button>
                <button type="button" class="secondary" aria-label={t('h_nas', { name: h.name })} onClick={() => { setEditing(null); setNasOf(h); }}>{t('h_nas_short')}</button>
              </div></td>
            </tr>
          ))}</tbody>
        </table>
      )}
      {editing && (
        <section aria-labelledby="edit-title">
          <h2 id="edit-title">{t('h_edit_title', { name: editing.name })}</h2>
          <HotspotForm key={editing.id} prefix="edit" initial={editing} submitLabel={t('save')}
            onSubmit={async (body) => { const h = await api.hotspots.update(editing.id, body); list.reload(); setEditing(null); return t('h_saved', { name: h.name }); }} />
        </section>
      )}
      {nasOf && <NasClients hotspot={nasOf} onClose={() => setNasOf(null)} />}
      <section aria-labelledby="create-title">
        <h2 id="create-title">{t('h_create_title')}</h2>
        <HotspotForm prefix="new" initial={{ name: '', location: '', timezone: guessZone() }} submitLabel={t('h_create')}
          onSubmit={async (body) => { const h = await api.hotspots.create(body); list.reload(); return t('h_created', { name: h.name }); }} />
      </section>
    </>
  );
}

function HotspotForm(props: {
  prefix: string; initial: { name: string; location: string; timezone: string }; submitLabel: string; onSubmit(body: HotspotInput): Promise<string>;
}): preact.JSX.Element {
  const { t } = useConsole();
  const act = useAction();
  const [f, setF] = useState(props.initial);
  const id = (k: string): string => `${props.prefix}-${k}`;
  return (
    <>
      <form class="row" onSubmit={(e) => { e.preventDefault(); void act.run(() => props.onSubmit({ name: f.name, location: f.location, timezone: f.timezone })); }}>
        <Field id={id('name')} label={t('h_name')}><input id={id('name')} required value={f.name} onInput={(e) => setF({ ...f, name: val(e) })} /></Field>
        <Field id={id('location')} label={t('h_location')}><input id={id('location')} value={f.location} onInput={(e) => setF({ ...f, location: val(e) })} /></Field>
        <Field id={id('tz')} label={t('h_timezone')}><input id={id('tz')} required value={f.timezone} onInput={(e) => setF({ ...f, timezone: val(e) })} /></Field>
        <button type="submit" disabled={act.busy}>{props.submitLabel}</button>
      </form>
      <OutcomeLine outcome={act.outcome} />
    </>
  );
}
