import { useState } from 'preact/hooks';
import { api, usePoll, type Block } from '../../shared/index.js';
import { ConfirmDialog, OutcomeLine, useAction, useConsole, when } from '../ui.js';

/** Blocked devices: the list (timed blocks until they run out, permanent ones until removed) and removal. */
export function BlocksPage(): preact.JSX.Element {
  const { t, say, locale } = useConsole();
  const list = usePoll((signal) => api.blocks.list(signal), null);
  const [removing, setRemoving] = useState<Block | null>(null);
  const act = useAction();
  const rows = list.data?.data ?? [];
  const durations: Record<Block['duration'], string> = { '24h': t('l_block_24h'), '7d': t('l_block_7d'), permanent: t('b_permanent') };
  return (
    <>
      <h1>{t('b_title')}</h1>
      {list.error ? <p class="error-summary" role="alert">{say(list.error)}</p> : null}
      <OutcomeLine outcome={act.outcome} />
      {list.data && rows.length === 0 ? <p>{t('none_yet')}</p> : (
        <table>
          <thead><tr><th scope="col">{t('b_col_mac')}</th><th scope="col">{t('b_col_duration')}</th><th scope="col">{t('b_col_until')}</th><th scope="col">{t('l_col_actions')}</th></tr></thead>
          <tbody>
            {rows.map((b) => (
              <tr key={b.mac}>
                <td class="mono">{b.mac}</td><td>{durations[b.duration]}</td><td>{b.until ? when(b.until, locale) : t('never')}</td>
                <td><button type="button" class="secondary" aria-label={t('b_remove', { mac: b.mac })} onClick={() => setRemoving(b)}>{t('b_remove_short')}</button></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {removing && (
        <ConfirmDialog title={t('b_remove_confirm', { mac: removing.mac })} confirmLabel={t('b_remove', { mac: removing.mac })}
          onCancel={() => setRemoving(null)} onConfirm={() => {
            const b = removing;
            setRemoving(null);
            void act.run(async () => { await api.blocks.remove(b.mac); list.reload(); return t('b_removed', { mac: b.mac }); });
          }} />
      )}
    </>
  );
}
