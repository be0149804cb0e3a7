/**
 * Request generation for the API fuzz test (test/integration/api-fuzz.test.ts):
 * values that satisfy a route's JSON schema, hostile values, and mutations of
 * one into the other. Everything draws from one seeded PRNG, so a seed gives
 * the same requests on every machine (replay: API_FUZZ_SEED=<seed>).
 */

import { mulberry32, type Rng } from './seeded-random.js';

export { mulberry32, type Rng };

export const pick = <T>(rng: Rng, list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;
const chance = (rng: Rng, p: number): boolean => rng() < p;

/** JSON text JSON.stringify cannot write (1e309, 2^53 + 1, nesting deeper than its recursion likes). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** JSON with RawJson spliced in as written. */
export function toJson(v: unknown): string {
  if (v instanceof RawJson) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`).join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

const LONG = 'x'.repeat(100_000);
const DEEP_ARRAY = new RawJson('['.repeat(2000) + ']'.repeat(2000));
const DEEP_OBJECT = new RawJson('{"a":'.repeat(2000) + '1' + '}'.repeat(2000));

/**
 * Hostile text by kind: what a scripted guest or a careless integration
 * sends. A kind is drawn first, then a value of it, so that each kind comes
 * up as often as any other however many values it lists.
 */
export const HOSTILE_KINDS: readonly (readonly string[])[] = [
  [LONG],
  ['a\u0000b', '\u0000', '%00'],
  ['\ud800', 'x\udfffy', '\udc00\ud800'],
  ['\u202egnp.exe', 'abc\u202edef'],
  ["' OR '1'='1'; DROP TABLE vouchers; --", '1; SELECT pg_sleep(10)--', '"; DELETE FROM audit_records; --'],
  ['<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '{{constructor}}'],
  ['=HYPERLINK("http://x")', '+cmd|calc', '@SUM(1)'],
  ['', ' ', '\n\r\t', '\u0085\u2028\u2029', '\u001b[31m'],
  ['😀'.repeat(500), 'ÿ\u00ff\uffff\ufffe', 'e\u0301', '../../../etc/passwd', '%ZZ', '__proto__', 'constructor'],
  ['NaN', 'Infinity', '-1', '1e309', '99999999999999999999999', '0x10', 'true', 'null', '[]', '{}'],
  ['9999-12-31T23:59:60Z', '0000-01-01', '2026-02-30', '02:00:00:00:00:0', 'ZZ:ZZ:ZZ:ZZ:ZZ:ZZ', '+', '+9'.repeat(40), 'a@', '@b', 'env://', 'http://[::1', 'javascript:alert(1)'],
];

/** One hostile text: a kind, then a value of it. */
export const hostileText = (rng: Rng): string => pick(rng, pick(rng, HOSTILE_KINDS));

/** Every hostile text, for code that wants the list. */
export const HOSTILE_TEXT: readonly string[] = HOSTILE_KINDS.flat();

/** Hostile JSON values of every type. */
export const HOSTILE_JSON: readonly unknown[] = [
  ...HOSTILE_TEXT,
  DEEP_ARRAY, DEEP_OBJECT, new RawJson('1e309'), new RawJson('-1e309'), new RawJson('9007199254740993'),
  new RawJson('123456789012345678901234567890123456789'), new RawJson('1e-400'), new RawJson('-0'),
  -1, -2_147_483_649, 2_147_483_648, 4_294_967_296, Number.MAX_SAFE_INTEGER, 0, 1.5, -0.0001, 1e300,
  true, false, null, [], {}, [null], ['a', 1, null, {}], { nested: { x: 'y' } }, [LONG], Array.from({ length: 5000 }, (_, i) => i),
];

/** Hostile bodies that are not a JSON value of the schema (or not JSON at all), and how they are labelled. */
export const HOSTILE_RAW: readonly { text: string | Buffer; type: string }[] = [
  { text: 'not json {', type: 'application/json' },
  { text: '{"a":1,}', type: 'application/json' },
  { text: '{"a":', type: 'application/json' },
  { text: '<xml><a/></xml>', type: 'application/xml' },
  { text: 'NaN', type: 'application/json' },
  { text: '\u0000\u0000', type: 'application/json' },
  { text: Buffer.from([0xff, 0xfe, 0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]), type: 'application/json' },
  { text: Buffer.from([0xc3, 0x28, 0xa0, 0xa1]), type: 'application/x-www-form-urlencoded' },
  { text: 'a=%ED%A0%80&mac=%00&code=%ZZ&b', type: 'application/x-www-form-urlencoded' },
  { text: `code=${'x'.repeat(100_000)}`, type: 'application/x-www-form-urlencoded' },
  { text: '--b\r\nContent-Disposition: form-data; name="code"\r\n\r\nx\r\n--b--', type: 'multipart/form-data; boundary=b' },
  { text: '{"code":"A"}', type: 'text/plain' },
  { text: '{"code":"A"}', type: '' },
  { text: '[' + '{"a":'.repeat(2000) + '1' + '}'.repeat(2000) + ']', type: 'application/json' },
  { text: `"${'x'.repeat(100_000)}"`, type: 'application/json' },
  { text: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}}}', type: 'application/json' },
];

export type Schema = Record<string, unknown>;

/** Values the fuzz may use where a real resource makes the request reach deeper (a real hotspot id, a voucher code). */
export interface Known {
  hotspotId: string;
  tenantId: string;
  /** The code the portal bodies carry: an unlimited voucher no request deletes. */
  voucherCode: string;
  /** The device the portal bodies name. */
  mac: string;
  /** Path parameters, of another voucher and of another device's session: deleting or blocking them leaves the portal bodies working. */
  voucherId: string;
  sessionId: string;
  /** The tenant's env:// prefix (engine/signin/providers/env-ref.ts), for `*_ref` fields. */
  envRefPrefix: string;
}

/** Follows `#/components/schemas/...` pointers. */
export function deref(schema: Schema, components: Record<string, Schema>): Schema {
  let s = schema;
  for (let i = 0; i < 10 && typeof s.$ref === 'string'; i++) s = components[String(s.$ref).split('/').pop()!] ?? {};
  return s;
}

/** A string that passes `pattern`, from a few shapes the routes use; else a plain word. */
function patterned(rng: Rng, s: Schema): string {
  const re = new RegExp(String(s.pattern), 'u');
  const fits = (v: string): boolean => re.test(v) && v.length >= Number(s.minLength ?? 0) && v.length <= Number(s.maxLength ?? Infinity);
  const shapes = ['data:image/png;base64,iVBORw0KGgo=', '+905321234567', '+90', 'env://FUZZ_REF', 'ABC123', '02:C0:FF:EE:00:01', '#1a2b3c', 'abc', 'fuzz-name', 'A', '1', 'Guest'];
  return shapes.filter(fits).at(Math.floor(rng() * 3)) ?? shapes.find(fits) ?? 'abc';
}

/**
 * A value that the schema accepts, as far as this simple walk can tell (names
 * steer it towards real resources). With `freeText`, every field of free text
 * (a string with no format, pattern or enum) holds it instead.
 */
export function validValue(rng: Rng, schema: Schema, components: Record<string, Schema>, known: Known, name = '', depth = 0, freeText?: string): unknown {
  const s = deref(schema, components);
  if (Array.isArray(s.enum)) return pick(rng, s.enum);
  if ('const' in s) return s.const;
  if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
    const branches = (s.anyOf ?? s.oneOf) as Schema[];
    const nonNull = branches.filter((b) => deref(b, components).type !== 'null');
    return validValue(rng, pick(rng, nonNull.length && chance(rng, 0.85) ? nonNull : branches), components, known, name, depth, freeText);
  }
  if ('default' in s && chance(rng, 0.3)) return s.default;
  const type = Array.isArray(s.type) ? pick(rng, s.type as string[]) : s.type;
  switch (type) {
    case 'null': return null;
    case 'boolean': return chance(rng, 0.5);
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : 0;
      const max = typeof s.maximum === 'number' ? s.maximum : min + 1000;
      return min + Math.floor(rng() * Math.min(max - min + 1, 1000));
    }
    case 'array': {
      if (depth > 4) return [];
      const min = typeof s.minItems === 'number' ? s.minItems : 0;
      const n = min + Math.floor(rng() * 3);
      const items = (s.items ?? {}) as Schema;
      const out = Array.from({ length: typeof s.maxItems === 'number' ? Math.min(n, s.maxItems) : n }, () => validValue(rng, items, components, known, name, depth + 1, freeText));
      return s.uniqueItems ? [...new Set(out)] : out;
    }
    case 'object': {
      if (depth > 4) return {};
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set((s.required ?? []) as string[]);
      const out: Record<string, unknown> = {};
      for (const [k, p] of Object.entries(props)) {
        if (required.has(k) || chance(rng, 0.75)) out[k] = validValue(rng, p, components, known, k, depth + 1, freeText);
      }
      return out;
    }
    case 'string':
    default:
      return validString(rng, s, known, name, freeText);
  }
}

function validString(rng: Rng, s: Schema, known: Known, name: string, freeText: string | undefined): string {
  if (/mac/.test(name)) return known.mac;
  if (name === 'hotspot_id' || name === 'site_id') return known.hotspotId;
  if (name === 'tenant_id') return known.tenantId;
  if (name === 'code') return known.voucherCode;
  if (name === 'ip') return pick(rng, ['10.0.0.5', '2001:db8::5', '']);
  if (name === 'phone' || name === 'msisdn') return '+905321234567';
  if (name === 'email') return 'guest@example.com';
  if (name.endsWith('_ref')) return `env://${known.envRefPrefix}FUZZ`;
  if (name === 'timezone') return pick(rng, ['Europe/Istanbul', 'UTC']);
  if (name === 'bandwidth_profile') return pick(rng, ['basic', 'standard']);
  switch (s.format) {
    case 'date': return '2026-11-28';
    case 'date-time': return pick(rng, ['2026-11-28T10:00:00Z', '2030-01-01T00:00:00.000Z']);
    // Loopback and the discard port: a URL the fuzz saves must never send the service elsewhere.
    case 'uri': case 'url': return 'http://127.0.0.1:9/fuzz';
    case 'email': return 'guest@example.com';
    default: break;
  }
  if (typeof s.pattern === 'string') return patterned(rng, s);
  if (freeText !== undefined) return freeText;
  const min = typeof s.minLength === 'number' ? s.minLength : 1;
  const max = typeof s.maxLength === 'number' ? s.maxLength : 24;
  const len = Math.max(min, Math.min(max, min + Math.floor(rng() * 8)));
  return `fz${Math.floor(rng() * 1e9).toString(36)}`.padEnd(len, 'z').slice(0, Math.max(len, 1));
}

type Path = (string | number)[];

/** Every place a value sits in `v` (objects' fields and arrays' items), the root excluded. */
function places(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  if (v instanceof RawJson || v === null || typeof v !== 'object') return out;
  for (const [k, x] of Object.entries(v)) {
    const p = [...at, Array.isArray(v) ? Number(k) : k];
    out.push(p);
    places(x, p, out);
  }
  return out;
}

function parentOf(root: unknown, p: Path): Record<string | number, unknown> {
  let v = root as Record<string | number, unknown>;
  for (const k of p.slice(0, -1)) v = v[k] as Record<string | number, unknown>;
  return v;
}

/** 1-3 mutations of a valid body: a field made hostile, a field dropped, an unknown field added. */
export function mutate(rng: Rng, body: unknown): unknown {
  const root = structuredCloneRaw(body);
  // Mostly one change, so that the rest of the body stays valid and the hostile part reaches the handler.
  const r = rng();
  for (let n = r < 0.6 ? 1 : r < 0.85 ? 2 : 3; n > 0; n--) {
    const all = places(root);
    const op = rng();
    if (all.length && op < 0.6) {
      const p = pick(rng, all);
      const parent = parentOf(root, p);
      // Text for text, most of the time: a string of the wrong type stops at the schema, hostile text may not.
      parent[p.at(-1)!] = typeof parent[p.at(-1)!] === 'string' && chance(rng, 0.7) ? hostileText(rng) : pick(rng, HOSTILE_JSON);
    } else if (all.length && op < 0.8) {
      const p = pick(rng, all);
      const parent = parentOf(root, p);
      if (Array.isArray(parent)) parent.splice(Number(p.at(-1)), 1);
      else delete parent[p.at(-1)!];
    } else if (root !== null && typeof root === 'object' && !(root instanceof RawJson)) {
      const key = pick(rng, ['extra', '__proto__', 'constructor', 'tenant_id', 'id', LONG.slice(0, 5000), 'a\u0000b', '\ud800', '\u202e']);
      (root as Record<string, unknown>)[key] = pick(rng, HOSTILE_JSON);
    }
  }
  return root;
}

/**
 * A valid body with `text` in one of its text fields (at any depth), all else
 * left valid: the way hostile text gets past the schema's types to a handler
 * and a store. A body with no text field gets it as an unknown field.
 */
export function plant(rng: Rng, body: unknown, text: string): unknown {
  const root = structuredCloneRaw(body);
  const texts = places(root).filter((p) => typeof parentOf(root, p)[p.at(-1)!] === 'string');
  if (texts.length) {
    const p = pick(rng, texts);
    parentOf(root, p)[p.at(-1)!] = text;
  } else if (root !== null && typeof root === 'object' && !Array.isArray(root)) {
    (root as Record<string, unknown>).extra = text;
  }
  return root;
}

/** A deep copy that keeps RawJson as it is (structuredClone would make it a plain object). */
function structuredCloneRaw(v: unknown): unknown {
  if (v instanceof RawJson || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(structuredCloneRaw);
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = structuredCloneRaw(x);
  return out;
}

/** Percent-encodes text for a URL; lone surrogates (which encodeURIComponent refuses) as their raw CESU-8 bytes. */
export function encodeText(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0xd800 && c <= 0xdfff) out += [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    else out += encodeURIComponent(ch);
  }
  return out;
}

/** A value as a query parameter or form field: text as is, anything else as its JSON. */
export function asText(v: unknown): string {
  return typeof v === 'string' ? v : toJson(v);
}
