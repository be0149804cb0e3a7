import { DASHBOARD_MODULES, type Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { responseSchema } from '../schemas.js';

const tenantMe = responseSchema('tenantMe', { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, modules: { type: 'array', items: { type: 'string' } } } });

/** Tenant-scoped operations API, under /api/v1/tenants/me/ (see /v1/openapi.json). */
export function dashboardRoutes(_engine: Engine): Route[] {
  return [
    route({
      method: 'get', path: '/api/v1/tenants/me', surface: 'dashboard', auth: true, responseSchema: tenantMe,
      summary: 'The calling tenant and its licensed modules',
      handler: ({ principal }) => ({
        status: 200, body: { id: principal.tenant.id, name: principal.tenant.name, modules: principal.tenant.modules },
      }),
    }),
  ];
}
