import { describe, expect, it } from 'vitest';
import { catchUp, localTime, nextPeriod, periodsDue } from '../../engine/schedules/schedule-periods.js';

const iso = (ms: number): string => new Date(ms).toISOString();
const at = (s: string): number => Date.parse(s);

describe('scheduled report due times (engine/schedules/schedule-periods.ts)', () => {
  it('Berlin, spring change (2026-03-29, 23 hours): the daily mail of that day and of the next both go at 08:00 on the wall clock', () => {
    // 08:00 on the 28th is CET (UTC+1); the change is at 02:00, so 08:00 on the 29th is already CEST (UTC+2).
    expect(iso(localTime('2026-03-28', 8, 'Europe/Berlin'))).toBe('2026-03-28T07:00:00.000Z');
    expect(iso(localTime('2026-03-29', 8, 'Europe/Berlin'))).toBe('2026-03-29T06:00:00.000Z');
    const due = periodsDue('daily', 'Europe/Berlin', at('2026-03-28T12:00:00Z'), at('2026-03-30T12:00:00Z'));
    expect(due.map((p) => [p.from, p.to, iso(p.dueAt)])).toEqual([
      // The mail of the 30th covers the 23-hour day: one day, not 23/24 of one.
      ['2026-03-28', '2026-03-28', '2026-03-29T06:00:00.000Z'],
      ['2026-03-29', '2026-03-29', '2026-03-30T06:00:00.000Z'],
    ]);
    // 23 hours between the sends of the 28th and the 29th, 24 after: 08:00 on the wall clock each time.
    expect(due[0]!.dueAt - localTime('2026-03-28', 8, 'Europe/Berlin')).toBe(23 * 3_600_000);
    expect(due[1]!.dueAt - due[0]!.dueAt).toBe(24 * 3_600_000);
    expect(localTime('2026-03-30', 0, 'Europe/Berlin') - localTime('2026-03-29', 0, 'Europe/Berlin')).toBe(23 * 3_600_000);
  });

  it('Berlin, autumn change (2026-10-25, 25 hours): one day, one mail, 08:00 CET after 08:00 CEST', () => {
    const due = periodsDue('daily', 'Europe/Berlin', at('2026-10-24T12:00:00Z'), at('2026-10-27T12:00:00Z'));
    expect(due.map((p) => [p.from, iso(p.dueAt)])).toEqual([
      ['2026-10-24', '2026-10-25T07:00:00.000Z'],
      ['2026-10-25', '2026-10-26T07:00:00.000Z'],
      ['2026-10-26', '2026-10-27T07:00:00.000Z'],
    ]);
    expect(localTime('2026-10-26', 0, 'Europe/Berlin') - localTime('2026-10-25', 0, 'Europe/Berlin')).toBe(25 * 3_600_000);
  });

  it('a zone behind UTC (America/New_York, and its 2026-11-01 change): 08:00 local is 12:00Z in summer, 13:00Z in winter', () => {
    const due = periodsDue('daily', 'America/New_York', at('2026-10-31T00:00:00Z'), at('2026-11-02T23:00:00Z'));
    expect(due.map((p) => [p.from, iso(p.dueAt)])).toEqual([
      ['2026-10-30', '2026-10-31T12:00:00.000Z'],
      ['2026-10-31', '2026-11-01T13:00:00.000Z'],
      ['2026-11-01', '2026-11-02T13:00:00.000Z'],
    ]);
    // At 03:00Z on the 1st it is still 23:00 on the 31st in New York: the next mail is the 1st's, for the 31st.
    expect(nextPeriod('daily', 'America/New_York', at('2026-11-01T03:00:00Z'))).toMatchObject({ from: '2026-10-31', to: '2026-10-31' });
    // Honolulu (UTC-10, no DST): a UTC day ahead of the local one for ten hours.
    expect(iso(nextPeriod('daily', 'Pacific/Honolulu', at('2026-06-01T05:00:00Z')).dueAt)).toBe('2026-06-01T18:00:00.000Z');
  });

  it('weekly: Monday 08:00, the previous Monday to Sunday, across the Berlin autumn change', () => {
    const due = periodsDue('weekly', 'Europe/Berlin', at('2026-10-13T00:00:00Z'), at('2026-11-03T00:00:00Z'));
    expect(due.map((p) => [p.from, p.to, iso(p.dueAt)])).toEqual([
      ['2026-10-12', '2026-10-18', '2026-10-19T06:00:00.000Z'],
      ['2026-10-19', '2026-10-25', '2026-10-26T07:00:00.000Z'],
      ['2026-10-26', '2026-11-01', '2026-11-02T07:00:00.000Z'],
    ]);
  });

  it('monthly: day 1 at 08:00, the whole previous month (February of a leap year, December into January)', () => {
    const due = periodsDue('monthly', 'Europe/Istanbul', at('2027-12-15T00:00:00Z'), at('2028-03-01T06:00:00Z'));
    expect(due.map((p) => [p.from, p.to, iso(p.dueAt)])).toEqual([
      ['2027-12-01', '2027-12-31', '2028-01-01T05:00:00.000Z'],
      ['2028-01-01', '2028-01-31', '2028-02-01T05:00:00.000Z'],
      ['2028-02-01', '2028-02-29', '2028-03-01T05:00:00.000Z'],
    ]);
    // Berlin: 1 April is after the spring change, 1 November after the autumn one.
    expect(iso(nextPeriod('monthly', 'Europe/Berlin', at('2026-03-15T00:00:00Z')).dueAt)).toBe('2026-04-01T06:00:00.000Z');
    expect(iso(nextPeriod('monthly', 'Europe/Berlin', at('2026-10-15T00:00:00Z')).dueAt)).toBe('2026-11-01T07:00:00.000Z');
  });

  it('the due time itself is due (inclusive), the moment before is not; a period due exactly at `after` is not due again', () => {
    const due = localTime('2026-05-05', 8, 'Europe/Istanbul');
    expect(periodsDue('daily', 'Europe/Istanbul', due - 60_000, due - 1)).toEqual([]);
    expect(periodsDue('daily', 'Europe/Istanbul', due - 60_000, due)).toHaveLength(1);
    expect(periodsDue('daily', 'Europe/Istanbul', due, due + 3_600_000)).toEqual([]);
  });

  it('catch-up keeps the newest 31 periods, oldest first, and skips the older ones', () => {
    const due = periodsDue('daily', 'UTC', at('2026-01-01T09:00:00Z'), at('2026-03-01T09:00:00Z'));
    expect(due).toHaveLength(59);
    const { send, skip } = catchUp(due);
    expect(send).toHaveLength(31);
    expect(skip).toHaveLength(28);
    expect(send[0]!.from).toBe('2026-01-29');
    expect(send[30]!.from).toBe('2026-02-28');
    expect(skip[27]!.from).toBe('2026-01-28');
    expect(catchUp(due.slice(0, 3))).toEqual({ send: due.slice(0, 3), skip: [] });
  });
});
