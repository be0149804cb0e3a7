import { useRef, useState } from 'preact/hooks';
import { errorSentence } from '../../shared/index.js';
import { post } from '../api.js';
import { dateTime } from '../format.js';
import type { DashboardKey } from '../messages.js';
import { useDash, Widget } from '../parts.js';
import type { Incident, Incidents, IncidentState } from '../types.js';
import type { Resource } from '../use-resource.js';

type Action = 'triage' | 'acknowledge' | 'resolve';
const ORDER: IncidentState[] = ['pending', 'triaging', 'acknowledged', 'resolved'];
const TARGET: Record<Action, IncidentState> = { triage: 'triaging', acknowledge: 'acknowledged', resolve: 'resolved' };

/** The moves open to an incident: only forward (docs/dashboard-api.md: any open state may go straight to a later one). */
const movesOf = (s: IncidentState): Action[] =>
  (Object.keys(TARGET) as Action[]).filter((a) => ORDER.indexOf(TARGET[a]) > ORDER.indexOf(s));

/**
 * The open incidents, most recent first, with the moves an admin may make.
 * Each move asks for confirmation in a modal dialog (focus goes into it and
 * returns to the button), then posts; the outcome or the refusal is a
 * sentence in a live region. The queue refetches after every move, and on
 * the incidents stream.
 */
export function IncidentQueue(props: { res: Resource<Incidents>; admin: boolean }): preact.JSX.Element {
  const { t, locale, raw } = useDash();
  const dialog = useRef<HTMLDialogElement>(null);
  const [pending, setPending] = useState<{ incident: Incident; action: Action } | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);

  const ask = (incident: Incident, action: Action): void => {
    setPending({ incident, action });
    setMessage(null);
    dialog.current?.showModal();
  };
  const confirm = async (): Promise<void> => {
    if (!pending) return;
    setBusy(true);
    try {
      const moved = await post<Incident>(`incidents/${encodeURIComponent(pending.incident.id)}/${pending.action}`);
      setMessage({ ok: true, text: t('inc_moved', { title: moved.title, state: t(`state_${moved.state}` as DashboardKey) }) });
    } catch (err) {
      setMessage({ ok: false, text: errorSentence(err, raw) });
    } finally {
      setBusy(false);
      dialog.current?.close();
      props.res.reload();
    }
  };

  return (
    <Widget title={t('w_incidents')} res={props.res} wide>
      {(d) => (
        <>
          {message && <p class={message.ok ? 'ok' : 'error-text'} role={message.ok ? 'status' : 'alert'}>{message.text}</p>}
          {!props.admin && <p class="meta">{t('inc_readonly')}</p>}
          {d.data.length === 0 ? <p>{t('inc_none')}</p> : (
            <table>
              <thead><tr><th>{t('col_incident')}</th><th>{t('col_severity')}</th><th>{t('col_state')}</th><th>{t('col_opened')}</th>
                {props.admin && <th>{t('col_actions')}</th>}</tr></thead>
              <tbody>
                {d.data.map((i) => (
                  <tr key={i.id} class={`sev-${i.severity}`}>
                    <td>{i.title}<br /><span class="meta mono">{i.subject}</span></td>
                    <td>{i.severity === 'critical' || i.severity === 'warning' ? t(`sev_${i.severity}`) : i.severity}</td>
                    <td>{t(`state_${i.state}` as DashboardKey)}</td>
                    <td>{dateTime(locale, i.opened_at)}</td>
                    {props.admin && (
                      <td class="actions">
                        {movesOf(i.state).map((a) => (
                          <button key={a} type="button" class={a === 'resolve' ? 'secondary' : undefined}
                            aria-label={t('act_on', { action: t(`act_${a}`), title: i.title })} onClick={() => ask(i, a)}>
                            {t(`act_${a}`)}
                          </button>
                        ))}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <dialog ref={dialog} aria-labelledby="inc-confirm" onClose={() => setPending(null)}>
            {pending && (
              <>
                <p id="inc-confirm">{t(`confirm_${pending.action}`, { title: pending.incident.title })}</p>
                <div class="actions">
                  <button type="button" disabled={busy} onClick={() => void confirm()}>{t('confirm_yes')}</button>
                  <button type="button" class="secondary" onClick={() => dialog.current?.close()}>{t('confirm_no')}</button>
                </div>
              </>
            )}
          </dialog>
        </>
      )}
    </Widget>
  );
}
