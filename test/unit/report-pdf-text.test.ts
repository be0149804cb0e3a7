import { describe, expect, it } from 'vitest';
import { DEVICE_TYPES } from '../../engine/reports/device-type.js';
import { REPORT_METHODS } from '../../engine/reports/hour-figures.js';
import type { ReportFigures } from '../../engine/reports/report-document.js';
import { bytes, rangeInWords, REPORT_WORDS, reportNotes } from '../../engine/reports/report-pdf-text.js';

function figures(over: Partial<ReportFigures>): ReportFigures {
  return {
    sessions: 0, uniqueDevices: 0, avgDurationMinutes: 0, peakHour: null, bytesIn: 0, bytesOut: 0,
    daily: [{ date: '2026-03-29', sessions: 0, avgDurationMinutes: 0, bytesIn: 0, bytesOut: 0 }], hours: new Array<number>(24).fill(0),
    methods: REPORT_METHODS.map((method) => ({ method, sessions: 0 })), devices: DEVICE_TYPES.map((type) => ({ type, sessions: 0 })),
    previous: { from: '2026-03-28', to: '2026-03-28', sessions: 0 }, ...over,
  };
}

/** The PDF report's words: the notes are made from the figures alone, in both languages. */
describe('PDF report notes', () => {
  it('a one-day report compares with the day before, in the singular, and names no busiest day', () => {
    const f = figures({
      sessions: 30, peakHour: 23, avgDurationMinutes: 75, previous: { from: '2026-03-28', to: '2026-03-28', sessions: 40 },
      methods: REPORT_METHODS.map((method) => ({ method, sessions: method === 'pms' ? 30 : 0 })),
    });
    const en = reportNotes('en', f, 1);
    expect(en).toContain('Most sessions started between 23:00 and 00:00.');
    expect(en).toContain('The leading sign-in method was Hotel room (PMS), with 100% of sessions.');
    expect(en).toContain('A session lasted 1 h 15 min on average.');
    expect(en).toContain('Sessions fell by 25% against the previous day (28 March 2026: 40).');
    expect(en.some((n) => n.includes('busiest'))).toBe(false);
    expect(reportNotes('tr', f, 1)).toContain('Oturum sayısı önceki 1 güne (28 Mart 2026: 40) göre %25 azaldı.');
  });

  it('no session: the sentence that says so, and the fall from the previous period when it had some', () => {
    expect(reportNotes('en', figures({}), 1)).toEqual(['There was no session in this period.']);
    expect(reportNotes('tr', figures({ previous: { from: '2026-03-28', to: '2026-03-28', sessions: 5 } }), 1))
      .toEqual(['Bu dönemde hiç oturum olmadı.', 'Oturum sayısı önceki 1 güne (28 Mart 2026: 5) göre %100 azaldı.']);
  });

  it('no session before: nothing to compare with; as many: unchanged', () => {
    expect(reportNotes('en', figures({ sessions: 3 }), 7).at(-1)).toBe('There was no session in the previous 7 days (28 March 2026), so there is nothing to compare with.');
    expect(reportNotes('en', figures({ sessions: 3, previous: { from: '2026-03-22', to: '2026-03-28', sessions: 3 } }), 7).at(-1))
      .toBe('Sessions were as many as in the previous 7 days (22 March 2026 – 28 March 2026: 3).');
  });

  it('numbers, bytes and dates in each language', () => {
    expect(bytes('en', 1_234_567_890)).toBe('1.2 GB');
    expect(bytes('tr', 1_234_567_890)).toBe('1,2 GB');
    expect(bytes('en', 999)).toBe('999 B');
    expect(rangeInWords('tr', '2026-02-01', '2026-02-28')).toBe('1 Şubat 2026 – 28 Şubat 2026');
    expect(REPORT_WORDS.tr.minutes(60)).toBe('1 sa');
  });
});
