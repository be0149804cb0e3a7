import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A prefixed random id (`vch_`, `hs_`, `ses_`, ...): 16 characters of base 36
 * from 16 random bytes, about 82 bits; collisions are not a practical concern.
 */
export function newId(prefix: string): string {
  const bytes = randomBytes(16);
  let out = prefix;
  for (let i = 0; i < 16; i++) out += ALPHABET[bytes[i]! % 36];
  return out;
}

/** Canonical MAC form: upper case, colon separated. Returns null when not a MAC. */
export function normalizeMac(input: string): string | null {
  const hex = input.replace(/[:\-.\s]/g, '');
  if (!/^[0-9a-fA-F]{12}$/.test(hex)) return null;
  const up = hex.toUpperCase();
  return up.match(/../g)!.join(':');
}
