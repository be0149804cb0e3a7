import { useState } from 'preact/hooks';
import { errorSentence } from '../../shared/index.js';
import { get } from '../api.js';
import { num } from '../format.js';
import { useDash, Widget } from '../parts.js';
import type { Switch, SwitchPorts } from '../types.js';
import { useResource, WIDGET_POLL_MS, type Resource } from '../use-resource.js';

/**
 * The switch port map: choose a switch (a NAS client), see its ports as a
 * grid, each with its live sessions (switches and switches/{id}/ports, both
 * polled every 60 s). A port with sessions is marked in words and by its border.
 */
export function SwitchPortMap(props: { switches: Resource<{ data: Switch[] }> }): preact.JSX.Element {
  const { t } = useDash();
  const list = props.switches.data?.data ?? [];
  const [chosen, setChosen] = useState<string | null>(null);
  const current = list.find((s) => s.id === chosen) ?? list[0] ?? null;
  return (
    <Widget title={t('w_ports')} res={props.switches}>
      {() => current === null ? <p>{t('ports_no_switch')}</p> : (
        <>
          <label>
            {t('ports_switch')}{' '}
            <select value={current.id} onChange={(e) => setChosen((e.target as HTMLSelectElement).value)}>
              {list.map((s) => <option key={s.id} value={s.id}>{`${s.name} (${s.ip}) · ${t(s.online ? 'online' : 'offline')}`}</option>)}
            </select>
          </label>
          <Ports id={current.id} />
        </>
      )}
    </Widget>
  );
}

function Ports(props: { id: string }): preact.JSX.Element {
  const { t, locale, raw } = useDash();
  const res = useResource((signal) => get<SwitchPorts>(`switches/${encodeURIComponent(props.id)}/ports`, signal), { everyMs: WIDGET_POLL_MS, deps: [props.id] });
  const ports = res.data?.switch_id === props.id ? res.data.data : null;
  if (ports === null) return <p class="meta">{res.error !== null ? errorSentence(res.error, raw) : raw('loading')}</p>;
  if (ports.length === 0) return <p>{t('ports_none')}</p>;
  return (
    <ul class="ports">
      {ports.map((p) => (
        <li key={p.port} class={p.active_sessions > 0 ? 'busy' : undefined} title={p.called_station_id ?? undefined}>
          {t('port_cell', { port: p.port, n: num(locale, p.active_sessions) })}
        </li>
      ))}
    </ul>
  );
}
