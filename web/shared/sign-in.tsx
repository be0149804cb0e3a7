import { useState } from 'preact/hooks';
import { errorSentence, request } from './api.js';
import { useI18n, type Translate } from './i18n.js';
import type { SharedKey } from './messages.js';
import { exchange, type Session } from './session.js';

/**
 * The sign-in form: one labelled field for the API key (or an operator JWT),
 * exchanged at POST /api/v1/auth/session for a one-hour session token. An
 * error is a sentence in a summary at the top that links to the field
 * (GOV.UK error summary), and focus moves to it so a screen reader hears it.
 */
export function SignIn(props: { title: string; notice?: string | null; onSignedIn(s: Session): void }): preact.JSX.Element {
  const { t: lookup } = useI18n();
  const t = lookup as Translate<SharedKey>;
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const s = await exchange(key, (path, body) => request<Session>(path, { method: 'POST', body, anonymous: true }));
      props.onSignedIn(s);
    } catch (err) {
      setError(errorSentence(err, lookup));
      setBusy(false);
    }
  };

  return (
    <main id="main" class="signin">
      <p class="brand">{props.title}</p>
      <h1>{t('signin_title')}</h1>
      {props.notice && !error && <p class="notice" role="status">{props.notice}</p>}
      {error && (
        <div class="error-summary" role="alert" tabIndex={-1} ref={(el) => el?.focus()}>
          <h2>{t('error_title')}</h2>
          <a href="#api-key">{error}</a>
        </div>
      )}
      <form onSubmit={submit} noValidate>
        <p>{t('signin_intro')}</p>
        <label for="api-key">{t('signin_key')}</label>
        <p class="hint" id="api-key-hint">{t('signin_key_hint')}</p>
        <input id="api-key" name="api_key" type="password" autoComplete="off" spellcheck={false} required
          aria-describedby="api-key-hint" aria-invalid={error ? 'true' : undefined}
          value={key} onInput={(e) => setKey((e.target as HTMLInputElement).value)} />
        <button type="submit" disabled={busy || key.trim() === ''}>{busy ? t('signin_busy') : t('signin_submit')}</button>
        <p class="hint">{t('signin_where')}</p>
      </form>
    </main>
  );
}
