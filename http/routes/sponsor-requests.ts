import type { Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';

/** The tenant's sponsor requests of the last day and their states (the console's "Sponsor requests" page). */
export function sponsorRequestRoutes(engine: Engine): Route[] {
  return [
    route({
      method: 'get', path: '/v1/sponsor-requests', surface: 'public', auth: true,
      summary: 'Sponsor requests of the last 24 hours, newest first (at most 200): guest, sponsor, device, state (pending, approved, rejected, expired)',
      handler: async ({ principal }) => ({ status: 200, body: { data: await engine.sponsor.list(principal.tenant.id) } }),
    }),
  ];
}
