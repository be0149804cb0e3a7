import { describe, expect, it } from 'vitest';
import type { Engine } from '../../engine/index.js';
import { buildOpenApi } from '../../http/openapi.js';
import { route } from '../../http/router.js';
import { hotspotUpdate } from '../../http/routes/hotspots.schemas.js';
import { sessionBlock } from '../../http/routes/sessions.schemas.js';
import { voucherList } from '../../http/routes/vouchers.schemas.js';
import { compileValidators, requestSchema, responseSchema } from '../../http/schemas.js';
import { allRoutes } from '../../http/server.js';

// Building the route table only reads services off the engine; no handler runs here.
const engine: Engine = new Proxy({}, { get: () => engine }) as Engine;

/** Every value under `v` with the key `key`, with where it is. */
function find(v: unknown, key: string, at = ''): [string, unknown][] {
  if (v === null || typeof v !== 'object') return [];
  const out: [string, unknown][] = [];
  for (const [k, x] of Object.entries(v)) {
    if (k === key) out.push([`${at}/${k}`, x]);
    out.push(...find(x, key, `${at}/${k}`));
  }
  return out;
}

/** The validation error `fn` throws (code and details as the wire has them), or undefined. */
function failure(fn: () => void): { code?: string; details?: unknown } | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    const e = err as { code?: string; fields?: { details?: unknown } };
    return { code: e.code, details: e.fields?.details };
  }
}

describe('route schemas beside their routes', () => {
  const doc = buildOpenApi(allRoutes(engine)) as { components: { schemas: Record<string, unknown> } };

  it('every $ref of the OpenAPI document names one of its components', () => {
    const refs = find(doc, '$ref');
    expect(refs.length).toBeGreaterThan(10);
    for (const [where, ref] of refs) {
      const id = String(ref).replace('#/components/schemas/', '');
      expect(doc.components.schemas, `${where} -> ${String(ref)}`).toHaveProperty([id]);
    }
  });

  it('the document is plain JSON Schema: no OpenAPI 3.0 `nullable`, the typing helpers leave none', () => {
    expect(find(doc, 'nullable')).toEqual([]);
    expect(doc.components.schemas.hotspotUpdateRequest).toMatchObject({
      properties: { redirect_url: { anyOf: [{ type: 'string', format: 'uri' }, { type: 'null' }] } },
    });
  });

  it('an optional field is not nullable unless its type says so', () => {
    const validate = compileValidators().body(hotspotUpdate);
    expect(failure(() => validate({ location: null }))).toMatchObject({ code: 'validation_failed' });
    expect(failure(() => validate({ redirect_url: null, session_minutes: null }))).toBeUndefined();
  });

  it('an enum of strings reports one error for a value of another type', () => {
    const validate = compileValidators().body(sessionBlock);
    expect(failure(() => validate({ duration: 7 }))).toEqual({
      code: 'validation_failed', details: [{ field: 'duration', message: 'must be equal to one of the allowed values' }],
    });
  });

  it('query defaults fill what the handler is typed to receive', () => {
    const q: Record<string, unknown> = { status: 'active' };
    compileValidators().query(voucherList)(q);
    expect(q).toEqual({ status: 'active', limit: 50, offset: 0 });
  });

  it('two different schemas of one name are refused, not one silently replacing the other', () => {
    const a = responseSchema('thing', { type: 'object' });
    const b = responseSchema('thing', { type: 'string' });
    const body = requestSchema<{ x?: string }>('thing', { type: 'object', required: [], properties: { x: { type: 'string' } } });
    const routes = [
      route({ method: 'get', path: '/a', surface: 'public', auth: false, summary: 'a', responseSchema: a, handler: () => ({ status: 200, body: {} }) }),
      route({ method: 'post', path: '/b', surface: 'public', auth: false, summary: 'b', bodySchema: body, responseSchema: a, handler: () => ({ status: 200, body: {} }) }),
    ];
    expect(() => buildOpenApi(routes)).not.toThrow();
    routes.push(route({ method: 'get', path: '/c', surface: 'public', auth: false, summary: 'c', responseSchema: b, handler: () => ({ status: 200, body: '' }) }));
    expect(() => buildOpenApi(routes)).toThrow(/two schemas named thing/);
  });
});
