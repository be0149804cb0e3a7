import { DASHBOARD_MODULES, type Engine, type IncidentState } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import {
  auditPage, auditQuery, incident, incidentList, incidentQuery, jitApprovals, postureBody, postureReceived, switchList, switchPorts, topology,
} from './dashboard-ops.schemas.js';

const ME = '/api/v1/tenants/me';
/** Every route here: the dashboard surface, operator credentials, and one of the packages that include the dashboard. */
const DASH = { surface: 'dashboard', auth: true, module: DASHBOARD_MODULES } as const;

/** The calls that move an incident, by their path's last segment. */
const MOVES: [segment: string, to: IncidentState][] = [['triage', 'triaging'], ['acknowledge', 'acknowledged'], ['resolve', 'resolved']];

/** Incidents, posture, switches and their ports, topology, audit entries, JIT approvals, under /api/v1/tenants/me/ (docs/dashboard-api.md). */
export function dashboardOpsRoutes(engine: Engine): Route[] {
  const who = (p: { subject: string; via: string }): string => `${p.via}:${p.subject}`;
  return [
    route({
      ...DASH, method: 'get', path: `${ME}/incidents`, querySchema: incidentQuery, responseSchema: incidentList,
      summary: 'Incidents the engine raised, newest first; state open (pending, triaging or acknowledged) or one state',
      handler: async ({ principal, q }) => {
        const [data, open] = await Promise.all([
          engine.incidents.list(principal.tenant.id, q.state, q.limit), engine.incidents.countOpen(principal.tenant.id),
        ]);
        return { status: 200, body: { data, open } };
      },
    }),
    ...MOVES.map(([segment, to]) => route({
      ...DASH, method: 'post', path: `${ME}/incidents/:id/${segment}`, responseSchema: incident,
      summary: `Move an incident to ${to} (forward only; admin)`, errors: { 404: 'not_found', 409: 'incident_transition_invalid' },
      handler: async ({ principal, params }) => ({
        status: 200, body: await engine.incidents.transition(principal.tenant.id, params[0]!, to, who(principal)),
      }),
      audit: (_ctx, out) => ({ event: 'incident_updated', details: { incident_id: out.id, kind: out.kind, state: out.state }, subject: { hotspot_id: out.site_id ?? undefined } }),
    })),
    route({
      ...DASH, method: 'post', path: `${ME}/posture`, bodySchema: postureBody, responseSchema: postureReceived, status: 201,
      summary: "A device's posture verdict from the network access control (pass, fail or drift)",
      errors: { 404: 'hotspot_not_found' },
      handler: async ({ principal, body }) => ({ status: 201, body: await engine.posture.record(principal.tenant.id, body) }),
    }),
    route({
      ...DASH, method: 'get', path: `${ME}/switches`, responseSchema: switchList,
      summary: "The tenant's NAS clients; online when a packet came within 5 minutes",
      handler: async ({ principal }) => ({ status: 200, body: { data: await engine.network.switches(principal.tenant.id) } }),
    }),
    route({
      ...DASH, method: 'get', path: `${ME}/switches/:id/ports`, responseSchema: switchPorts, errors: { 404: 'not_found' },
      summary: 'The ports a NAS client named in its requests (NAS-Port, NAS-Port-Id, Called-Station-Id)',
      handler: async ({ principal, params }) => ({ status: 200, body: await engine.network.ports(principal.tenant.id, params[0]!) }),
    }),
    route({
      ...DASH, method: 'get', path: `${ME}/topology`, responseSchema: topology,
      summary: 'Tenant, sites, their NAS clients and the access points behind each',
      handler: async ({ principal }) => ({ status: 200, body: await engine.network.topology(principal.tenant) }),
    }),
    route({
      ...DASH, method: 'get', path: `${ME}/audit`, querySchema: auditQuery, responseSchema: auditPage,
      summary: "The tenant's audit entries, newest first; `before` (an entry's id) for the next page",
      handler: async ({ principal, q }) => ({ status: 200, body: await engine.auditPages.page(principal.tenant.id, q.limit, q.before) }),
    }),
    route({
      ...DASH, method: 'get', path: `${ME}/jit-approvals`, responseSchema: jitApprovals,
      summary: 'Sponsor requests waiting for a decision (none until sponsor sign-in exists)',
      handler: async ({ principal }) => ({ status: 200, body: { data: await engine.jitApprovals.pending(principal.tenant.id) } }),
    }),
  ];
}
