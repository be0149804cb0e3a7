import { clock } from '../format.js';
import { useDash, Widget } from '../parts.js';
import type { Audit } from '../types.js';
import type { Resource } from '../use-resource.js';

/** The newest audit entries as a timeline, newest first (refetched on the audit stream). */
export function AuditTimeline(props: { res: Resource<Audit>; siteName(id: string | null): string }): preact.JSX.Element {
  const { t, locale } = useDash();
  return (
    <Widget title={t('w_audit')} res={props.res}>
      {(d) => d.data.length === 0 ? <p>{t('audit_none')}</p> : (
        <ol class="timeline">
          {d.data.map((e) => (
            <li key={e.id}>
              <time dateTime={e.timestamp}>{clock(locale, e.timestamp)}</time>
              <span class="mono">{e.event_type}</span>
              <span class="meta">{[props.siteName(e.hotspot_id), e.ssid, e.mac_address, e.username ?? e.actor].filter(Boolean).join(' · ')}</span>
            </li>
          ))}
        </ol>
      )}
    </Widget>
  );
}
