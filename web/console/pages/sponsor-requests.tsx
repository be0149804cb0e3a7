import { api, usePoll, type SponsorRequestRow } from '../../shared/index.js';
import { useConsole, when } from '../ui.js';

/** Sponsor requests of the last day and their states (GET /v1/sponsor-requests), refreshed every 10 s. */
export function SponsorRequestsPage(): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const list = usePoll((signal) => api.sponsorRequests.list(signal), 10_000);
  const rows = list.data?.data ?? [];
  const states: Record<SponsorRequestRow['status'], string> = {
    pending: t('sp_pending'), approved: t('sp_approved'), rejected: t('sp_rejected'), expired: t('sp_expired'),
  };
  return (
    <>
      <h1>{t('sp_title')}</h1>
      <p class="meta">
        {t('sp_intro')}{' '}
        {list.updatedAt > 0 && <span class={list.error ? 'stale' : undefined}>{new Date(list.updatedAt).toLocaleTimeString(locale)}</span>}
      </p>
      {list.error ? <p class="error-summary" role="alert">{say(list.error)}</p> : null}
      {list.data && rows.length === 0 ? <p>{t('none_yet')}</p> : (
        <table>
          <thead><tr>
            <th scope="col">{t('sp_col_requested')}</th><th scope="col">{t('sp_col_guest')}</th><th scope="col">{t('sp_col_sponsor')}</th>
            <th scope="col">{t('sp_col_mac')}</th><th scope="col">{t('sp_col_status')}</th><th scope="col">{t('sp_col_decided')}</th>
            <th scope="col">{t('sp_col_minutes')}</th>
          </tr></thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id}>
                <td>{when(r.requested_at, locale)}</td><td>{r.guest_name}</td><td>{r.sponsor_email}</td><td class="mono">{r.mac}</td>
                <td>{states[r.status]}</td><td>{r.decided_at ? when(r.decided_at, locale) : ''}</td>
                <td>{r.minutes ? t('sp_minutes', { n: String(r.minutes) }) : ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
