import type { Route } from '../router.js';

/** Tenant-scoped operations API (spec §4.5), under /api/v1/tenants/me/. */
export function dashboardRoutes(): Route[] {
  return [
    {
      method: 'get', path: '/api/v1/tenants/me', surface: 'dashboard', auth: true, responseSchema: 'tenantMe',
      summary: 'The calling tenant and its licensed modules',
      handler: ({ principal }) => ({
        status: 200, body: { id: principal.tenant.id, name: principal.tenant.name, modules: principal.tenant.modules },
      }),
    },
  ];
}
