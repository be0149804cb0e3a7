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

const HEX_UPPER = '0123456789ABCDEF';

/**
 * Canonical MAC form: upper case, colon separated. Accepts colons, hyphens,
 * dots or nothing between the digits (AA:BB.., aa-bb-.., aabb.ccdd.eeff,
 * aabbccddeeff). Returns null when not a MAC. A character loop, not regular
 * expressions: it runs for every RADIUS packet.
 */
export function normalizeMac(input: string): string | null {
  if (input.length < 12 || input.length > 17) return null;
  let out = '';
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
    if (digits > 0 && digits % 2 === 0) out += ':';
    out += HEX_UPPER[v];
    digits++;
  }
  return digits === 12 ? out : null;
}
