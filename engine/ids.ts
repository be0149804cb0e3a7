import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A prefixed random id (`vch_`, `hs_`, `ses_`, ...): 16 characters of base 36
 * from 16 random bytes, about 82 bits; collisions are not a practical concern.
 */
export function newId(prefix: string): string {
  if (poolOffset + 16 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  let out = prefix;
  for (let i = 0; i < 16; i++) out += ALPHABET[pool[poolOffset + i]! % 36];
  poolOffset += 16;
  return out;
}

// Random bytes drawn 4 KiB at a time: one getrandom call per 256 ids instead of one each
// (ids are made on every sign-in). The bytes are used once and never leave the process.
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** The character codes of 0-9 and A-F. */
const HEX_UPPER = [48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 65, 66, 67, 68, 69, 70];
/** normalizeMac's twelve digits, kept between its loop and its one String.fromCharCode. */
const NIBBLES = new Uint8Array(12);

/**
 * Canonical MAC form: upper case, colon separated. Accepts colons, hyphens,
 * dots or nothing between the digits (AA:BB.., aa-bb-.., aabb.ccdd.eeff,
 * aabbccddeeff). Returns null when not a MAC. A character loop, not regular
 * expressions, and the result made in one call rather than added up a
 * character at a time (a string V8 then had to flatten): it runs for every
 * RADIUS packet.
 */
export function normalizeMac(input: string): string | null {
  if (input.length < 12 || input.length > 17) return null;
  let digits = 0;
  for (let i = 0; i < input.length; i++) {
    const c = input.charCodeAt(i);
    let v: number;
    if (c >= 48 && c <= 57) v = c - 48;
    else if (c >= 65 && c <= 70) v = c - 55;
    else if (c >= 97 && c <= 102) v = c - 87;
    else if (c === 58 || c === 45 || c === 46) continue;
    else return null;
    if (digits === 12) return null;
    NIBBLES[digits++] = v;
  }
  if (digits !== 12) return null;
  const n = NIBBLES, h = HEX_UPPER;
  return String.fromCharCode(h[n[0]!]!, h[n[1]!]!, 58, h[n[2]!]!, h[n[3]!]!, 58, h[n[4]!]!, h[n[5]!]!, 58,
    h[n[6]!]!, h[n[7]!]!, 58, h[n[8]!]!, h[n[9]!]!, 58, h[n[10]!]!, h[n[11]!]!);
}
