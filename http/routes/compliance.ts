import type { Engine } from '../../engine/index.js';
import type { Route } from '../router.js';

/** Compliance (spec §4.1): the audit chain of a day. */
export function complianceRoutes(engine: Engine): Route[] {
  return [
    {
      method: 'get', path: '/v1/compliance/audit-chain', surface: 'public', auth: true, module: 'compliance', querySchema: 'auditChainDay',
      responseSchema: 'auditChainDay',
      summary: "The tenant's audit records of one UTC day in chain order, and whether the chain verifies (docs/audit-chain.md has the rule)",
      handler: async ({ principal, q }) => ({ status: 200, body: await engine.audit.day(principal.tenant.id, q.date) }),
    },
  ];
}
