import { auditTypeLabel } from '../audit-label.js';
import { clock } from '../format.js';
import { useDash, Widget } from '../parts.js';
import type { Audit } from '../types.js';
import type { Resource } from '../use-resource.js';

/**
 * The newest audit entries as a timeline, newest first (refetched on the
 * audit stream). Each entry's type is said in words, with its code beside it
 * in small type: support staff match the code to the API and the evidence
 * pack. A type the page has no words for shows as its code alone.
 */
export function AuditTimeline(props: { res: Resource<Audit>; siteName(id: string | null): string }): preact.JSX.Element {
  const { t, locale, raw } = useDash();
  return (
    <Widget title={t('w_audit')} res={props.res}>
      {(d) => d.data.length === 0 ? <p>{t('audit_none')}</p> : (
        <ol class="timeline">
          {d.data.map((e) => {
            const label = auditTypeLabel(raw, e.event_type);
            return (
              <li key={e.id}>
                <time dateTime={e.timestamp}>{clock(locale, e.timestamp)}</time>
                {label === null ? <span class="event mono">{e.event_type}</span> : (
                  <span class="event" title={e.event_type}>{label}<code class="event-code">{e.event_type}</code></span>
                )}
                <span class="meta">{[props.siteName(e.hotspot_id), e.ssid, e.mac_address, e.username ?? e.actor].filter(Boolean).join(' · ')}</span>
              </li>
            );
          })}
        </ol>
      )}
    </Widget>
  );
}
