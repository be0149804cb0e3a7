import { BODY_SCHEMAS, QUERY_SCHEMAS, RESPONSE_SCHEMAS } from './schemas.js';
import type { Route } from './router.js';

const SURFACE_TAGS: Record<string, string> = {
  public: 'Public API', console: 'Console', portal: 'Captive portal', dashboard: 'Dashboard', ops: 'Operations',
};

/**
 * The OpenAPI 3.1 document, generated from the same route table and JSON
 * schemas that validate requests, so the two cannot drift apart.
 */
export function buildOpenApi(routes: Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const ref = (id: string): Record<string, string> => ({ $ref: `#/components/schemas/${id}` });
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const params = [...r.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const query = r.querySchema ? QUERY_SCHEMAS[r.querySchema] : undefined;
    for (const [name, schema] of Object.entries((query?.properties ?? {}) as Record<string, unknown>)) {
      params.push({ name, in: 'query', required: false, schema: schema as { type: string } });
    }
    const responses: Record<string, unknown> = {
      [String(r.status ?? 200)]: {
        description: 'Success',
        content: r.responseType
          ? { [r.responseType]: { schema: { type: 'string', contentMediaType: r.responseType } } }
          : { 'application/json': { schema: r.responseSchema ? ref(r.responseSchema) : { type: 'object' } } },
      },
    };
    const errorContent = { 'application/json': { schema: ref('error') } };
    if (r.bodySchema) responses['400'] = { description: 'invalid_json or validation_failed', content: errorContent };
    if (r.auth) responses['401'] = { description: 'unauthorized: missing, invalid, expired or revoked credentials', content: errorContent };
    const forbidden = [
      ...(r.module ? [`module_not_licensed: the ${r.module} module is not licensed`] : []),
      ...(r.auth && r.method !== 'get' ? ['forbidden: a JWT without the admin role may only read'] : []),
    ];
    if (forbidden.length) responses['403'] = { description: forbidden.join('; '), content: errorContent };
    for (const [status, description] of Object.entries(r.errors ?? {})) {
      const prior = responses[status] as { description: string } | undefined;
      responses[status] = { description: prior ? `${prior.description}; ${description}` : description, content: errorContent };
    }
    paths[path] ??= {};
    paths[path]![r.method === 'del' ? 'delete' : r.method] = {
      summary: r.summary,
      tags: [SURFACE_TAGS[r.surface]],
      security: r.auth ? [{ bearer: [] }, { apiKey: [] }] : [],
      parameters: params,
      ...(r.bodySchema ? { requestBody: { required: true, content: { 'application/json': { schema: ref(`${r.bodySchema}Request`) } } } } : {}),
      responses,
    };
  }
  const schemas: Record<string, unknown> = { ...RESPONSE_SCHEMAS };
  for (const [id, s] of Object.entries(BODY_SCHEMAS)) schemas[`${id}Request`] = s;
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
