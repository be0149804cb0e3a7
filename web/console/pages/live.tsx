import { useState } from 'preact/hooks';
import { api, usePoll, type BlockDuration, type ExtendBy, type SessionRow } from '../../shared/index.js';
import { bytes, ConfirmDialog, hms, OutcomeLine, useAction, useConsole, when } from '../ui.js';
import { LIVE_REFRESH_MS, LiveStats } from './live-stats.js';

const LIST_LIMIT = 500;

type Pending = { kind: 'extend' | 'block' | 'disconnect'; s: SessionRow } | null;

/** The live session panel ("refreshes every 5 seconds and has summary cards"): statistics, then every active session with disconnect, extend and block. */
export function LivePage(): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const sessions = usePoll((signal) => api.sessions.list({ status: 'active', limit: LIST_LIMIT }, signal), LIVE_REFRESH_MS);
  const [pending, setPending] = useState<Pending>(null);
  const act = useAction();
  const rows = sessions.data?.data ?? [];

  const done = (text: string): string => {
    sessions.reload();
    return text;
  };
  return (
    <>
      <h1>{t('l_title')}</h1>
      <p class="meta">
        {t('l_refresh')}{' '}
        {sessions.updatedAt > 0 && <span class={sessions.error ? 'stale' : undefined}>
          {new Date(sessions.updatedAt).toLocaleTimeString(locale)}
        </span>}
      </p>
      <LiveStats fallbackActive={sessions.data?.total ?? null} />
      <h2 id="sessions-title">{t('l_sessions')} ({sessions.data?.total ?? 0})</h2>
      {sessions.error ? <p class="error-summary" role="alert">{say(sessions.error)}</p> : null}
      <OutcomeLine outcome={act.outcome} />
      {sessions.data && rows.length === 0 ? <p>{t('none_yet')}</p> : (
        <div class="table-wrap"><table aria-labelledby="sessions-title">
          <thead><tr>
            <th scope="col">{t('l_col_mac')}</th><th scope="col">{t('l_col_ip')}</th><th scope="col">{t('l_col_user')}</th>
            <th scope="col">{t('l_col_method')}</th><th scope="col">{t('l_col_ssid')}</th><th scope="col">{t('l_col_ap')}</th>
            <th scope="col">{t('l_col_start')}</th><th scope="col">{t('l_col_duration')}</th><th scope="col" class="num">{t('l_col_in')}</th>
            <th scope="col" class="num">{t('l_col_out')}</th><th scope="col" class="num">{t('l_col_signal')}</th><th scope="col">{t('l_col_actions')}</th>
          </tr></thead>
          <tbody>
            {rows.map((s) => (
              <tr key={s.id}>
                <td class="mono">{s.mac}</td><td class="mono">{s.ip ?? ''}</td><td>{s.username ?? ''}</td><td>{s.auth_method}</td>
                <td>{s.ssid ?? ''}</td><td>{s.ap_name ?? ''}</td><td>{when(s.started_at, locale, true)}</td>
                <td class="mono">{hms(s.duration_seconds)}</td><td class="num">{bytes(s.bytes_in, locale)}</td>
                <td class="num">{bytes(s.bytes_out, locale)}</td><td class="num">{s.signal_strength === null ? '' : `${s.signal_strength} dBm`}</td>
                <td><div class="actions">
                  <button type="button" class="secondary" aria-label={t('l_extend', { mac: s.mac })} onClick={() => setPending({ kind: 'extend', s })}>{t('l_extend_short')}</button>
                  <button type="button" class="secondary" aria-label={t('l_block', { mac: s.mac })} onClick={() => setPending({ kind: 'block', s })}>{t('l_block_short')}</button>
                  <button type="button" class="danger" aria-label={t('l_disconnect', { mac: s.mac })} onClick={() => setPending({ kind: 'disconnect', s })}>{t('l_disconnect_short')}</button>
                </div></td>
              </tr>
            ))}
          </tbody>
        </table></div>
      )}
      {pending?.kind === 'extend' && (
        <ExtendDialog mac={pending.s.mac} onCancel={() => setPending(null)} onConfirm={(by) => {
          const s = pending.s;
          setPending(null);
          void act.run(async () => {
            const r = await api.sessions.extend(s.id, by);
            return done(t('l_extend_done', { mac: s.mac, until: when(r.expires_at, locale) }));
          });
        }} />
      )}
      {pending?.kind === 'block' && (
        <BlockDialog mac={pending.s.mac} onCancel={() => setPending(null)} onConfirm={(duration) => {
          const s = pending.s;
          setPending(null);
          void act.run(async () => { await api.sessions.block(s.id, duration); return done(t('l_block_done', { mac: s.mac })); });
        }} />
      )}
      {pending?.kind === 'disconnect' && (
        <ConfirmDialog title={t('l_disconnect_title', { mac: pending.s.mac })} confirmLabel={t('l_disconnect', { mac: pending.s.mac })} danger
          onCancel={() => setPending(null)} onConfirm={() => {
            const s = pending.s;
            setPending(null);
            void act.run(async () => { await api.sessions.disconnect(s.id); return done(t('l_disconnect_done', { mac: s.mac })); });
          }} />
      )}
    </>
  );
}

function ExtendDialog(props: { mac: string; onCancel(): void; onConfirm(by: ExtendBy): void }): preact.JSX.Element {
  const { t } = useConsole();
  const [choice, setChoice] = useState<'1h' | '4h' | '24h' | 'minutes'>('1h');
  const [minutes, setMinutes] = useState('30');
  const presets = [['1h', t('l_extend_1h')], ['4h', t('l_extend_4h')], ['24h', t('l_extend_24h')], ['minutes', t('l_extend_minutes')]] as const;
  return (
    <ConfirmDialog title={t('l_extend_title', { mac: props.mac })} confirmLabel={t('l_extend', { mac: props.mac })} onCancel={props.onCancel}
      onConfirm={() => props.onConfirm(choice === 'minutes' ? { minutes: Math.max(1, Number(minutes) || 0) } : { preset: choice })}>
      <fieldset>
        <legend>{t('l_extend_by')}</legend>
        {presets.map(([v, label]) => (
          <label class="inline" key={v}>
            <input type="radio" name="extend" value={v} checked={choice === v} onChange={() => setChoice(v)} /> {label}
          </label>
        ))}
        {choice === 'minutes' && (
          <p><label for="extend-minutes">{t('l_minutes')}</label>
            <input id="extend-minutes" type="number" min={1} max={525600} value={minutes} onInput={(e) => setMinutes((e.target as HTMLInputElement).value)} /></p>
        )}
      </fieldset>
    </ConfirmDialog>
  );
}

function BlockDialog(props: { mac: string; onCancel(): void; onConfirm(d: BlockDuration): void }): preact.JSX.Element {
  const { t } = useConsole();
  const [choice, setChoice] = useState<BlockDuration>('24h');
  const options = [['24h', t('l_block_24h')], ['7d', t('l_block_7d')], ['permanent', t('l_block_permanent')]] as const;
  return (
    <ConfirmDialog title={t('l_block_title', { mac: props.mac })} confirmLabel={t('l_block', { mac: props.mac })} danger
      onCancel={props.onCancel} onConfirm={() => props.onConfirm(choice)}>
      <fieldset>
        <legend>{t('l_block_for')}</legend>
        {options.map(([v, label]) => (
          <label class="inline" key={v}><input type="radio" name="block" value={v} checked={choice === v} onChange={() => setChoice(v)} /> {label}</label>
        ))}
      </fieldset>
    </ConfirmDialog>
  );
}
