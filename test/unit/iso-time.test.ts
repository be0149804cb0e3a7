import { describe, expect, it } from 'vitest';
import { isoTime } from '../../engine/util/iso-time.js';

describe('isoTime', () => {
  it('is toISOString, for times that share a slot and times seen again', () => {
    const base = Date.UTC(2026, 10, 24, 16, 0, 0, 0);
    // 256 apart: the same slot, so each replaces the other's text.
    for (const ms of [base, base + 256, base, base + 1, base + 86_400_000, -1, 0, base + 256, 8.64e15, -8.64e15, 2 ** 32 + 5]) {
      expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('throws RangeError for a time that is not one', () => {
    for (const bad of [NaN, 8.64e15 + 1, Infinity]) expect(() => isoTime(bad)).toThrow(RangeError);
  });
});
