import { Errors } from '../engine/index.js';

/*
 * Text no store can hold, refused once for every request in the router
 * (issue 18, item 9): a field holding it would fail the first query that
 * uses it (a 500), or let a change stand while its audit record went to the
 * dead letters.
 */

/** How JSON writes U+0000 (a raw 0x00 byte is no valid JSON); `%00` is a form's. */
const NUL_JSON = Buffer.from('\\u0000');
const NUL_FORM = Buffer.from('%00');

/**
 * Refuses text holding U+0000 anywhere in the request (path, query, body)
 * with 400 validation_failed. Postgres can neither store nor compare such
 * text (SQLSTATE 22021): a hotspot id, a voucher id or a name holding it
 * would otherwise fail the first query that uses it, as a 500. The parsed
 * body is walked only when its raw bytes hold NUL in some form, so an
 * ordinary request pays a few byte searches of its body.
 */
export function refuseNul(names: string[], params: string[], query: URLSearchParams, raw: Buffer | null, body: unknown): void {
  let field: string | null = null;
  for (let i = 0; i < params.length && field === null; i++) if (params[i]!.includes('\0')) field = names[i] ?? `parameter ${i + 1}`;
  if (field === null) {
    for (const [k, v] of query) {
      if (k.includes('\0') || v.includes('\0')) {
        field = k.replaceAll('\0', '\\u0000');
        break;
      }
    }
  }
  if (field === null && raw && (raw.includes(NUL_JSON) || raw.includes(NUL_FORM) || raw.includes(0))) field = textField(body, '', (t) => t.includes('\0'));
  if (field !== null) {
    throw Errors.VALIDATION_FAILED(`${field || 'body'} holds the NUL character (U+0000), which no text may hold`,
      [{ field, message: 'must not contain U+0000' }]);
  }
}

/** The field (dotted, as validation errors name them) of the first string, value or key, in `v` that is `bad`; or null. */
function textField(v: unknown, path: string, bad: (text: string) => boolean): string | null {
  if (typeof v === 'string') return bad(v) ? path : null;
  const at = (k: string | number): string => (path ? `${path}.${k}` : String(k));
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const f = textField(v[i], at(i), bad);
      if (f !== null) return f;
    }
    return null;
  }
  if (v !== null && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      if (bad(k)) return at(printable(k));
      const f = textField(x, at(k), bad);
      if (f !== null) return f;
    }
  }
  return null;
}

/** A key as an error message may quote it: NUL and lone surrogates written as JSON escapes. */
function printable(k: string): string {
  return JSON.stringify(k).slice(1, -1);
}

/** How JSON writes a UTF-16 surrogate (`\\uD800`-`\\uDFFF`, either case); a raw surrogate cannot reach a string (invalid UTF-8 decodes to U+FFFD). */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/;
/** A high surrogate not followed by a low one, or a low one not after a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Refuses a JSON body holding a lone surrogate (`"\\uD800"` alone) with 400
 * validation_failed, before anything changes: Postgres refuses such text
 * (jsonb and UTF-8 text alike), so a change that stored it would fail half
 * way, or stand while its audit record went to the dead letters. Once here
 * for every route; the body is walked only when its bytes hold a surrogate
 * escape at all (a pair, an emoji, is fine).
 */
export function refuseLoneSurrogates(raw: Buffer | null, body: unknown): void {
  if (raw === null || !SURROGATE_ESCAPE.test(raw.toString('latin1'))) return;
  const field = textField(body, '', (t) => LONE_SURROGATE.test(t));
  if (field !== null) {
    throw Errors.VALIDATION_FAILED(`${field || 'body'} holds a lone UTF-16 surrogate, which is not text`,
      [{ field, message: 'must not contain a lone surrogate (U+D800-U+DFFF)' }]);
  }
}
