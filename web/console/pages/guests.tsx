import { useState } from 'preact/hooks';
import { api, type Guest, type SessionRow } from '../../shared/index.js';
import { bytes, Field, hms, useConsole, val, when } from '../ui.js';

/** Guests: a device looked up by MAC address, and its sessions of the last days. */
export function GuestsPage(): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const [mac, setMac] = useState('');
  const [days, setDays] = useState('30');
  const [found, setFound] = useState<{ guests: Guest[]; history: SessionRow[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const lookUp = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const guests = (await api.guests.find(mac.trim())).data;
      const history = guests[0] ? (await api.guests.history(guests[0].mac, Number(days) || 30)).data : [];
      setFound({ guests, history });
    } catch (err) {
      setFound(null);
      setError(say(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h1>{t('g_title')}</h1>
      <form class="row" onSubmit={lookUp}>
        <Field id="g-mac" label={t('g_mac')}><input id="g-mac" class="mono" required value={mac} onInput={(e) => setMac(val(e))} /></Field>
        <Field id="g-days" label={t('g_days')}><input id="g-days" type="number" min={1} max={730} value={days} onInput={(e) => setDays(val(e))} /></Field>
        <button type="submit" disabled={busy || mac.trim() === ''}>{t('g_lookup')}</button>
      </form>
      {error && <p class="error-summary" role="alert">{error}</p>}
      {found && found.guests.length === 0 && <p role="status">{t('g_none')}</p>}
      {found && found.guests.length > 0 && (
        <>
          <table>
            <thead><tr>
              <th scope="col">{t('l_col_mac')}</th><th scope="col">{t('g_col_first')}</th><th scope="col">{t('g_col_last')}</th>
              <th scope="col" class="num">{t('g_col_sessions')}</th><th scope="col" class="num">{t('g_col_active')}</th>
              <th scope="col" class="num">{t('l_col_in')}</th><th scope="col" class="num">{t('l_col_out')}</th>
              <th scope="col">{t('g_col_blocked')}</th><th scope="col">{t('g_col_last_user')}</th>
            </tr></thead>
            <tbody>{found.guests.map((g) => (
              <tr key={g.mac}>
                <td class="mono">{g.mac}</td><td>{when(g.first_seen, locale)}</td><td>{when(g.last_seen, locale)}</td>
                <td class="num">{g.sessions}</td><td class="num">{g.active_sessions}</td><td class="num">{bytes(g.bytes_in, locale)}</td>
                <td class="num">{bytes(g.bytes_out, locale)}</td><td>{g.blocked ? t('yes') : t('no')}</td>
                <td>{g.last_username ?? ''} ({g.last_auth_method})</td>
              </tr>
            ))}</tbody>
          </table>
          <h2 id="history-title">{t('g_history')}</h2>
          <table aria-labelledby="history-title">
            <thead><tr>
              <th scope="col">{t('l_col_start')}</th><th scope="col">{t('g_col_end')}</th><th scope="col">{t('l_col_duration')}</th>
              <th scope="col">{t('g_col_status')}</th><th scope="col">{t('g_col_reason')}</th><th scope="col">{t('l_col_method')}</th>
              <th scope="col">{t('l_col_ssid')}</th><th scope="col" class="num">{t('l_col_in')}</th><th scope="col" class="num">{t('l_col_out')}</th>
            </tr></thead>
            <tbody>{found.history.map((s) => (
              <tr key={s.id}>
                <td>{when(s.started_at, locale)}</td><td>{when(s.ended_at, locale)}</td><td class="mono">{hms(s.duration_seconds)}</td>
                <td>{s.status}</td><td>{s.end_reason ?? ''}</td><td>{s.auth_method}</td><td>{s.ssid ?? ''}</td>
                <td class="num">{bytes(s.bytes_in, locale)}</td><td class="num">{bytes(s.bytes_out, locale)}</td>
              </tr>
            ))}</tbody>
          </table>
        </>
      )}
    </>
  );
}
