interface DayFormat {
  format: Intl.DateTimeFormat;
  minute: number;
  day: string;
}
/**
 * One formatter and last answer per time zone, per thread. Module state on
 * purpose: it is a memo of a pure function, bounded by the number of IANA
 * zones, and every actor of a thread shares it.
 */
const dayFormats = new Map<string, DayFormat>();

/**
 * yyyymmdd of the instant in the hotspot's time zone: the day a daily quota
 * belongs to. Every zone's offset is a whole number of minutes, so a local
 * day never changes inside a UTC minute: the answer is kept per minute, and
 * the formatter (a few microseconds) runs once a minute per zone.
 */
export function localDay(tz: string, ms: number): string {
  let f = dayFormats.get(tz);
  if (!f) {
    f = { format: new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' }), minute: NaN, day: '' };
    dayFormats.set(tz, f);
  }
  const minute = Math.floor(ms / 60_000);
  if (minute !== f.minute) {
    f.day = f.format.format(ms).replace(/-/g, '');
    f.minute = minute;
  }
  return f.day;
}

/**
 * The calendar date (YYYY-MM-DD) instant `ms` falls on in `zone`, DST
 * included; an unknown zone reads as UTC, as report_zone does in Postgres.
 * The reports' and the schedules' local day (localDay's memo, dashed).
 */
export function localDate(ms: number, zone: string): string {
  let d: string;
  try {
    d = localDay(zone, ms);
  } catch {
    d = localDay('UTC', ms);
  }
  return `${d.slice(0, 4)}-${d.slice(4, 6)}-${d.slice(6)}`;
}

/** A calendar date `n` days after `day` (YYYY-MM-DD); zone-free, so a day of 23 or 25 hours is still one day. */
export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}

/** A zone name the runtime knows, else UTC (a tenant setting or a CSV column may hold anything). */
export function knownZone(zone: string | null | undefined): string {
  if (!zone) return 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return 'UTC';
  }
}
