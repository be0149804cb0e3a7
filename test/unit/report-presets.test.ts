import { describe, expect, it } from 'vitest';
import { AppError } from '../../engine/errors.js';
import { presetRange } from '../../engine/reports/report-presets.js';
import { localDate } from '../../engine/util/local-day.js';

const at = (iso: string): number => Date.parse(iso);
const range = (preset: string, zone: string, now: string) => {
  const r = presetRange(preset, zone, at(now));
  return [r.from, r.to, r.days];
};

describe('report presets: dates in the venue zone at the instant asked', () => {
  it('one instant is a different "today" ahead of UTC (Istanbul, +3) and behind it (New York, -5)', () => {
    const now = '2026-11-28T22:30:00Z'; // 01:30 on the 29th in Istanbul, 17:30 on the 28th in New York
    expect(range('today', 'Europe/Istanbul', now)).toEqual(['2026-11-29', '2026-11-29', 1]);
    expect(range('today', 'America/New_York', now)).toEqual(['2026-11-28', '2026-11-28', 1]);
    expect(range('yesterday', 'Europe/Istanbul', now)).toEqual(['2026-11-28', '2026-11-28', 1]);
    expect(range('yesterday', 'America/New_York', now)).toEqual(['2026-11-27', '2026-11-27', 1]);
    // The default, "last 7 days", is the 7 days ending today.
    expect(range('last_7_days', 'Europe/Istanbul', now)).toEqual(['2026-11-23', '2026-11-29', 7]);
    expect(presetRange(undefined, 'America/New_York', at(now))).toMatchObject({ from: '2026-11-22', to: '2026-11-28', days: 7, preset: 'last_7_days' });
    expect(range('last_30_days', 'America/New_York', now)).toEqual(['2026-10-30', '2026-11-28', 30]);
    expect(range('last_90_days', 'Europe/Istanbul', now)).toEqual(['2026-09-01', '2026-11-29', 90]);
  });

  it('year and month edges: the new year has begun in Istanbul, not yet in New York', () => {
    const now = '2026-12-31T22:00:00Z';
    expect(range('this_year', 'Europe/Istanbul', now)).toEqual(['2027-01-01', '2027-01-01', 1]);
    expect(range('last_month', 'Europe/Istanbul', now)).toEqual(['2026-12-01', '2026-12-31', 31]);
    expect(range('this_month', 'Europe/Istanbul', now)).toEqual(['2027-01-01', '2027-01-01', 1]);
    expect(range('this_year', 'America/New_York', now)).toEqual(['2026-01-01', '2026-12-31', 365]);
    expect(range('this_month', 'America/New_York', now)).toEqual(['2026-12-01', '2026-12-31', 31]);
    expect(range('last_month', 'America/New_York', now)).toEqual(['2026-11-01', '2026-11-30', 30]);
    // 1 March: February still in New York (its last month January), March in Istanbul; 2028 is a leap year.
    expect(range('this_month', 'America/New_York', '2026-03-01T03:00:00Z')).toEqual(['2026-02-01', '2026-02-28', 28]);
    expect(range('last_month', 'America/New_York', '2026-03-01T03:00:00Z')).toEqual(['2026-01-01', '2026-01-31', 31]);
    expect(range('last_month', 'Europe/Istanbul', '2026-03-01T03:00:00Z')).toEqual(['2026-02-01', '2026-02-28', 28]);
    expect(range('last_month', 'Europe/Istanbul', '2028-03-10T12:00:00Z')).toEqual(['2028-02-01', '2028-02-29', 29]);
  });

  it('a DST week: the offset of the instant counts, not the zone\'s winter offset', () => {
    // New York springs forward on Sunday 8 March 2026 (02:00 EST -> 03:00 EDT). 04:30Z on the 9th is 00:30 EDT
    // on the 9th; a fixed winter offset (-5) would say 23:30 on the 8th.
    expect(range('today', 'America/New_York', '2026-03-09T04:30:00Z')).toEqual(['2026-03-09', '2026-03-09', 1]);
    expect(range('yesterday', 'America/New_York', '2026-03-09T04:30:00Z')).toEqual(['2026-03-08', '2026-03-08', 1]);
    expect(range('last_7_days', 'America/New_York', '2026-03-09T04:30:00Z')).toEqual(['2026-03-03', '2026-03-09', 7]);
    // It falls back on Sunday 1 November 2026: 04:30Z is still 00:30 EDT on the 1st (the 25-hour day is one day).
    expect(range('today', 'America/New_York', '2026-11-01T04:30:00Z')).toEqual(['2026-11-01', '2026-11-01', 1]);
    expect(range('today', 'America/New_York', '2026-11-02T04:30:00Z')).toEqual(['2026-11-01', '2026-11-01', 1]);
    // Auckland (ahead of UTC, southern DST) ends summer time on Sunday 5 April 2026: 11:30Z on the 4th is 00:30 NZDT on the 5th.
    expect(range('today', 'Pacific/Auckland', '2026-04-04T11:30:00Z')).toEqual(['2026-04-05', '2026-04-05', 1]);
    expect(range('today', 'Pacific/Auckland', '2026-04-05T11:30:00Z')).toEqual(['2026-04-05', '2026-04-05', 1]); // 23:30 NZST
  });

  it('custom takes from and to with the public reports\' checks; an unknown preset is refused; an unknown zone reads as UTC', () => {
    expect(presetRange('custom', 'Europe/Istanbul', 0, '2024-01-01', '2024-12-31')).toMatchObject({ from: '2024-01-01', to: '2024-12-31', days: 366, preset: 'custom' });
    const code = (f: () => unknown): string => { try { f(); return 'none'; } catch (e) { return (e as AppError).code; } };
    expect(code(() => presetRange('custom', 'UTC', 0, '2024-01-01', '2025-01-01'))).toBe('report_range_too_long');
    expect(code(() => presetRange('custom', 'UTC', 0, '2024-01-02', '2024-01-01'))).toBe('report_range_reversed');
    expect(code(() => presetRange('custom', 'UTC', 0, undefined, '2024-01-01'))).toBe('report_date_invalid');
    expect(code(() => presetRange('last_week', 'UTC', 0))).toBe('validation_failed');
    expect(localDate(at('2026-11-28T23:30:00Z'), 'Not/AZone')).toBe('2026-11-28');
  });
});
