import { RECORD } from '../redis/records.js';

/**
 * The outbox entry's shape, as the Lua scripts queue session events: two
 * stream fields, `type` (session_start, session_end, session_extend) and
 * `rec`, the whole record as a JSON object of text fields (`type`, `sid`,
 * `at`, ...), written by cjson.encode. The records' fields are defined in
 * engine/redis/records.ts.
 *
 * One JSON field rather than a field pair per value: the sink's reply parser
 * makes a Buffer and a string for every field of every entry it reads, and
 * with a dozen pairs that was a third of the garbage the sink's thread made
 * per record (bench/RESULTS.md, audit-sink). `type` stays a field of its own
 * for a sink of an older version (a rolling upgrade): it reads such an entry
 * as a record of that type with every other field missing, which Postgres
 * refuses, so the entry goes to the dead-letter stream whole instead of
 * being dropped as a record of no known type.
 *
 * Operator events (AuditLog, a few a minute) and entries queued by an older
 * version are a field pair per value, and are read as such.
 */

/** A record's fields as its producer queued them. */
export type OutboxFields = Readonly<Record<string, string | undefined>>;

/** The field an outbox entry carries its record in, as JSON. */
export const RECORD_FIELD = 'rec';

/**
 * The record types the sink stores; an entry of any other is moved to the
 * dead letters. `voucher_use` is the session start as versions before the
 * method-neutral start queued it: entries of it may still wait in a stream.
 */
export const RECORD_TYPES: ReadonlySet<string> = new Set(Object.values(RECORD));

/**
 * A stream entry's record. A value that is not text (cjson writes a Lua
 * number or false as such) becomes text or ''; a U+0000 becomes U+FFFD
 * (storable). Throws SyntaxError for a `rec` that is not a JSON object.
 */
export function outboxFields(list: readonly string[]): OutboxFields {
  for (let i = 0; i + 1 < list.length; i += 2) {
    if (list[i] === RECORD_FIELD) return fromJson(list[i + 1]!);
  }
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) f[list[i]!] = storable(list[i + 1]!);
  return f;
}

function fromJson(json: string): OutboxFields {
  const o: unknown = JSON.parse(json);
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new SyntaxError('outbox record is not a JSON object');
  const f = o as Record<string, unknown>;
  // The usual record: every value a string (whatever follows a key's colon is a quote), none with
  // U+0000. Nothing to mend, then. A colon in a string value can only make this look further.
  if (!ANY_NOT_TEXT.test(json) && !json.includes('\\u0000')) return f as OutboxFields;
  for (const k in f) {
    const v = f[k];
    if (typeof v === 'string') {
      if (v.includes('\0')) f[k] = storable(v);
    } else {
      f[k] = v === null || v === undefined || v === false ? '' : storable(typeof v === 'object' ? JSON.stringify(v) : String(v));
    }
  }
  return f as OutboxFields;
}

/** In a JSON object's text: a value that may not be a string (a key's colon, then anything but a quote). */
const ANY_NOT_TEXT = /"\s*:\s*[^"\s]/;

/**
 * Text as Postgres can store it. A text or jsonb value may not hold U+0000,
 * and one refused row fails its whole batch again on every retry, holding
 * back every record behind it: so a NUL (from a NAS attribute, say) becomes
 * U+FFFD before the record is hashed into its chain and stored.
 */
export function storable(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}
