/**
 * Guest identities for OTP sign-in: phone numbers in E.164, e-mail addresses,
 * and the prefix a number is limited and allowed by.
 */

const SEPARATORS = /[\s\-().\u00a0]/g;

/**
 * A phone number in E.164 (`+905321234567`), or null. Accepts the
 * international forms people type: `+90 532 123 45 67`, `0090-532-...`,
 * with spaces, hyphens, dots or brackets. A national form (`0532...`) is
 * refused: we cannot know the country. E.164 allows at most 15 digits and
 * no country code starts with 0; Turkish numbers (+90) have 10 digits after
 * the country code.
 */
export function normalizePhone(raw: string): string | null {
  let s = raw.replace(SEPARATORS, '');
  if (s.startsWith('00')) s = '+' + s.slice(2);
  if (!/^\+[1-9][0-9]{7,14}$/.test(s)) return null;
  if (s.startsWith('+90') && s.length !== 13) return null;
  return s;
}

/**
 * Whether codes may go to this (E.164) number under the tenant's lists:
 * a blocked prefix refuses, and a non-empty allowed list must hold one of
 * its prefixes. Prefixes are written `+90`, `+9053`, ...
 */
export function prefixAllowed(phone: string, allowed: readonly string[], blocked: readonly string[]): boolean {
  if (blocked.some((p) => phone.startsWith(p))) return false;
  return allowed.length === 0 || allowed.some((p) => phone.startsWith(p));
}

/** The subject of the per-prefix send limit: the number's first `digits` digits (`+90532` for 5). */
export function limitPrefix(phone: string, digits: number): string {
  return phone.slice(0, 1 + digits);
}

// Deliberately plain: a local part, one @, a domain with a dot; no spaces or control characters.
const EMAIL = /^[^\s@\u0000-\u001f\u007f]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** An e-mail address in the form codes are keyed by (trimmed, lower case), or null. */
export function normalizeEmail(raw: string): string | null {
  const s = raw.trim().toLowerCase();
  return s.length <= 254 && EMAIL.test(s) ? s : null;
}

/** The subject of the per-prefix limit for e-mail: the domain. */
export function emailDomain(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1);
}
