import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CODE_FORMAT, MIN_CODE_BITS, chosenCodeStrength, codeFormat, codeSpace, codeStrength, defaultCodeLength, generateCode,
} from '../../engine/vouchers/code-generator.js';

/**
 * Generated voucher codes default to at least 40 bits whatever the charset
 * asked for; a shorter format stays possible, and its strength comes with a
 * warning the creation answers carry.
 */
describe('voucher code strength', () => {
  it('defaults to a length worth at least 40 bits for each charset', () => {
    expect(defaultCodeLength('alphanumeric')).toBe(9);
    expect(defaultCodeLength('numeric')).toBe(13);
    for (const charset of ['alphanumeric', 'numeric'] as const) {
      const f = codeFormat({ charset });
      expect(Math.log2(codeSpace(f)), charset).toBeGreaterThanOrEqual(MIN_CODE_BITS);
      expect(codeStrength(f).warnings).toEqual([]);
      expect(generateCode(f)).toHaveLength(f.length);
    }
    expect(Math.log2(codeSpace(DEFAULT_CODE_FORMAT))).toBeGreaterThanOrEqual(MIN_CODE_BITS);
    expect(codeStrength(DEFAULT_CODE_FORMAT).entropy_bits).toBe(44.5);
    expect(codeFormat({}).length).toBe(9);
    expect(codeFormat({ charset: 'numeric', group_size: 4 })).toMatchObject({ charset: 'numeric', length: 13, group_size: 4 });
  });

  it('keeps a shorter format when asked for, and warns', () => {
    const four = codeFormat({ charset: 'numeric', length: 4 });
    expect(four.length).toBe(4);
    const s = codeStrength(four);
    expect(s.entropy_bits).toBe(13.2);
    expect(s.warnings).toEqual([{ code: 'weak_codes', message: expect.stringContaining('13.2 bits, below the 40 bits') }]);
  });

  it('bounds a chosen code by its length and characters', () => {
    expect(chosenCodeStrength('abc')).toMatchObject({ entropy_bits: 14.1, warnings: [{ code: 'weak_codes' }] });
    expect(chosenCodeStrength('1234')).toMatchObject({ entropy_bits: 13.2, warnings: [{ code: 'weak_codes' }] });
    expect(chosenCodeStrength('Pass-Word_2024xyz').warnings).toEqual([]);
  });
});
