import { DASHBOARD_MODULES, type Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { responseSchema } from '../schemas.js';
import { activeSessions, activeSessionsQuery, kpisExtra, overview, siteMetrics, sites } from './dashboard.schemas.js';

const tenantMe = responseSchema('tenantMe', { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, modules: { type: 'array', items: { type: 'string' } } } });

const ME = '/api/v1/tenants/me';

/** Tenant-scoped operations API, under /api/v1/tenants/me/ (see /v1/openapi.json and docs/dashboard-api.md). */
export function dashboardRoutes(engine: Engine): Route[] {
  const rm = engine.readModels;
  // Every read model route alike: the dashboard surface, any role, licensed by any of DASHBOARD_MODULES.
  const read = { method: 'get', surface: 'dashboard', auth: true, module: DASHBOARD_MODULES } as const;
  return [
    route({
      method: 'get', path: ME, surface: 'dashboard', auth: true, responseSchema: tenantMe,
      summary: 'The calling tenant and its licensed modules',
      handler: ({ principal }) => ({
        status: 200, body: { id: principal.tenant.id, name: principal.tenant.name, modules: principal.tenant.modules },
      }),
    }),
    route({
      ...read, path: `${ME}/dashboard/overview`, responseSchema: overview,
      summary: 'The top strip and main grid: live sessions and devices, decisions, sign-ins and failures 24 h, error rate, audit lag',
      handler: async ({ principal }) => ({ status: 200, body: await rm.overview(principal.tenant.id) }),
    }),
    route({
      ...read, path: `${ME}/dashboard/kpis-extra`, responseSchema: kpisExtra,
      summary: 'Edge health (NAS clients online) and posture compliance',
      handler: async ({ principal }) => ({ status: 200, body: await rm.kpisExtra(principal.tenant.id) }),
    }),
    route({
      ...read, path: `${ME}/sessions/active`, querySchema: activeSessionsQuery, responseSchema: activeSessions,
      summary: 'The live session panel: summary cards, live counts per SSID and access point, connects per minute, bandwidth, and a page of the live sessions (limit, offset)',
      handler: async ({ principal, q }) => ({ status: 200, body: await rm.activeSessions(principal.tenant.id, { limit: q.limit, offset: q.offset }) }),
    }),
    route({
      ...read, path: `${ME}/sites`, responseSchema: sites,
      summary: 'The tenant\'s sites (hotspots) with live sessions, NAS clients online and health',
      handler: async ({ principal }) => ({ status: 200, body: await rm.sites(principal.tenant.id) }),
    }),
    route({
      ...read, path: `${ME}/sites/metrics`, responseSchema: siteMetrics,
      summary: 'Per site: live sessions, sign-ins and failures per minute for the last hour, bytes, busiest access points',
      handler: async ({ principal }) => ({ status: 200, body: await rm.siteMetrics(principal.tenant.id) }),
    }),
  ];
}
