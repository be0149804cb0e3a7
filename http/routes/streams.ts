import type { Engine } from '../../engine/index.js';
import type { Route } from '../router.js';

/** Server-sent-event streams of the dashboard and their tokens, under /api/v1/tenants/me/ (docs/dashboard-api.md). */
export function streamRoutes(_engine: Engine): Route[] {
  return [];
}
