import { describe, expect, it } from 'vitest';
import type { Engine, Principal } from '../../engine/index.js';
import { isWriteOnly, REDACTED, walkSchema } from '../../http/audit-redaction.js';
import { auditNoteOf, type Route, type RouteContext } from '../../http/router.js';
import type { Schema } from '../../http/schemas.js';
import { allRoutes } from '../../http/server.js';

// Building the route table only reads services off the engine (and may log); no handler runs here.
const engine: Engine = new Proxy(function () { /* callable */ }, { get: () => engine, apply: () => engine }) as unknown as Engine;
const routes = allRoutes(engine);
const label = (r: Route): string => `${r.method.toUpperCase()} ${r.path}`;

/**
 * A field name that says it holds a secret: a word secret, password, token,
 * key or credential(s), or smtp_url (its URL carries the login). Not one that
 * ends in _ref (an env:// reference names a variable, it holds no secret) or
 * _set (the answer's "a secret is stored").
 */
function looksSecret(name: string): boolean {
  const words = name.toLowerCase().split(/[_-]/);
  if (words.at(-1) === 'ref' || words.at(-1) === 'set') return false;
  if (name === 'smtp_url') return true;
  return words.some((w) => ['secret', 'password', 'passwd', 'passphrase', 'token', 'key', 'apikey', 'credential', 'credentials'].includes(w));
}

/** A value `schema` would accept, near enough for an audit function to copy; every write-only field holds a distinct secret. */
function sample(schema: unknown, secrets: string[], at: string): unknown {
  if (schema === null || typeof schema !== 'object') return 'x';
  const s = schema as Schema;
  if (isWriteOnly(s)) {
    const v = `S3cret-${secrets.length}-${at}`;
    secrets.push(v);
    return v;
  }
  const branches = (s.anyOf ?? s.oneOf) as Schema[] | undefined;
  if (branches) return sample(branches.find((b) => b.type !== 'null') ?? branches[0], secrets, at);
  if (Array.isArray(s.enum)) return s.enum[0];
  if (s.type === 'object' || s.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, p] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) out[k] = sample(p, secrets, `${at}.${k}`);
    return out;
  }
  if (s.type === 'array') return [sample(s.items, secrets, `${at}[]`)];
  if (s.type === 'integer' || s.type === 'number') return 1;
  if (s.type === 'boolean') return true;
  return 'x';
}

describe('secrets in route schemas', () => {
  it('every secret-looking field of every route body and query schema is marked write-only', () => {
    const seen: string[] = [];
    const unmarked: string[] = [];
    for (const r of routes) {
      for (const s of [r.bodySchema, r.querySchema]) {
        walkSchema(s?.schema, (name, p) => {
          if (!looksSecret(name)) return;
          seen.push(`${label(r)} ${name}`);
          if (!isWriteOnly(p)) unmarked.push(`${label(r)} ${name}`);
        });
      }
    }
    // The walk reaches the fields this rule is about (it cannot pass by finding none).
    expect(seen).toEqual(expect.arrayContaining(['PUT /v1/hotspots/:id uam_secret', 'POST /v1/hotspots/:id/nas-clients secret']));
    expect(unmarked).toEqual([]);
  });

  it('every audited route leaves the secrets of its body out of the audit details, whatever its audit function copies', () => {
    const audited = routes.filter((r) => r.audit);
    expect(audited.length).toBeGreaterThan(5);
    let withSecrets = 0;
    for (const r of audited) {
      const secrets: string[] = [];
      const body = r.bodySchema ? sample(r.bodySchema.schema, secrets, 'body') : undefined;
      // The worst handler: an answer that echoes the whole body beside its own fields.
      const answer = r.responseSchema ? sample(r.responseSchema.schema, [], 'out') : {};
      const out = body && typeof body === 'object' ? { ...(answer as object), ...body, echoed: body } : answer;
      const ctx = {
        params: ['p1', 'p2'], query: new URLSearchParams(), body, q: {}, principal: { roles: ['admin'] } as unknown as Principal,
        sourceAddress: '', platform: null, headers: {}, raw: null, browser: {} as RouteContext['browser'],
      } as RouteContext;
      const note = auditNoteOf(r)(ctx, out);
      const text = JSON.stringify(note?.details ?? {});
      for (const v of secrets) expect(text, `${label(r)} audit details`).not.toContain(v);
      if (secrets.length > 0) withSecrets++;
    }
    expect(withSecrets).toBeGreaterThan(0);
  });

  it('a hotspot update records its UAM secret as "[set]", a cleared one as null, and the other fields as sent', () => {
    const put = routes.find((r) => r.method === 'put' && r.path === '/v1/hotspots/:id')!;
    const note = (body: unknown) => auditNoteOf(put)({ body, params: ['hs_1'] } as RouteContext, { id: 'hs_1' });
    const set = note({ name: 'Lobby', portal: { uam_secret: 'faskey-12345', gateway: 'opennds' } });
    expect(set?.details).toEqual({ changed: { name: 'Lobby', portal: { uam_secret: REDACTED, gateway: 'opennds' } } });
    // Without the router's redaction the route's own note holds the secret: the central step is what removes it.
    expect(JSON.stringify(put.audit!({ body: { portal: { uam_secret: 'faskey-12345' } } } as RouteContext, { id: 'hs_1' }))).toContain('faskey-12345');
    expect(note({ portal: { uam_secret: null } })?.details).toEqual({ changed: { portal: { uam_secret: null } } });
  });
});
