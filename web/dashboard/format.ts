import type { Translate } from '../shared/index.js';
import type { DashboardKey } from './messages.js';

/** Numbers, percentages, sizes and times in the operator's language; null shows as the catalogue's "n/a". */

export const num = (locale: string, n: number): string => n.toLocaleString(locale);

export function pct(locale: string, t: Translate<DashboardKey>, n: number | null): string {
  if (n === null) return t('value_none');
  return (n / 100).toLocaleString(locale, { style: 'percent', maximumFractionDigits: 1 });
}

const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

export function bytes(locale: string, n: number): string {
  let v = n;
  let i = 0;
  while (v >= 1000 && i < BYTE_UNITS.length - 1) {
    v /= 1000;
    i += 1;
  }
  return `${v.toLocaleString(locale, { maximumFractionDigits: v < 10 && i > 0 ? 1 : 0 })} ${BYTE_UNITS[i]}`;
}

export const clock = (locale: string, iso: string | number): string =>
  new Date(iso).toLocaleTimeString(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

export const dateTime = (locale: string, iso: string): string =>
  new Date(iso).toLocaleString(locale, { day: '2-digit', month: 'short', hour: '2-digit', minute: '2-digit' });

/** An age as the stale sign says it: seconds under two minutes, then minutes, then hours. */
export function age(t: Translate<DashboardKey>, ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return t('age_s', { n: s });
  if (s < 7200) return t('age_min', { n: Math.floor(s / 60) });
  return t('age_h', { n: Math.floor(s / 3600) });
}

/** A duration in seconds as minutes (and seconds under ten minutes). */
export function duration(locale: string, t: Translate<DashboardKey>, sec: number): string {
  const min = sec / 60;
  return t('unit_min', { n: min.toLocaleString(locale, { maximumFractionDigits: min < 10 ? 1 : 0 }) });
}
