import type { Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';

/** Liveness, readiness, metrics and the API description; unauthenticated, on the main listener. */
export function opsRoutes(engine: Engine, openapi: () => Record<string, unknown>): Route[] {
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
      method: 'get', path: '/metrics', surface: 'ops', auth: false, summary: 'Prometheus metrics (text format)',
      handler: () => ({ status: 200, body: null, text: engine.metrics.render(), contentType: 'text/plain; version=0.0.4' }),
    }),
    route({
      method: 'get', path: '/v1/openapi.json', surface: 'public', auth: false, summary: 'This API description (OpenAPI 3.1)',
      handler: () => ({ status: 200, body: openapi() }),
    }),
  ];
}
