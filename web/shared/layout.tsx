import type { ComponentChildren } from 'preact';
import { LANGS, useI18n, type Lang } from './i18n.js';
import type { SharedKey } from './messages.js';
import type { Session } from './session.js';

export interface NavItem {
  /** The hash route, e.g. '/vouchers'. */
  path: string;
  label: string;
}

/**
 * The frame of every signed-in page: a skip link, the app's name, the
 * tenant, when the session ends, the language choice and sign-out, and the
 * labelled navigation. The page itself brings its own h1.
 */
export function Layout(props: {
  title: string; session: Session; nav: NavItem[]; current: string; onSignOut(): void; children: ComponentChildren;
}): preact.JSX.Element {
  const { t: tr, lang, setLang, locale } = useI18n();
  const t = tr as (k: SharedKey, v?: Record<string, string | number>) => string;
  const until = new Date(props.session.expires_at).toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit' });
  return (
    <div class="frame">
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById('main')?.focus(); }}>{t('skip_to_content')}</a>
      <header class="top">
        <span class="brand">{props.title}</span>
        <span class="tenant">{t('signed_in_as', { tenant: props.session.tenant.name })}</span>
        <span class="until">{t('session_until', { time: until })}</span>
        <LangSelect lang={lang} setLang={setLang} label={t('lang_label')} names={{ tr: t('lang_tr'), en: t('lang_en') }} />
        <button type="button" class="link" onClick={props.onSignOut}>{t('sign_out')}</button>
      </header>
      <nav aria-label={t('nav_label')} class="nav">
        <ul>
          {props.nav.map((n) => (
            <li key={n.path}>
              <a href={`#${n.path}`} aria-current={props.current === n.path ? 'page' : undefined}>{n.label}</a>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>{props.children}</main>
    </div>
  );
}

/** The language choice; labelled in the current language, each option named in its own. */
export function LangSelect(props: { lang: Lang; setLang(l: Lang): void; label: string; names: Record<Lang, string> }): preact.JSX.Element {
  return (
    <span class="lang">
      <label for="lang-select">{props.label}</label>
      <select id="lang-select" value={props.lang} onChange={(e) => props.setLang((e.target as HTMLSelectElement).value as Lang)}>
        {LANGS.map((l) => <option key={l} value={l} lang={l}>{props.names[l]}</option>)}
      </select>
    </span>
  );
}
