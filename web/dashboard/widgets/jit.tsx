import { dateTime } from '../format.js';
import { useDash, Widget } from '../parts.js';
import type { JitApprovals } from '../types.js';
import type { Resource } from '../use-resource.js';

/** Sponsor requests waiting for a decision (refetched on the JIT stream). */
export function JitWidget(props: { res: Resource<JitApprovals>; siteName(id: string | null): string }): preact.JSX.Element {
  const { t, locale } = useDash();
  return (
    <Widget title={t('w_jit')} res={props.res}>
      {(d) => d.data.length === 0 ? <p>{t('jit_none')}</p> : (
        <table>
          <thead><tr><th>{t('col_guest')}</th><th>{t('col_sponsor')}</th><th>{t('col_site')}</th><th>{t('col_requested')}</th><th>{t('col_expires')}</th></tr></thead>
          <tbody>
            {d.data.map((j) => (
              <tr key={j.id}><td>{j.guest}</td><td>{j.sponsor}</td><td>{props.siteName(j.site_id)}</td>
                <td>{dateTime(locale, j.requested_at)}</td><td>{dateTime(locale, j.expires_at)}</td></tr>
            ))}
          </tbody>
        </table>
      )}
    </Widget>
  );
}
