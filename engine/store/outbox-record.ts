/**
 * The outbox entry's shape: one stream field, `rec`, holding the record as a
 * JSON object of text fields (`type`, `sid`, `at`, ...). The Lua scripts
 * write it with cjson.encode, AuditLog with JSON.stringify.
 *
 * One field rather than a field pair per value: the sink's reply parser
 * makes a Buffer and a string for every field of every entry it reads, and
 * with a dozen pairs that was a third of the garbage the sink's thread made
 * per record (bench/RESULTS.md, audit-sink). Entries queued in the older
 * shape, a field pair per value, are still read (a backlog across an
 * upgrade).
 */

/** A record's fields as its producer queued them. */
export type OutboxFields = Readonly<Record<string, string | undefined>>;

/** The one field an outbox entry carries its record in. */
export const RECORD_FIELD = 'rec';

/** The stream field list to queue a record with (XADD key * ...outboxEntry(fields)). */
export function outboxEntry(fields: Record<string, string>): [string, string] {
  return [RECORD_FIELD, JSON.stringify(fields)];
}

/**
 * A stream entry's record. A value that is not text (cjson writes a Lua
 * number or false as such) becomes text or ''; a U+0000 becomes U+FFFD
 * (storable). Throws SyntaxError for a `rec` that is not a JSON object.
 */
export function outboxFields(list: readonly string[]): OutboxFields {
  if (list.length === 2 && list[0] === RECORD_FIELD) {
    const json = list[1]!;
    const o: unknown = JSON.parse(json);
    if (o === null || typeof o !== 'object' || Array.isArray(o)) throw new SyntaxError('outbox record is not a JSON object');
    const f = o as Record<string, unknown>;
    // The usual record: every value a string (each key's colon followed by a quote; a colon inside
    // a string is not preceded by an unescaped quote), none with U+0000. Nothing to mend, then.
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
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) f[list[i]!] = storable(list[i + 1]!);
  return f;
}

/** In a JSON object's text: a value that may not be a string (`"key":` followed by anything but a quote). */
const ANY_NOT_TEXT = /":[^"]/;

/**
 * Text as Postgres can store it. A text or jsonb value may not hold U+0000,
 * and one refused row fails its whole batch again on every retry, holding
 * back every record behind it: so a NUL (from a NAS attribute, say) becomes
 * U+FFFD before the record is hashed into its chain and stored.
 */
export function storable(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}
