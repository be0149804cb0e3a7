import { render, type ComponentChildren } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { onUnauthorized, request } from './api.js';
import { I18nContext, initialLang, localeOf, saveLang, translator, type Catalogue, type Lang } from './i18n.js';
import { LangSelect, Layout, type NavItem } from './layout.js';
import { sharedMessages, type SharedKey } from './messages.js';
import { clearSession, loadSession, refresh, REFRESH_BEFORE_MS, remainingMs, type Session } from './session.js';
import { SignIn } from './sign-in.js';

/** A refresh that failed on the network is tried again this often, until the session ends. */
const RETRY_REFRESH_MS = 60_000;

/** The current hash route ('#/vouchers' -> '/vouchers'); pages are addressed by hash so the server serves one HTML. */
export function useHashRoute(fallback: string): string {
  const read = (): string => (location.hash.startsWith('#/') ? location.hash.slice(1).split('?')[0]! : fallback);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const on = (): void => setRoute(read());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export interface ShellProps<M extends Record<string, string>> {
  /** The app's own messages; merged over the shared ones. */
  catalogue: Catalogue<M>;
  /** The catalogue key of the app's name. */
  titleKey: SharedKey | keyof M;
  /** The navigation, built in the chosen language. */
  nav(t: (k: keyof M & string) => string): NavItem[];
  /** The page of a route (the first nav entry's when the hash names none). */
  page(route: string, session: Session): ComponentChildren;
}

/**
 * Everything an app has before its pages: the language (remembered), the
 * session (signed in or the sign-in form; back to it on a 401 or when the
 * token runs out), and the layout.
 */
export function Shell<M extends Record<string, string>>(props: ShellProps<M>): preact.JSX.Element {
  const [lang, setLangState] = useState<Lang>(initialLang);
  const [session, setSession] = useState<Session | null>(() => loadSession());
  const [notice, setNotice] = useState<string | null>(null);
  const i18n = useMemo(() => {
    const t = translator({ ...sharedMessages[lang], ...props.catalogue[lang] });
    return { lang, locale: localeOf(lang), t, setLang: (l: Lang) => { saveLang(l); setLangState(l); } };
  }, [lang]);
  const navItems = props.nav(i18n.t);
  const route = useHashRoute(navItems[0]?.path ?? '/');

  useEffect(() => { document.documentElement.lang = lang; }, [lang]);
  useEffect(() => onUnauthorized(() => { setSession(null); setNotice('session_expired'); }), []);
  // The token's own expiry: back to sign-in when it passes, without waiting for a request to fail.
  useEffect(() => {
    if (!session) return;
    const timer = setTimeout(() => { clearSession(); setSession(null); setNotice('session_expired'); }, Math.max(0, remainingMs(session)));
    return () => clearTimeout(timer);
  }, [session]);
  // A session begun with an API key is refreshed before it ends (a dashboard on a wall screen stays up); a failed try
  // (the network) is retried each minute until the end, a refusal (the key revoked) signs out as any 401 does.
  useEffect(() => {
    if (!session?.renewable) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const attempt = (): void => {
      refresh((path) => request<Session>(path, { method: 'POST' })).then(setSession, () => {
        if (remainingMs(session) > RETRY_REFRESH_MS) timer = setTimeout(attempt, RETRY_REFRESH_MS);
      });
    };
    timer = setTimeout(attempt, Math.max(0, remainingMs(session) - REFRESH_BEFORE_MS));
    return () => clearTimeout(timer);
  }, [session]);

  const title = i18n.t(String(props.titleKey));
  useEffect(() => { document.title = title; }, [title]);
  return (
    <I18nContext.Provider value={i18n}>
      {session ? (
        <Layout title={title} session={session} nav={navItems} current={route}
          onSignOut={() => { clearSession(); setSession(null); setNotice(null); }}>
          {props.page(route, session)}
        </Layout>
      ) : (
        <>
          <div class="top">
            <LangSelect lang={lang} setLang={i18n.setLang} label={i18n.t('lang_label')} names={{ tr: i18n.t('lang_tr'), en: i18n.t('lang_en') }} />
          </div>
          <SignIn title={title} notice={notice ? i18n.t(notice) : null} onSignedIn={(s) => { setNotice(null); setSession(s); }} />
        </>
      )}
    </I18nContext.Provider>
  );
}

/** Mounts an app into #app. */
export function mountApp(app: preact.JSX.Element): void {
  render(app, document.getElementById('app')!);
}
