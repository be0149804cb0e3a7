import type { Engine } from '../../engine/index.js';
import type { Route } from '../router.js';

/** Incidents, posture, switches and their ports, topology, audit entries, JIT approvals, under /api/v1/tenants/me/ (docs/dashboard-api.md). */
export function dashboardOpsRoutes(_engine: Engine): Route[] {
  return [];
}
