import { createHmac, hkdfSync } from 'node:crypto';
import { Errors } from '../errors.js';
import { normalizeMac } from '../ids.js';
import { maskUsername } from '../sessions/session-service.js';
import { normalizeEmail, normalizePhone } from '../signin/otp/identity.js';

export const SUBJECT_KINDS = ['phone', 'email', 'mac'] as const;
export type SubjectKind = (typeof SUBJECT_KINDS)[number];

/** Who a data-subject request is about: one phone number, e-mail address or device MAC, normalised as the stores hold it. */
export interface Subject {
  kind: SubjectKind;
  /** As the stores hold it: E.164, lower-case e-mail, `AA:BB:CC:DD:EE:FF`. */
  value: string;
  /** The spellings a store may hold it under (a MAC also lower-case and dashed): what a scan looks for. */
  needles: string[];
  /** Keyed hash of kind and value: what the audit chain, holds and closed requests keep instead of the value. */
  ref: string;
  /** What a person reading a list sees. */
  masked: string;
  /** What replaces the value where a record must stay but need not say who (`erased-<12 hex>`): one pseudonym per subject, so counts of distinct devices still add up. */
  pseudonym: string;
}

/**
 * Subject references are keyed so that a closed request, a hold or an audit record cannot be turned
 * back into a phone number by hashing every number there is (a phone number has few enough
 * possibilities for that). The key is derived from the OTP key (OTP_KEY, or from JWT_SECRET) under
 * its own label: no new secret to manage, and never the OTP key itself.
 */
export class SubjectKeys {
  private readonly key: Buffer;
  constructor(otpKey: Uint8Array) {
    this.key = Buffer.from(hkdfSync('sha256', otpKey, Buffer.alloc(0), 'guest-wifi privacy subject ref v1', 32));
  }

  /** The subject from a request body's `{phone}`, `{email}` or `{mac}`; 400 validation_failed when it is not exactly one valid value. */
  parse(tenantId: string, input: { phone?: string; email?: string; mac?: string }): Subject {
    const given = SUBJECT_KINDS.filter((k) => input[k] !== undefined);
    if (given.length !== 1) {
      throw Errors.VALIDATION_FAILED('subject names exactly one of phone, email or mac', [{ field: 'subject', message: 'exactly one of phone, email, mac' }]);
    }
    const kind = given[0]!;
    const raw = input[kind]!;
    const value = kind === 'phone' ? normalizePhone(raw) : kind === 'email' ? normalizeEmail(raw) : normalizeMac(raw);
    if (!value) throw Errors.VALIDATION_FAILED(`subject.${kind} is not a valid ${kind}`, [{ field: `subject.${kind}`, message: 'is not valid' }]);
    return this.of(tenantId, kind, value);
  }

  /** A subject from its normalised value. */
  of(tenantId: string, kind: SubjectKind, value: string): Subject {
    const mac = kind === 'mac';
    const ref = createHmac('sha256', this.key).update(`${tenantId}\n${kind}\n${value}`).digest('hex');
    return {
      kind, value, ref: `sref_${ref.slice(0, 32)}`,
      needles: mac ? [...new Set([value, value.toLowerCase(), value.replace(/:/g, '-'), value.replace(/:/g, '-').toLowerCase()])] : [value],
      masked: mac ? `${value.slice(0, 11)}:**:**` : (maskUsername(value) ?? ''),
      pseudonym: `erased-${ref.slice(32, 44)}`,
    };
  }
}

/**
 * The characters an identity is made of (an e-mail address's, a phone number's, a MAC's in either
 * spelling): a spelling counts only where neither neighbour is one of them, so `bob@mail.co` is not
 * found in `jimbob@mail.com` nor `+9055512345` in a longer number. Key segments (`:`), JSON quotes,
 * spaces and `=` bound a value.
 */
const IDENT = 'A-Za-z0-9@._+-';
const reEscape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&');
const wholeRe = (s: Subject): RegExp => new RegExp(`(?<![${IDENT}])(?:${s.needles.map(reEscape).join('|')})(?![${IDENT}])`, 'g');

/** A test for any of the subjects' spellings as a whole value (one expression for all of them: one pass over each text). */
export function namesAny(subjects: Subject[]): (text: string) => boolean {
  const re = new RegExp(`(?<![${IDENT}])(?:${subjects.flatMap((s) => s.needles).map(reEscape).join('|')})(?![${IDENT}])`);
  return subjects.length === 0 ? () => false : (text) => re.test(text);
}

/** `text` with every whole-value spelling of the subject replaced by its pseudonym. */
export function pseudonymise(text: string, s: Subject): string {
  return text.replace(wholeRe(s), s.pseudonym);
}

/**
 * Postgres regular expressions (`~ ANY($n)`) for the subjects' spellings as whole values, with the
 * same bounds as namesAny(): what a query matches in a jsonb column's text instead of LIKE '%v%'.
 */
export function wholeValuePatterns(subjects: Subject[]): string[] {
  return subjects.flatMap((s) => s.needles).map((n) => `(^|[^${IDENT}])${reEscape(n)}($|[^${IDENT}])`);
}
