import { Ajv, type ErrorObject, type JSONSchemaType, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Errors } from '../engine/index.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** A JSON schema as the OpenAPI document holds it. */
export type Schema = Record<string, unknown>;

/**
 * T with every field present and none undefined, recursively through
 * objects: the shape JSONSchemaType checks a schema's `properties` against.
 * Left as they are, optional fields would make JSONSchemaType ask for
 * `nullable: true`, which ajv takes as "null is allowed too". Which fields
 * a request must carry is the schema's `required` list.
 */
type Present<T> = { [K in keyof T]-?: PresentValue<Exclude<T[K], undefined>> };
type PresentValue<V> = V extends readonly unknown[] ? V : V extends object ? Present<V> : V;

/**
 * A request body or query schema, named, with the type of what passes it.
 * Routes name it (bodySchema, querySchema); their handlers then receive T.
 */
export interface RequestSchema<T> {
  /** The OpenAPI component's name (`<id>Request` for a body). */
  readonly id: string;
  readonly schema: Schema;
  /** Type only, never set: what a value that passed `schema` is. */
  readonly valueType?: T;
}

/**
 * A request schema checked against T at compile time. Fields with a
 * `default` may be typed as always present: the validators fill them in.
 */
export function requestSchema<T>(id: string, schema: JSONSchemaType<Present<T>>): RequestSchema<T> {
  return { id, schema };
}

/**
 * A request schema JSONSchemaType cannot check against T (unions of an object
 * and null, maps keyed by an enum, open objects that pass extra parameters
 * through): ajv still validates it at run time; only the compile-time match
 * of schema and type is given up, so keep T next to the schema and small.
 */
export function looseRequestSchema<T>(id: string, schema: Schema): RequestSchema<T> {
  return { id, schema };
}

/** A response shape, for the OpenAPI document only; `refs` are the schemas it points to with refTo. */
export interface ResponseSchema {
  readonly id: string;
  readonly schema: Schema;
  readonly refs?: readonly ResponseSchema[];
}

export function responseSchema(id: string, schema: Schema, refs?: readonly ResponseSchema[]): ResponseSchema {
  return refs ? { id, schema, refs } : { id, schema };
}

/** A JSON pointer to another response schema's component (list it in the pointing schema's refs). */
export function refTo(s: ResponseSchema): Schema {
  return { $ref: `#/components/schemas/${s.id}` };
}

/**
 * `{ type: 'null' }`, typed as JSONSchemaType wants a null branch (with
 * `nullable: true`, an OpenAPI 3.0 habit that OpenAPI 3.1 dropped): the
 * document and the validators see the plain JSON Schema form.
 */
const NULL = { type: 'null' } as unknown as { type: 'null'; nullable: true };

/** Any of the schemas, or null. */
export function nullable<S extends unknown[]>(...s: S): { anyOf: [...S, typeof NULL] } {
  return { anyOf: [...s, NULL] };
}

/**
 * `{ enum: values }`, typed as JSONSchemaType wants it (with `type:
 * 'string'` beside it). Left out on purpose: with both, a value of another
 * type would be reported twice, and the first error would change.
 */
export function oneOf<V extends string>(values: readonly V[]): { type: 'string'; enum: V[] } {
  return { enum: [...values] } as unknown as { type: 'string'; enum: V[] };
}

/**
 * A secret field: `writeOnly: true` (JSON Schema's annotation, also in the
 * OpenAPI document). The mark is what keeps the value out of the audit chain
 * (http/audit-redaction.ts) and what test/unit/secret-redaction.test.ts checks
 * every secret-looking field for; answers show such a field only as `<name>_set`.
 */
export function secret<S extends object>(s: S): S & { writeOnly: true } {
  return { ...s, writeOnly: true };
}

export const minutes = { type: 'integer', minimum: 1, maximum: 525600 } as const;
export const mbps = { type: 'integer', minimum: 1, maximum: 100000 } as const;
/** A size in MB that Postgres's integer can hold. */
export const quotaMb = { type: 'integer', minimum: 1, maximum: 2_147_483_647 } as const;
/**
 * The largest `offset` a list takes (docs/http-edge.md). Postgres reads and
 * throws away every row before the offset, so a request for the page at
 * 2^31 costs the whole table; beyond this bound, 400, and the long lists
 * (vouchers, sessions) page on with `cursor`.
 */
export const MAX_OFFSET = 10_000;
/** Paging of a list (query string). */
export const page = {
  limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
  offset: { type: 'integer', minimum: 0, maximum: MAX_OFFSET, default: 0, description: `At most ${MAX_OFFSET}; page on with cursor past it` },
  cursor: { type: 'string', minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$', description: 'next_cursor of the page before: the list goes on after its last row' },
} as const;
export interface Paged { limit: number; offset: number; cursor?: string }
/** A UTC day in a query string. */
export const utcDay = { type: 'string', format: 'date', description: 'UTC day, YYYY-MM-DD' } as const;

/**
 * The guest's address as the gateway reports it (a portal body's `ip`):
 * IPv4 or IPv6, or '' (a form's empty field: unknown). Anything else is a
 * 400 validation_failed; it is recorded as the guest's address, never a
 * limit's key (http/client-address.ts).
 */
export const guestIp = {
  type: 'string', maxLength: 45, anyOf: [{ maxLength: 0 }, { format: 'ipv4' }, { format: 'ipv6' }],
  description: "The guest's IPv4 or IPv6 address as the gateway reports it ('' or absent: unknown); recorded, never a rate limit's key",
} as const;

/** The error body every route may answer with. */
export const errorResponse = responseSchema('error', {
  type: 'object', required: ['error'],
  properties: { error: { type: 'string' }, message: { type: 'string' }, details: { type: 'array' } },
});

/**
 * RFC 3339 allows what neither JavaScript nor Postgres can hold: a leap second
 * (23:59:60, which Date cannot parse) and year 0000 (Postgres has none). Both
 * formats are narrowed to times we can store, so such input is a 400, not a 500.
 */
function withStorableTimes(ajv: Ajv): Ajv {
  // ajv-formats registers both as {validate, compare}.
  const rfc = (name: string) => (ajv.formats[name] as { validate: (v: string) => boolean }).validate;
  const date = rfc('date');
  const dateTime = rfc('date-time');
  ajv.addFormat('date', { type: 'string', validate: (v: string) => date(v) && !v.startsWith('0000') && Number.isFinite(Date.parse(`${v}T00:00:00Z`)) });
  ajv.addFormat('date-time', { type: 'string', validate: (v: string) => dateTime(v) && !v.startsWith('0000') && Number.isFinite(Date.parse(v)) });
  return ajv;
}

export interface Validators {
  body(s: RequestSchema<unknown>): (data: unknown) => void;
  query(s: RequestSchema<unknown>): (data: unknown) => void;
}

/**
 * The validators of request bodies and query strings (values arrive as
 * strings and are coerced). Each schema is compiled once, when the routes
 * are mounted at start, however many routes and listeners share it; never
 * on a request.
 */
export function compileValidators(): Validators {
  const bodyAjv = withStorableTimes(addFormats(new Ajv({ allErrors: true, useDefaults: true, strict: false })));
  const queryAjv = withStorableTimes(addFormats(new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, strict: false })));
  const wrap = (ajv: Ajv, where: string) => {
    const compiled = new Map<RequestSchema<unknown>, ValidateFunction>();
    return (s: RequestSchema<unknown>) => {
      let fn = compiled.get(s);
      if (!fn) compiled.set(s, (fn = ajv.compile(s.schema)));
      const validate = fn;
      return (data: unknown): void => {
        if (data === undefined) {
          throw Errors.VALIDATION_FAILED(`Request ${where} is required`, [{ field: '', message: `${where} is required` }]);
        }
        if (!validate(data)) throw Errors.VALIDATION_FAILED(describe(validate.errors ?? [], where), details(validate.errors ?? []));
      };
    };
  };
  return { body: wrap(bodyAjv, 'body'), query: wrap(queryAjv, 'query') };
}

function fieldOf(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const extra = (e.params as { missingProperty?: string; additionalProperty?: string });
  const child = extra.missingProperty ?? extra.additionalProperty;
  return child ? (base ? `${base}.${child}` : child) : base;
}

function details(errors: ErrorObject[]): { field: string; message: string }[] {
  // anyOf produces one error per branch plus its own; keep the anyOf summary only.
  const seen = new Set<string>();
  const out: { field: string; message: string }[] = [];
  for (const e of errors) {
    if (/\/anyOf\/\d+\//.test(e.schemaPath)) continue;
    const field = fieldOf(e);
    const message = e.keyword === 'additionalProperties' ? 'is not a known field'
      : e.keyword === 'anyOf' ? 'has the wrong type or format' : e.message ?? 'is invalid';
    const key = `${field}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message });
  }
  return out;
}

function describe(errors: ErrorObject[], where: string): string {
  const first = details(errors)[0];
  if (!first) return `Invalid request ${where}`;
  return first.field ? `${first.field} ${first.message}` : `${where} ${first.message}`;
}
