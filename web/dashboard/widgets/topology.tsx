import { num } from '../format.js';
import { useDash, Widget } from '../parts.js';
import type { Topology } from '../types.js';
import type { Resource } from '../use-resource.js';

/** The tenant's sites, their NAS clients and the access points behind them, as a nested list (polled every 60 s). */
export function TopologyWidget(props: { res: Resource<Topology> }): preact.JSX.Element {
  const { t, locale } = useDash();
  return (
    <Widget title={t('w_topology')} res={props.res}>
      {(d) => d.sites.length === 0 ? <p>{t('sites_none')}</p> : (
        <ul class="tree">
          {d.sites.map((s) => (
            <li key={s.id}>
              <strong>{s.name}</strong>
              {s.nas.length === 0 ? <p class="meta">{t('topo_no_nas')}</p> : (
                <ul>
                  {s.nas.map((n) => (
                    <li key={n.id} class={n.online ? 'up' : 'down'}>
                      {t('topo_nas', { name: n.name, ip: n.ip, state: t(n.online ? 'online' : 'offline') })}
                      {n.access_points.length > 0 && (
                        <ul>{n.access_points.map((a) => <li key={a.id}>{t('topo_ap', { ap: a.id, n: num(locale, a.active_sessions) })}</li>)}</ul>
                      )}
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
    </Widget>
  );
}
