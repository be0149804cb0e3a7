import { randomInt } from 'node:crypto';

/** How generated codes look. */
export interface CodeFormat {
  charset: 'alphanumeric' | 'numeric';
  /** Characters of randomness, not counting prefix and separators. */
  length: number;
  /** Insert `separator` every `group_size` characters; 0: no grouping. */
  group_size: number;
  separator: string;
  letter_case: 'upper' | 'lower';
  prefix: string;
}

export const DEFAULT_CODE_FORMAT: CodeFormat = {
  charset: 'alphanumeric', length: 8, group_size: 0, separator: '-', letter_case: 'upper', prefix: '',
};

// No look-alikes: 0/O, 1/I/L are left out, so a code read off a printed card
// or a screen is typed right the first time.
const ALPHANUMERIC = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const NUMERIC = '0123456789';

/** One random code in the given format (uniform over the alphabet, crypto-grade randomness). */
export function generateCode(format: CodeFormat): string {
  const alphabet = format.charset === 'numeric' ? NUMERIC : ALPHANUMERIC;
  let raw = '';
  for (let i = 0; i < format.length; i++) raw += alphabet[randomInt(alphabet.length)];
  if (format.letter_case === 'lower') raw = raw.toLowerCase();
  if (format.group_size > 0) {
    const groups: string[] = [];
    for (let i = 0; i < raw.length; i += format.group_size) groups.push(raw.slice(i, i + format.group_size));
    raw = groups.join(format.separator);
  }
  return format.prefix + raw;
}

/** How many distinct codes the format can produce. */
export function codeSpace(format: CodeFormat): number {
  return Math.pow(format.charset === 'numeric' ? NUMERIC.length : ALPHANUMERIC.length, format.length);
}
