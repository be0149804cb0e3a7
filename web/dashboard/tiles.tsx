import { num, pct } from './format.js';
import { Freshness, Tile, useDash } from './parts.js';
import type { Incidents, KpisExtra, Overview } from './types.js';
import type { Resource } from './use-resource.js';

/** The top strip: five live figures from dashboard/overview, refreshed every 10 s ("Top strip, five live tiles, refreshed every 10 seconds"). */
export function TopStrip(props: { overview: Resource<Overview> }): preact.JSX.Element {
  const { t, locale } = useDash();
  const o = props.overview.data;
  const v = (n: number | undefined): string => (n === undefined ? '…' : num(locale, n));
  return (
    <section class="strip" aria-label={t('strip_label')}>
      <div class="tiles five">
        <Tile label={t('tile_active_sessions')} value={v(o?.active_sessions)} what={t('tile_active_sessions_what')} />
        <Tile label={t('tile_decisions')} value={v(o?.decisions_1m)} what={t('tile_decisions_what')} />
        <Tile label={t('tile_switches')} value={v(o?.switches_online)} what={t('tile_switches_what')} />
        <Tile label={t('tile_incidents')} value={v(o?.incidents_open)} what={t('tile_incidents_what')} tone={o && o.incidents_open > 0 ? 'warn' : undefined} />
        <Tile label={t('tile_posture_fail')} value={v(o?.posture_fail_24h)} what={t('tile_posture_fail_what')} tone={o && o.posture_fail_24h > 0 ? 'bad' : undefined} />
      </div>
      <Freshness res={props.overview} />
    </section>
  );
}

/**
 * The eight grid tiles: overview and kpis-extra (every 10 s) and the open
 * count of the incident queue. Sign-in success is derived here from the
 * accepted and rejected counts, so the tile and its "n of m" line agree.
 */
export function GridTiles(props: { overview: Resource<Overview>; extra: Resource<KpisExtra>; incidents: Resource<Incidents> }): preact.JSX.Element {
  const { t, locale } = useDash();
  const o = props.overview.data;
  const x = props.extra.data;
  const v = (n: number | undefined): string => (n === undefined ? '…' : num(locale, n));
  const all = o ? o.login_count_24h + o.login_fail_count_24h : 0;
  const success = o ? (all > 0 ? (o.login_count_24h / all) * 100 : null) : undefined;
  const queue = props.incidents.data?.open;
  return (
    <section class="grid-tiles" aria-label={t('grid_label')}>
      <div class="tiles four">
        <Tile label={t('tile_guests')} value={v(o?.active_guest_count)} what={t('tile_guests_what')} />
        <Tile label={t('tile_auth_ok')} value={success === undefined ? '…' : pct(locale, t, success)}
          what={t('tile_auth_ok_what', { ok: v(o?.login_count_24h), all: num(locale, all) })} />
        <Tile label={t('tile_auth_fail')} value={v(o?.login_fail_count_24h)} what={t('tile_auth_fail_what')} />
        <Tile label={t('tile_error_rate')} value={o ? pct(locale, t, o.error_rate_pct) : '…'} what={t('tile_error_rate_what')}
          tone={o && o.error_rate_pct >= 5 ? 'bad' : undefined} />
        <Tile label={t('tile_queue')} value={v(queue)} what={t('tile_queue_what')} tone={queue ? 'warn' : undefined} />
        <Tile label={t('tile_edge')} value={x ? pct(locale, t, x.edge_health_pct) : '…'}
          what={t('tile_edge_what', { online: v(x?.nas_online), total: v(x?.nas_total) })} />
        <Tile label={t('tile_posture')} value={x ? pct(locale, t, x.posture_compliance_pct) : '…'}
          what={t('tile_posture_what', { pass: v(x?.posture_pass), devices: v(x?.posture_devices) })} />
        <Tile label={t('tile_audit')} value={o ? t('unit_min', { n: o.audit_anchor_lag_min.toLocaleString(locale, { maximumFractionDigits: 1 }) }) : '…'}
          what={t('tile_audit_what')} tone={o && o.audit_anchor_lag_min >= 5 ? 'warn' : undefined} />
      </div>
      <Freshness res={props.extra.error !== null ? props.extra : props.overview} />
    </section>
  );
}
