import { Errors, EvidencePackService, IDENTITY_READER_ROLES, readsIdentities, type Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { auditChainDay, auditChainDayQuery, complianceExport, complianceSummary, complianceSummaryQuery } from './compliance.schemas.js';

/** Compliance (see /v1/openapi.json): the audit chain of a day, the 5651 evidence pack and daily summary. */
export function complianceRoutes(engine: Engine): Route[] {
  return [
    route({
      method: 'get', path: '/v1/compliance/audit-chain', surface: 'public', auth: true, module: 'compliance', querySchema: auditChainDayQuery,
      responseSchema: auditChainDay,
      summary: "The tenant's audit records of one UTC day in chain order, paged (limit, cursor: next_cursor of the page before), "
        + 'and whether the page verifies (docs/audit-chain.md has the rule); identities masked unless unmasked=true (admin or compliance role)',
      errors: { 403: `forbidden: unmasked=true needs the ${IDENTITY_READER_ROLES.join(' or ')} role` },
      handler: async ({ principal, q }) => {
        if (q.unmasked && !readsIdentities(principal)) throw Errors.FORBIDDEN(`The unmasked chain needs the ${IDENTITY_READER_ROLES.join(' or ')} role`);
        return { status: 200, body: await engine.audit.day(principal.tenant.id, q.date, { limit: q.limit, cursor: q.cursor, unmasked: q.unmasked }) };
      },
    }),
    route({
      method: 'get', path: '/v1/compliance/5651/export', surface: 'public', auth: true, module: 'compliance', querySchema: complianceExport,
      responseType: 'application/zip', roles: IDENTITY_READER_ROLES,
      summary: 'The 5651 evidence pack of a range of UTC days (at most 366) as a streamed ZIP: daily access logs, chain records, '
        + 'RFC 3161 time-stamp tokens and a manifest of SHA-256 digests (docs/evidence-pack.md)',
      errors: { 400: 'validation_failed: a bound missing or malformed, to before from, or more than 366 days', 503: 'service_unavailable: too many exports at once' },
      handler: ({ principal, q }) => {
        const { from, to } = EvidencePackService.range(q);
        const pack = engine.evidencePacks.export(principal.tenant, from, to);
        return {
          status: 200, body: null, stream: pack.stream, contentType: 'application/zip',
          headers: { 'content-disposition': `attachment; filename="${pack.filename}"`, 'cache-control': 'no-store' },
        };
      },
    }),
    route({
      method: 'get', path: '/v1/compliance/5651/summary', surface: 'public', auth: true, module: 'compliance', querySchema: complianceSummaryQuery,
      responseSchema: complianceSummary,
      summary: 'The daily 5651 log summary of a UTC day per hotspot and for the tenant: record count, chain integrity, '
        + 'time-stamp status and missing-record warnings (a finished day without a token is time-stamped now)',
      handler: async ({ principal, q }) => ({ status: 200, body: await engine.dailySummary.day(principal.tenant.id, q.date) }),
    }),
  ];
}
