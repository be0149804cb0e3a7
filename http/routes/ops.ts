import { createHash, timingSafeEqual } from 'node:crypto';
import { Errors, type Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';

/**
 * Whether an Authorization header carries `Bearer <token>`. Digests compared
 * in constant time: neither the token's length nor its bytes leak by timing.
 */
function bearerMatches(header: string, digest: Buffer): boolean {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m !== null && timingSafeEqual(createHash('sha256').update(m[1]!).digest(), digest);
}

/**
 * Liveness, readiness, metrics and the API description. The `ops` routes go
 * to the METRICS_PORT listener when it is set (and leave the main one, all
 * but /healthz); never to a portal port (docs/http-edge.md). /metrics takes
 * `Authorization: Bearer METRICS_TOKEN` when that is set.
 */
export function opsRoutes(engine: Engine, openapi: () => Record<string, unknown>): Route[] {
  // Read on the first scrape: the route table is also built where no engine runs (the OpenAPI document).
  let digest: Buffer | null | undefined;
  const tokenDigest = (): Buffer | null => {
    if (digest === undefined) {
      const token = engine.config.http.metricsToken;
      digest = token === undefined ? null : createHash('sha256').update(token).digest();
    }
    return digest;
  };
  return [
    route({
      method: 'get', path: '/healthz', surface: 'ops', auth: false, summary: 'The process is up',
      handler: () => ({ status: 200, body: { status: 'ok' } }),
    }),
    route({
      method: 'get', path: '/readyz', surface: 'ops', auth: false, summary: 'Redis and Postgres are reachable (503 otherwise)',
      handler: async () => {
        const checks = await engine.ready();
        const ok = checks.redis && checks.postgres;
        return { status: ok ? 200 : 503, body: { status: ok ? 'ready' : 'not_ready', checks } };
      },
    }),
    route({
      method: 'get', path: '/metrics', surface: 'ops', auth: false, headers: ['authorization'],
      summary: 'Prometheus metrics (text format); with METRICS_TOKEN set, send it as a Bearer token',
      errors: { 401: 'unauthorized: METRICS_TOKEN is set and the request did not send it as a Bearer token' },
      handler: async ({ headers }) => {
        const want = tokenDigest();
        if (want !== null && !bearerMatches(headers.authorization ?? '', want)) throw Errors.UNAUTHORIZED('Send the metrics token: Authorization: Bearer <METRICS_TOKEN>');
        return { status: 200, body: null, text: await engine.metrics.render(), contentType: engine.metrics.contentType };
      },
    }),
    route({
      method: 'get', path: '/v1/openapi.json', surface: 'public', auth: false, summary: 'This API description (OpenAPI 3.1)',
      handler: () => ({ status: 200, body: openapi() }),
    }),
  ];
}
