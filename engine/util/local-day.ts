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
