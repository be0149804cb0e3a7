import type { Engine } from '../../engine/index.js';
import type { Route } from '../router.js';

/** The engine's sign-in decisions and their aggregates, under /api/v1/tenants/me/ (docs/dashboard-api.md). */
export function decisionRoutes(_engine: Engine): Route[] {
  return [];
}
