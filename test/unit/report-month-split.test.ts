import { describe, expect, it } from 'vitest';
import { monthSplit } from '../../engine/reports/report-service.js';

const NONE = ['2000-01-02', '2000-01-01'];

describe('monthSplit', () => {
  it('a day inside a month is an edge, no month', () => {
    expect(monthSplit('2026-03-29', '2026-03-29')).toEqual({ months: [], edges: [['2026-03-29', '2026-03-29'], NONE] });
  });
  it('a whole month is that month, no edge', () => {
    expect(monthSplit('2024-02-01', '2024-02-29')).toEqual({ months: ['2024-02-01'], edges: [NONE, NONE] });
  });
  it('a leap year and a day: twelve months and the last day', () => {
    const s = monthSplit('2024-01-01', '2024-12-31');
    expect(s.months).toHaveLength(12);
    expect(monthSplit('2025-01-01', '2026-01-01')).toEqual({
      months: ['2025-01-01', '2025-02-01', '2025-03-01', '2025-04-01', '2025-05-01', '2025-06-01', '2025-07-01', '2025-08-01', '2025-09-01',
        '2025-10-01', '2025-11-01', '2025-12-01'],
      edges: [NONE, ['2026-01-01', '2026-01-01']],
    });
  });
  it('partial months at both ends are edges', () => {
    expect(monthSplit('2025-01-15', '2025-04-10')).toEqual({
      months: ['2025-02-01', '2025-03-01'], edges: [['2025-01-15', '2025-01-31'], ['2025-04-01', '2025-04-10']],
    });
    expect(monthSplit('2025-01-15', '2025-02-10')).toEqual({ months: [], edges: [['2025-01-15', '2025-02-10'], NONE] });
  });
});
