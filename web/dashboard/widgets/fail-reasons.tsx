import { num } from '../format.js';
import { useDash, Widget } from '../parts.js';
import type { Decisions } from '../types.js';
import type { Resource } from '../use-resource.js';

/** Why sign-ins were refused over 24 h, most first (decisions.fail_reasons; polled every 60 s). */
export function FailReasons(props: { res: Resource<Decisions> }): preact.JSX.Element {
  const { t, locale } = useDash();
  return (
    <Widget title={t('w_fail')} res={props.res}>
      {(d) => d.fail_reasons.length === 0 ? <p>{t('fail_none')}</p> : (
        <table>
          <thead><tr><th>{t('col_reason')}</th><th class="num">{t('col_count')}</th></tr></thead>
          <tbody>
            {d.fail_reasons.map((r) => <tr key={r.reason}><td class="mono">{r.reason}</td><td class="num">{num(locale, r.count)}</td></tr>)}
          </tbody>
        </table>
      )}
    </Widget>
  );
}
