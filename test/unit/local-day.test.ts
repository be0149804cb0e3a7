import { describe, expect, it } from 'vitest';
import { localDay } from '../../engine/util/local-day.js';

// localDay keeps its answer per UTC minute; these instants sit on either side of local midnights.
describe('localDay (the day a daily quota belongs to)', () => {
  it('turns at local midnight, not UTC midnight', () => {
    // Istanbul is UTC+3 all year: its 2026-11-23 begins at 2026-11-22T21:00Z.
    expect(localDay('Europe/Istanbul', Date.parse('2026-11-22T20:59:59.999Z'))).toBe('20261122');
    expect(localDay('Europe/Istanbul', Date.parse('2026-11-22T21:00:00.000Z'))).toBe('20261123');
    expect(localDay('UTC', Date.parse('2026-11-22T21:00:00.000Z'))).toBe('20261122');
  });

  it('is right in a zone whose offset is not a whole hour, asked out of order', () => {
    // Kathmandu is UTC+5:45: its 2026-11-23 begins at 2026-11-22T18:15Z.
    const tz = 'Asia/Kathmandu';
    expect(localDay(tz, Date.parse('2026-11-22T18:15:00.000Z'))).toBe('20261123');
    expect(localDay(tz, Date.parse('2026-11-22T18:14:59.999Z'))).toBe('20261122');
    expect(localDay(tz, Date.parse('2026-11-22T18:14:00.000Z'))).toBe('20261122');
    expect(localDay(tz, Date.parse('2026-11-22T18:15:30.000Z'))).toBe('20261123');
  });

  it('follows a daylight-saving change', () => {
    // New York: EDT (UTC-4) until 2026-11-01 06:00Z, then EST (UTC-5).
    expect(localDay('America/New_York', Date.parse('2026-11-01T03:59:00.000Z'))).toBe('20261031');
    expect(localDay('America/New_York', Date.parse('2026-11-01T04:00:00.000Z'))).toBe('20261101');
    expect(localDay('America/New_York', Date.parse('2026-11-02T04:59:59.000Z'))).toBe('20261101');
    expect(localDay('America/New_York', Date.parse('2026-11-02T05:00:00.000Z'))).toBe('20261102');
  });
});
