import { describe, expect, it } from 'vitest';
import { endTime } from '../../http/routes/portal-page.js';

/** The confirmation's "until ...": the time alone today, with the date on another day, in the hotspot's time zone. */
describe('portal confirmation end time', () => {
  // 23:19 in Istanbul (UTC+3).
  const now = Date.parse('2026-11-24T20:19:00Z');

  it('gives the time alone when the session ends today where the hotspot is', () => {
    expect(endTime(new Date(now + 30 * 60_000), 'tr', 'Europe/Istanbul', now)).toBe('23:49');
    expect(endTime(new Date(now + 30 * 60_000), 'en', 'Europe/Istanbul', now)).toBe('23:49');
  });

  it('adds the date when it ends on another day: a 24-hour session ends at this same clock time tomorrow', () => {
    expect(endTime(new Date(now + 86_400_000), 'tr', 'Europe/Istanbul', now)).toBe('25 Kasım 23:19');
    expect(endTime(new Date(now + 86_400_000), 'en', 'Europe/Istanbul', now)).toBe('25 November at 23:19');
    // One hour on is already tomorrow in Istanbul, though still today in UTC.
    expect(endTime(new Date(now + 3_600_000), 'en', 'Europe/Istanbul', now)).toBe('25 November at 00:19');
    expect(endTime(new Date(now + 3_600_000), 'en', 'UTC', now)).toBe('21:19');
  });
});
