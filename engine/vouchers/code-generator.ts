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

// No look-alikes: 0/O, 1/I/L are left out, so a code read off a printed card
// or a screen is typed right the first time.
const ALPHANUMERIC = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const NUMERIC = '0123456789';

/**
 * The strength a generated code has by default, in bits. With the guessing
 * limits (10 unknown codes per device, 300 per address in 10 minutes), a
 * guesser against 10,000 live codes of 40 bits needs about 1.1e8 tries for
 * one hit: years of a whole venue's addresses.
 */
export const MIN_CODE_BITS = 40;

const alphabetOf = (charset: CodeFormat['charset']): string => (charset === 'numeric' ? NUMERIC : ALPHANUMERIC);

/** The shortest length of `charset` worth MIN_CODE_BITS: 9 alphanumeric (44.5 bits), 13 digits (43.1 bits). */
export function defaultCodeLength(charset: CodeFormat['charset']): number {
  return Math.ceil(MIN_CODE_BITS / Math.log2(alphabetOf(charset).length));
}

export const DEFAULT_CODE_FORMAT: CodeFormat = {
  charset: 'alphanumeric', length: defaultCodeLength('alphanumeric'), group_size: 0, separator: '-', letter_case: 'upper', prefix: '',
};

/** A format as asked for, completed: the length left out is the 40-bit default of the charset asked for. */
export function codeFormat(asked: Partial<CodeFormat> = {}): CodeFormat {
  const charset = asked.charset ?? DEFAULT_CODE_FORMAT.charset;
  return { ...DEFAULT_CODE_FORMAT, ...asked, charset, length: asked.length ?? defaultCodeLength(charset) };
}

/** What a creation answer says about its codes' strength: bits of randomness, and a warning when below MIN_CODE_BITS. */
export interface CodeStrength {
  /** log2 of the codes a format can produce (one decimal); for a chosen code, an upper bound from its length and characters. */
  entropy_bits: number;
  warnings: { code: 'weak_codes'; message: string }[];
}

function strength(bits: number, what: string): CodeStrength {
  const entropy = Math.floor(bits * 10) / 10;
  return {
    entropy_bits: entropy,
    warnings: bits >= MIN_CODE_BITS ? [] : [{
      code: 'weak_codes',
      message: `${what} ${entropy} bits, below the ${MIN_CODE_BITS} bits generated codes have by default: `
        + 'easier to guess despite the guessing limits; prefer a longer length or the alphanumeric charset',
    }],
  };
}

/** The strength of generated codes of `format` (the prefix and separators add none). */
export function codeStrength(format: CodeFormat): CodeStrength {
  return strength(format.length * Math.log2(alphabetOf(format.charset).length), `Codes of ${format.length} ${format.charset} characters are worth`);
}

/**
 * The most a chosen code can be worth: its length times the bits of the
 * character classes it uses (digits, upper and lower case, `_` and `-`). A
 * word or a date is worth far less; this only catches codes too short to be strong.
 */
export function chosenCodeStrength(code: string): CodeStrength {
  const classes: [RegExp, number][] = [[/[0-9]/, 10], [/[A-Z]/, 26], [/[a-z]/, 26], [/[_-]/, 2]];
  const alphabet = classes.reduce((n, [re, size]) => (re.test(code) ? n + size : n), 0);
  return strength(code.length * Math.log2(Math.max(alphabet, 1)), `A chosen code of ${code.length} characters is worth at most`);
}

/** One random code in the given format (uniform over the alphabet, crypto-grade randomness). */
export function generateCode(format: CodeFormat): string {
  const alphabet = alphabetOf(format.charset);
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
  return Math.pow(alphabetOf(format.charset).length, format.length);
}
