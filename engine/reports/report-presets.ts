import { Errors } from '../errors.js';
import { addDays, localDate } from '../util/local-day.js';
import { reportRange, type ReportRange } from './report-range.js';

/** The console's period presets (contract: GET /api/v1/reports/console). */
export const REPORT_PRESETS = ['today', 'yesterday', 'last_7_days', 'last_30_days', 'last_90_days', 'this_month', 'last_month', 'this_year', 'custom'] as const;
export type ReportPreset = (typeof REPORT_PRESETS)[number];

/**
 * A preset as dates in `zone` at the instant `nowMs`, both ends included:
 * "today" is the zone's calendar day at that instant (a date, so a day of 23
 * or 25 hours at a DST change is still one day); "last 7 days" the 7 days
 * ending today; "this month" and "this year" run to today; "last month" is
 * the whole previous calendar month. `custom` checks from/to as the public
 * reports do (report_date_invalid, report_range_reversed, report_range_too_long).
 */
export function presetRange(preset: string | undefined, zone: string, nowMs: number, from?: string, to?: string): ReportRange & { preset: ReportPreset } {
  const p = (preset ?? 'last_7_days') as ReportPreset;
  if (!REPORT_PRESETS.includes(p)) {
    throw Errors.VALIDATION_FAILED(`preset must be one of ${REPORT_PRESETS.join(', ')}`, [{ field: 'preset', message: 'is not a known preset' }]);
  }
  if (p === 'custom') return { ...reportRange(from, to), preset: p };
  const today = localDate(nowMs, zone);
  const monthStart = `${today.slice(0, 7)}-01`;
  const last = (n: number): [string, string] => [addDays(today, -(n - 1)), today];
  const [f, t]: [string, string] = p === 'today' ? [today, today]
    : p === 'yesterday' ? [addDays(today, -1), addDays(today, -1)]
      : p === 'last_7_days' ? last(7)
        : p === 'last_30_days' ? last(30)
          : p === 'last_90_days' ? last(90)
            : p === 'this_month' ? [monthStart, today]
              : p === 'last_month' ? [`${addDays(monthStart, -1).slice(0, 7)}-01`, addDays(monthStart, -1)]
                : [`${today.slice(0, 4)}-01-01`, today];
  return { ...reportRange(f, t), preset: p };
}
