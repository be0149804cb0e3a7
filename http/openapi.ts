import { errorResponse, type ResponseSchema } from './schemas.js';
import type { Route } from './router.js';

const SURFACE_TAGS: Record<string, string> = {
  public: 'Public API', console: 'Console', portal: 'Captive portal', dashboard: 'Dashboard', ops: 'Operations',
};

/**
 * The OpenAPI 3.1 document, generated from the same route table and JSON
 * schemas that validate requests, so the two cannot drift apart. Its
 * components are the schemas the routes name, and those they point to.
 */
export function buildOpenApi(routes: Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const ref = (id: string): Record<string, string> => ({ $ref: `#/components/schemas/${id}` });
  const responses = new Map<string, ResponseSchema>();
  const bodies = new Map<string, unknown>();
  // Two schemas of one name would have one silently replace the other in the document.
  const unique = (id: string, known: unknown, s: unknown): boolean => {
    if (known !== undefined && known !== s) throw new Error(`two schemas named ${id} in the OpenAPI document`);
    return known === undefined;
  };
  const component = (s: ResponseSchema): void => {
    if (!unique(s.id, responses.get(s.id), s)) return;
    responses.set(s.id, s);
    for (const r of s.refs ?? []) component(r);
  };
  component(errorResponse);
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const params = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    if (r.responseSchema) component(r.responseSchema);
    const bodyId = r.bodySchema ? `${r.bodySchema.id}Request` : '';
    if (r.bodySchema && unique(bodyId, bodies.get(bodyId), r.bodySchema.schema)) bodies.set(bodyId, r.bodySchema.schema);
    for (const [name, schema] of Object.entries((r.querySchema?.schema.properties ?? {}) as Record<string, unknown>)) {
      params.push({ name, in: 'query', required: false, schema: schema as { type: string } });
    }
    const answers: Record<string, unknown> = {
      [String(r.status ?? 200)]: {
        description: 'Success',
        content: r.responseType
          ? { [r.responseType]: { schema: { type: 'string', contentMediaType: r.responseType } } }
          : { 'application/json': { schema: r.responseSchema ? ref(r.responseSchema.id) : { type: 'object' } } },
      },
    };
    const errorContent = { 'application/json': { schema: ref('error') } };
    if (r.bodySchema) answers['400'] = { description: 'invalid_json or validation_failed', content: errorContent };
    if (r.auth) answers['401'] = { description: 'unauthorized: missing, invalid, expired or revoked credentials', content: errorContent };
    const forbidden = [
      ...(r.module ? [`module_not_licensed: the ${typeof r.module === 'string' ? r.module : r.module.join(' or ')} module is not licensed`] : []),
      ...(r.auth && r.method !== 'get' && !r.readOnly ? ['forbidden: a JWT without the admin role may only read'] : []),
      ...(r.roles ? [`forbidden: needs the ${r.roles.join(' or ')} role`] : []),
    ];
    if (forbidden.length) answers['403'] = { description: forbidden.join('; '), content: errorContent };
    for (const [status, description] of Object.entries(r.errors ?? {})) {
      const prior = answers[status] as { description: string } | undefined;
      answers[status] = { description: prior ? `${prior.description}; ${description}` : description, content: errorContent };
    }
    paths[path] ??= {};
    paths[path]![r.method === 'del' ? 'delete' : r.method] = {
      summary: r.summary,
      tags: [SURFACE_TAGS[r.surface]],
      security: r.auth ? [{ bearer: [] }, { apiKey: [] }] : [],
      parameters: params,
      ...(r.bodySchema ? { requestBody: { required: true, content: { 'application/json': { schema: ref(bodyId) } } } } : {}),
      ...(r.requestTypes ? { requestBody: { required: true, content: r.requestTypes } } : {}),
      responses: answers,
    };
  }
  const schemas: Record<string, unknown> = {};
  for (const [id, s] of responses) schemas[id] = s.schema;
  for (const [id, s] of bodies) schemas[id] = s;
  return {
    openapi: '3.1.0',
    info: {
      title: 'Guest Wi-Fi access engine',
      version: '1.0.0',
      description: 'Public API under /v1, console under /api/v1, captive portal under /api/v1/hotspot-portal. '
        + 'Errors are JSON {error, message}; portal voucher errors use the exact bodies of the specification.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT (HS256) or API key' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
  };
}
