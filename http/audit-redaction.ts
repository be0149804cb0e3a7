import type { Schema } from './schemas.js';

/**
 * Redaction of operator audit details by the route's own body schema.
 *
 * A field of a request schema marked `writeOnly: true` (JSON Schema's own
 * annotation, kept in the OpenAPI document; `secret()` in schemas.ts sets it)
 * is a secret: it may be written, never read back. The audit chain is read
 * back (the audit day API, the evidence pack) and cannot be edited once a
 * record is linked, so a secret must never reach it. The router runs every
 * route's audit note through `redactor(route.bodySchema)`: a route's audit
 * function cannot forget, whatever it copies (the body, part of it, or an
 * answer that echoes it).
 *
 * Two rules, both applied to the whole details object:
 * - by name: a key named like a write-only field of the schema, holding
 *   anything but null, becomes "[set]" (null stays: clearing a secret is not one);
 * - by value: any string equal to, or containing, a secret value of this
 *   request's body becomes "[set]" (a route that copies a secret under
 *   another name, or into a longer text).
 */
export const REDACTED = '[set]';

/** A secret shorter than this is matched only as a whole string, not inside longer text (too many false hits). */
const MIN_CONTAINED = 6;

export type Redactor = (details: Record<string, unknown>, body: unknown) => Record<string, unknown>;

/** The property names under `schema` (any depth) whose schema is marked write-only. */
export function writeOnlyNames(schema: Schema | undefined): Set<string> {
  const names = new Set<string>();
  walkSchema(schema, (name, s) => { if (isWriteOnly(s)) names.add(name); });
  return names;
}

/** Every named property schema under `schema` (through properties, items, anyOf, oneOf, allOf), with its name. */
export function walkSchema(schema: unknown, visit: (name: string, s: Schema) => void): void {
  if (schema === null || typeof schema !== 'object') return;
  const s = schema as Schema;
  const props = s.properties;
  if (props && typeof props === 'object') {
    for (const [name, p] of Object.entries(props as Record<string, unknown>)) {
      if (p && typeof p === 'object') visit(name, p as Schema);
      walkSchema(p, visit);
    }
  }
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = s[k];
    if (Array.isArray(list)) for (const b of list) walkSchema(b, visit);
  }
  if (s.items) walkSchema(s.items, visit);
  if (s.additionalProperties && typeof s.additionalProperties === 'object') walkSchema(s.additionalProperties, visit);
}

/** Marked write-only itself, or on any branch of its anyOf/oneOf (a nullable secret). */
export function isWriteOnly(s: Schema): boolean {
  if (s.writeOnly === true) return true;
  for (const k of ['anyOf', 'oneOf'] as const) {
    const list = s[k];
    if (Array.isArray(list) && list.some((b) => b !== null && typeof b === 'object' && (b as Schema).writeOnly === true)) return true;
  }
  return false;
}

/**
 * The redactor of one route, built once at mount from its body schema. With
 * no write-only field in the schema, details pass as they are (no copy).
 */
export function redactor(schema: Schema | undefined): Redactor {
  const names = writeOnlyNames(schema);
  if (names.size === 0) return (details) => details;
  return (details, body) => {
    const values = secretValues(schema, body);
    return redact(details, names, values) as Record<string, unknown>;
  };
}

/** The string values the body carries in write-only fields (the body walked with its schema). */
function secretValues(schema: unknown, body: unknown, out: string[] = []): string[] {
  if (schema === null || typeof schema !== 'object' || body === null || typeof body !== 'object') return out;
  const s = schema as Schema;
  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = s[k];
    if (Array.isArray(list)) for (const b of list) secretValues(b, body, out);
  }
  if (Array.isArray(body)) {
    if (s.items) for (const v of body) secretValues(s.items, v, out);
    return out;
  }
  const props = (s.properties ?? {}) as Record<string, unknown>;
  for (const [name, v] of Object.entries(body as Record<string, unknown>)) {
    const p = props[name];
    if (!p || typeof p !== 'object') continue;
    if (isWriteOnly(p as Schema)) leaves(v, out);
    else secretValues(p, v, out);
  }
  return out;
}

function leaves(v: unknown, out: string[]): void {
  if (typeof v === 'string') {
    if (v !== '') out.push(v);
  } else if (typeof v === 'number') {
    out.push(String(v));
  } else if (v !== null && typeof v === 'object') {
    for (const x of Object.values(v)) leaves(x, out);
  }
}

function redact(v: unknown, names: Set<string>, values: string[]): unknown {
  if (typeof v === 'string') return values.some((s) => v === s || (s.length >= MIN_CONTAINED && v.includes(s))) ? REDACTED : v;
  if (Array.isArray(v)) return v.map((x) => redact(x, names, values));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = names.has(k) && x !== null && x !== undefined ? REDACTED : redact(x, names, values);
    return out;
  }
  return v;
}
