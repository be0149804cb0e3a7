import { createContext } from 'preact';
import { useContext } from 'preact/hooks';

/** The two languages of every page; Turkish is the default where the browser names neither. */
export type Lang = 'tr' | 'en';
export const LANGS: readonly Lang[] = ['tr', 'en'];

/** A page's message catalogue: the same keys in both languages (the English object's type is the key list). */
export type Catalogue<M extends Record<string, string>> = Record<Lang, M>;

const LANG_KEY = 'gw.lang';

/** The operator's remembered choice, else the browser's language, else Turkish. */
export function initialLang(): Lang {
  try {
    const saved = localStorage.getItem(LANG_KEY);
    if (saved === 'tr' || saved === 'en') return saved;
  } catch {
    // storage refused (private mode, policy): fall through to the browser's language
  }
  for (const tag of navigator.languages ?? [navigator.language]) {
    const base = tag.toLowerCase().split('-')[0];
    if (base === 'tr' || base === 'en') return base;
  }
  return 'tr';
}

/** Remembers the choice across visits (localStorage: a language is no secret, unlike the session). */
export function saveLang(lang: Lang): void {
  try {
    localStorage.setItem(LANG_KEY, lang);
  } catch {
    // not remembered; the choice still holds for this page
  }
  document.documentElement.lang = lang;
}

/** `{name}` placeholders filled from vars; unknown ones are left visible so a missing value shows in review. */
export function format(text: string, vars?: Record<string, string | number>): string {
  if (!vars) return text;
  return text.replace(/\{(\w+)\}/g, (all, k: string) => (k in vars ? String(vars[k]) : all));
}

/** Looks a key up; a key missing from the catalogue shows as itself rather than as nothing. */
export type Translate<K extends string = string> = (key: K, vars?: Record<string, string | number>) => string;

export interface I18nValue {
  lang: Lang;
  setLang(lang: Lang): void;
  t: Translate;
  /** Numbers and dates in the chosen language. */
  locale: string;
}

export const I18nContext = createContext<I18nValue>({ lang: 'tr', setLang: () => undefined, t: (k) => k, locale: 'tr-TR' });

/** A translator over one catalogue in one language. */
export function translator(messages: Record<string, string>): Translate {
  return (key, vars) => format(messages[key] ?? key, vars);
}

/** The current language context; pages cast `t` to their catalogue's keys with `useT<K>()`. */
export function useI18n(): I18nValue {
  return useContext(I18nContext);
}

/** The translator, typed to the keys of a page's catalogue. */
export function useT<K extends string>(): Translate<K> {
  return useContext(I18nContext).t as Translate<K>;
}

export const localeOf = (lang: Lang): string => (lang === 'tr' ? 'tr-TR' : 'en-GB');
