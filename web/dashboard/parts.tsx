import type { ComponentChildren } from 'preact';
import { useEffect, useId, useState } from 'preact/hooks';
import { errorSentence, useI18n, type Translate } from '../shared/index.js';
import { age, clock } from './format.js';
import type { DashboardKey } from './messages.js';
import type { Resource } from './use-resource.js';

/** The catalogue's translator typed to the dashboard's keys, and the locale. */
export function useDash(): { t: Translate<DashboardKey>; locale: string; raw: Translate } {
  const { t, locale } = useI18n();
  return { t: t as Translate<DashboardKey>, locale, raw: t };
}

/** Past this many refresh periods without new data, the data counts as stale even without an error. */
const LATE_PERIODS = 2.5;

/**
 * How old the data is (always, ticking every second, with the time of the
 * last refresh) and how it is kept current; when it is stale, a visible sign
 * saying so with its age and why (a failed refresh as a sentence, or a stream
 * that is down). Data is stale when the last refresh failed, when its stream
 * is down, or when no refresh has landed for 2.5 periods.
 */
export function Freshness(props: { res: Pick<Resource<unknown>, 'error' | 'updatedAt' | 'everyMs' | 'streamDown' | 'live'> }): preact.JSX.Element {
  const { t, locale, raw } = useDash();
  const { error, updatedAt, everyMs, streamDown, live } = props.res;
  const [now, setNow] = useState(Date.now);
  const late = everyMs !== null && updatedAt > 0 && now - updatedAt > everyMs * LATE_PERIODS;
  const stale = error !== null || streamDown || late;
  // The age ticks every second, stale or not: data refreshed on events may rightly be minutes old, and says so.
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(timer);
  }, []);
  const when = everyMs === null ? t('live_updates') : live ? t('live_and_every_s', { n: everyMs / 1000 }) : t('every_s', { n: everyMs / 1000 });
  if (!stale) {
    const ago = updatedAt > 0 ? t('updated_ago', { age: age(t, now - updatedAt), time: clock(locale, updatedAt) }) : null;
    return <p class="fresh meta" data-updated-at={updatedAt > 0 ? String(updatedAt) : undefined}>{ago ? `${ago} · ${when}` : when}</p>;
  }
  return (
    <p class="stale-sign" role="status">
      <strong>{updatedAt > 0 ? t('stale_sign', { age: age(t, now - updatedAt) }) : t('stale_never')}</strong>{' '}
      {error !== null ? t('stale_failed', { error: errorSentence(error, raw) }) : streamDown ? t('stale_stream') : null}
    </p>
  );
}

/** One figure: what it measures, the value, and the window or the parts it is made of (Grafana's tile). */
export function Tile(props: { label: string; value: string; what: string; tone?: 'good' | 'bad' | 'warn' }): preact.JSX.Element {
  const id = useId();
  return (
    <div class={`tile${props.tone ? ` tone-${props.tone}` : ''}`} role="group" aria-labelledby={id}>
      <span class="label" id={id}>{props.label}</span>
      <span class="value">{props.value}</span>
      <span class="what">{props.what}</span>
    </div>
  );
}

/**
 * A widget's frame: its heading, its freshness, and its body once data has
 * come; before that, the failure as a sentence or "Loading".
 */
export function Widget<T>(props: { title: string; res: Resource<T>; wide?: boolean; children(data: T): ComponentChildren }): preact.JSX.Element {
  const { raw } = useDash();
  const id = useId();
  const { data, error } = props.res;
  return (
    <section class={`widget${props.wide ? ' wide' : ''}`} aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      <Freshness res={props.res} />
      {/* Before any data, a failure is already a sentence in the stale sign above. */}
      {data !== null ? props.children(data) : error === null && <p class="meta">{raw('loading')}</p>}
    </section>
  );
}
