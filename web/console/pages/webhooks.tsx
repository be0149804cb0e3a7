import { useState } from 'preact/hooks';
import { api, usePoll, type WebhookSub } from '../../shared/index.js';
import { ConfirmDialog, Field, OutcomeLine, useAction, useConsole, val, when } from '../ui.js';

/** The event types a subscription may name (the public API's list). */
const EVENT_TYPES = ['session.start', 'session.end', 'auth.success', 'auth.failure', 'voucher.redeemed', 'sponsor.approved', 'sponsor.rejected', 'device.new'];

/** Webhooks: the tenant's subscriptions, each one's recent deliveries, create and delete. */
export function WebhooksPage(): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const list = usePoll((signal) => api.webhooks.list(signal), null);
  const [shown, setShown] = useState<WebhookSub | null>(null);
  const [removing, setRemoving] = useState<WebhookSub | null>(null);
  const act = useAction();
  const rows = list.data?.data ?? [];
  return (
    <>
      <h1>{t('w_title')}</h1>
      <p>{t('w_intro')}</p>
      {list.error ? <p class="error-summary" role="alert">{say(list.error)}</p> : null}
      <OutcomeLine outcome={act.outcome} />
      {list.data && rows.length === 0 ? <p>{t('none_yet')}</p> : (
        <table>
          <thead><tr>
            <th scope="col">{t('w_col_url')}</th><th scope="col">{t('w_col_events')}</th><th scope="col">{t('w_col_state')}</th>
            <th scope="col">{t('w_col_created')}</th><th scope="col">{t('l_col_actions')}</th>
          </tr></thead>
          <tbody>{rows.map((w) => (
            <tr key={w.id}>
              <td class="mono">{w.url}</td><td>{w.events.join(', ')}</td>
              <td>{w.active ? t('w_active') : t('w_disabled')}</td><td>{when(w.created_at, locale)}</td>
              <td><div class="actions">
                <button type="button" class="secondary" aria-label={t('w_deliveries', { url: w.url })} onClick={() => setShown(w)}>{t('w_deliveries_short')}</button>
                <button type="button" class="secondary" aria-label={t('w_delete', { url: w.url })} onClick={() => setRemoving(w)}>{t('w_delete_short')}</button>
              </div></td>
            </tr>
          ))}</tbody>
        </table>
      )}
      {shown && <Deliveries key={shown.id} webhook={shown} onClose={() => setShown(null)} />}
      {removing && (
        <ConfirmDialog title={t('w_delete_confirm', { url: removing.url })} confirmLabel={t('w_delete', { url: removing.url })}
          onCancel={() => setRemoving(null)} onConfirm={() => {
            const w = removing;
            setRemoving(null);
            if (shown?.id === w.id) setShown(null);
            void act.run(async () => { await api.webhooks.remove(w.id); list.reload(); return t('w_deleted', { url: w.url }); });
          }} />
      )}
      <section aria-labelledby="w-create-title">
        <h2 id="w-create-title">{t('w_create_title')}</h2>
        <CreateForm onCreated={() => list.reload()} />
      </section>
    </>
  );
}

/** One subscription's recent attempts: status, answer code, duration, error; refreshed every 5 s. */
function Deliveries(props: { webhook: WebhookSub; onClose(): void }): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const d = usePoll((signal) => api.webhooks.deliveries(props.webhook.id, signal), 5_000, [props.webhook.id]);
  const rows = d.data?.data ?? [];
  const status = { delivered: t('w_status_delivered'), failed: t('w_status_failed'), dead: t('w_status_dead') } as const;
  return (
    <section aria-labelledby="w-deliveries-title">
      <h2 id="w-deliveries-title">{t('w_deliveries_title', { url: props.webhook.url })}</h2>
      {d.error ? <p class="error-summary" role="alert">{say(d.error)}</p> : null}
      {d.data && rows.length === 0 ? <p>{t('w_no_deliveries')}</p> : (
        <table>
          <thead><tr>
            <th scope="col">{t('w_col_time')}</th><th scope="col">{t('w_col_event')}</th><th scope="col">{t('w_col_attempt')}</th>
            <th scope="col">{t('w_col_status')}</th><th scope="col">{t('w_col_code')}</th><th scope="col">{t('w_col_duration')}</th><th scope="col">{t('w_col_error')}</th>
          </tr></thead>
          <tbody>{rows.map((a) => (
            <tr key={`${a.delivery_id}-${a.attempt}-${a.at}`}>
              <td>{when(a.at, locale, true)}</td><td>{a.event_type}</td><td>{a.attempt}</td><td>{status[a.status]}</td>
              <td>{a.code ?? t('w_no_answer')}</td><td>{t('w_ms', { ms: a.duration_ms })}</td><td>{a.error ?? ''}</td>
            </tr>
          ))}</tbody>
        </table>
      )}
      <button type="button" class="secondary" onClick={props.onClose}>{t('w_close')}</button>
    </section>
  );
}

function CreateForm(props: { onCreated(): void }): preact.JSX.Element {
  const { t } = useConsole();
  const act = useAction();
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [events, setEvents] = useState<string[]>(['session.start']);
  const toggle = (e: string): void => setEvents(events.includes(e) ? events.filter((x) => x !== e) : [...events, e]);
  return (
    <>
      <form onSubmit={(e) => {
        e.preventDefault();
        void act.run(async () => {
          const w = await api.webhooks.create({ url, events, secret });
          setSecret('');
          props.onCreated();
          return t('w_created', { url: w.url });
        });
      }}>
        <Field id="w-url" label={t('w_url')} hint={t('w_url_hint')}>
          <input id="w-url" type="url" required value={url} onInput={(e) => setUrl(val(e))} />
        </Field>
        <fieldset>
          <legend>{t('w_events')}</legend>
          {EVENT_TYPES.map((e) => (
            <label key={e} class="inline"><input type="checkbox" checked={events.includes(e)} onChange={() => toggle(e)} /> {e}</label>
          ))}
        </fieldset>
        <Field id="w-secret" label={t('w_secret')} hint={t('w_secret_hint')}>
          <input id="w-secret" type="password" autocomplete="new-password" required maxLength={256} value={secret} onInput={(e) => setSecret(val(e))} />
        </Field>
        <button type="submit" disabled={act.busy || events.length === 0}>{t('w_create')}</button>
      </form>
      <OutcomeLine outcome={act.outcome} />
    </>
  );
}
