/**
 * When a scheduled report falls due and which days it covers, in a venue's
 * zone, as the spec's console reports ask: daily at 08:00 local (the day before), weekly on Monday at
 * 08:00 (the previous 7 days, Monday to Sunday), monthly on day 1 at 08:00 (the
 * previous month). Pure calendar arithmetic on local dates, turned into
 * instants only for the due time, so a day of 23 or 25 hours (a daylight-saving
 * change) is still one day and 08:00 stays 08:00 on the wall clock.
 */
import { addDays, localDate } from '../util/local-day.js';

export type Frequency = 'daily' | 'weekly' | 'monthly';
export const FREQUENCIES: readonly Frequency[] = ['daily', 'weekly', 'monthly'];

/** The local hour a period is sent at. */
export const DUE_HOUR = 8;

/**
 * At most this many periods are caught up after downtime, the newest ones; older
 * due periods are recorded as skipped (a month of daily mails, or 31 weeks or
 * months: past that the mails would bury the recent ones, and the reports
 * can still be asked for through the API).
 */
export const CATCH_UP_MAX = 31;

/** One period of a schedule: the local days it covers (both included) and when it is sent. */
export interface Period {
  /** YYYY-MM-DD, local. */
  from: string;
  to: string;
  /** The instant of 08:00 local on the day after `to`, ms since the epoch. */
  dueAt: number;
}

/** ISO weekday of a date: 1 Monday .. 7 Sunday. */
function weekday(day: string): number {
  return ((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7) + 1;
}

/** The first day of the month after the one of `day`. */
function nextMonthStart(day: string): string {
  const y = Number(day.slice(0, 4));
  const m = Number(day.slice(5, 7));
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
}

/**
 * One formatter per zone, made once: building an Intl.DateTimeFormat costs
 * tens of microseconds, and every scheduler pass asks a few instants of every
 * schedule. Bounded by the zones the runtime knows (about 600); a formatter
 * holds no state between calls.
 */
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = FORMATTERS.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    FORMATTERS.set(zone, f);
  }
  return f;
}

/** The wall-clock fields of instant `ms` in `zone`. */
function wall(ms: number, zone: string): { date: string; hour: number; minute: number; second: number } {
  const parts = formatter(zone).formatToParts(new Date(ms));
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? '00';
  return { date: `${get('year')}-${get('month')}-${get('day')}`, hour: Number(get('hour')), minute: Number(get('minute')), second: Number(get('second')) };
}

/** The zone's offset from UTC at instant `ms`, ms (east positive). */
function offsetAt(ms: number, zone: string): number {
  const w = wall(ms, zone);
  const asUtc = Date.parse(`${w.date}T00:00:00Z`) + ((w.hour * 60 + w.minute) * 60 + w.second) * 1000;
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** The wall clock of instant `ms` in `zone`, `YYYY-MM-DD HH:MM` (what a late mail says). */
export function localClock(ms: number, zone: string): string {
  const w = wall(ms, zone);
  return `${w.date} ${String(w.hour).padStart(2, '0')}:${String(w.minute).padStart(2, '0')}`;
}

/**
 * The instant of `hour`:00 local on `day` in `zone`. Two passes of the
 * offset settle a change between the guess and the answer; a wall time a
 * spring change skips (none at 08:00 in today's zones) is taken at the
 * offset before the change, i.e. an hour later on the new clock.
 */
export function localTime(day: string, hour: number, zone: string): number {
  const guess = Date.parse(`${day}T00:00:00Z`) + hour * 3_600_000;
  const first = guess - offsetAt(guess, zone);
  const second = guess - offsetAt(first, zone);
  return Math.max(first, second);
}

/** The period sent on local date `sendDay` (which must be a send day of `f`). */
function periodSentOn(f: Frequency, sendDay: string, zone: string): Period {
  const dueAt = localTime(sendDay, DUE_HOUR, zone);
  const to = addDays(sendDay, -1);
  if (f === 'daily') return { from: to, to, dueAt };
  if (f === 'weekly') return { from: addDays(sendDay, -7), to, dueAt };
  return { from: `${to.slice(0, 7)}-01`, to, dueAt };
}

/** The first send day of `f` on or after `day`. */
function sendDayFrom(f: Frequency, day: string): string {
  if (f === 'daily') return day;
  if (f === 'weekly') return addDays(day, (8 - weekday(day)) % 7);
  return day.endsWith('-01') ? day : nextMonthStart(day);
}

/** The send day after `day` (a send day). */
function nextSendDay(f: Frequency, day: string): string {
  if (f === 'daily') return addDays(day, 1);
  if (f === 'weekly') return addDays(day, 7);
  return nextMonthStart(day);
}

/**
 * The periods of `f` in `zone` whose due time is after `afterMs` and at or
 * before `nowMs`, oldest first.
 */
export function periodsDue(f: Frequency, zone: string, afterMs: number, nowMs: number): Period[] {
  const out: Period[] = [];
  // A day before the local date of afterMs: its 08:00 may still be after afterMs in no zone, but the
  // margin costs one step and spares reasoning about zones far from UTC.
  for (let d = sendDayFrom(f, addDays(localDate(afterMs, zone), -1)); ; d = nextSendDay(f, d)) {
    const p = periodSentOn(f, d, zone);
    if (p.dueAt > nowMs) break;
    if (p.dueAt > afterMs) out.push(p);
  }
  return out;
}

/** The first period of `f` in `zone` due after `afterMs` (what `next_run_at` shows). */
export function nextPeriod(f: Frequency, zone: string, afterMs: number): Period {
  for (let d = sendDayFrom(f, addDays(localDate(afterMs, zone), -1)); ; d = nextSendDay(f, d)) {
    const p = periodSentOn(f, d, zone);
    if (p.dueAt > afterMs) return p;
  }
}

/**
 * The catch-up rule: of the periods due, the newest CATCH_UP_MAX are sent
 * (oldest first), the rest recorded as skipped.
 */
export function catchUp(due: Period[], max = CATCH_UP_MAX): { send: Period[]; skip: Period[] } {
  const cut = Math.max(0, due.length - max);
  return { skip: due.slice(0, cut), send: due.slice(cut) };
}
