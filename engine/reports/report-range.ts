import { Errors } from '../errors.js';

/** The longest range a report covers, both ends included (the spec: 366 days, a leap year). */
export const REPORT_MAX_DAYS = 366;

/** A report's range: calendar dates (YYYY-MM-DD) in the hotspot's zone, both included. */
export interface ReportRange {
  from: string;
  to: string;
  /** Days covered, both ends included. */
  days: number;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of a calendar date, or null when it is no real date (2025-02-30). */
function dayNumber(s: string): number | null {
  const m = DATE.exec(s);
  if (!m) return null;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  // Date.UTC rolls 02-30 over into March: a real date comes back as itself.
  return new Date(ms).toISOString().slice(0, 10) === s ? ms / DAY_MS : null;
}

/**
 * Checks a report's `from` and `to`: real calendar dates as YYYY-MM-DD, `to`
 * not before `from`, at most REPORT_MAX_DAYS days both ends included (366
 * allowed, 367 refused). Calendar arithmetic only: which instants a date
 * covers is the hotspot zone's business, later.
 */
export function reportRange(from: string | undefined, to: string | undefined): ReportRange {
  const f = dayNumber(from ?? '');
  if (f === null) throw Errors.REPORT_DATE_INVALID('from', from ?? '');
  const t = dayNumber(to ?? '');
  if (t === null) throw Errors.REPORT_DATE_INVALID('to', to ?? '');
  if (t < f) throw Errors.REPORT_RANGE_REVERSED(from!, to!);
  const days = t - f + 1;
  if (days > REPORT_MAX_DAYS) throw Errors.REPORT_RANGE_TOO_LONG(days, REPORT_MAX_DAYS);
  return { from: from!, to: to!, days };
}
