import { IDENTITY_READER_ROLES, type Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import {
  privacyCloseBody, privacyDeletions, privacyListQuery, privacyPeriodQuery, privacyRequest, privacyRequestBody, privacyRequestList, privacySummary,
} from './privacy.schemas.js';

/** [from, to] as UTC days, both included: [from 00:00, the day after to 00:00). */
const period = (q: { from: string; to: string }): [Date, Date] => [new Date(`${q.from}T00:00:00Z`), new Date(Date.parse(`${q.to}T00:00:00Z`) + 86_400_000)];

/**
 * Personal data (engine/privacy/, docs/privacy.md): data-subject requests, the access export,
 * deletions and the summary. Guests' identities in clear: admin or compliance only. Filing and
 * closing are audited with the subject's keyed reference, never its value.
 */
export function privacyRoutes(engine: Engine): Route[] {
  const privacy = engine.privacy;
  const roles = IDENTITY_READER_ROLES;
  return [
    route({
      method: 'post', path: '/v1/privacy/requests', surface: 'public', auth: true, roles, status: 201, bodySchema: privacyRequestBody, responseSchema: privacyRequest,
      summary: 'File a data-subject request (KVKK / GDPR): access, erasure or correction, due in 30 days',
      handler: async ({ principal, body }) => ({ status: 201, body: await privacy.file(principal.tenant.id, body.type, body.subject, body.note ?? null) }),
      audit: (_ctx, out) => ({
        event: 'privacy_request_filed', details: { request_id: out.id, type: out.type, subject_kind: out.subject.kind, subject_ref: out.subject.ref, due_at: out.due_at },
      }),
    }),
    route({
      method: 'get', path: '/v1/privacy/requests', surface: 'public', auth: true, roles, querySchema: privacyListQuery, responseSchema: privacyRequestList,
      summary: 'List data-subject requests, newest first (status, overdue)',
      handler: async ({ principal, q }) => ({ status: 200, body: { data: await privacy.requests.list(principal.tenant.id, q) } }),
    }),
    route({
      method: 'get', path: '/v1/privacy/requests/:id', surface: 'public', auth: true, roles, responseSchema: privacyRequest,
      summary: 'Read a data-subject request', errors: { 404: 'privacy_request_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: await privacy.requests.get(principal.tenant.id, params[0]!) }),
    }),
    route({
      method: 'get', path: '/v1/privacy/requests/:id/export', surface: 'public', auth: true, roles, responseType: 'application/json',
      summary: "Everything held on an open request's subject and the identities linked to it, as a streamed JSON document",
      errors: { 404: 'privacy_request_not_found', 409: 'privacy_request_closed: the subject is no longer held in clear' },
      handler: async ({ principal, params }) => {
        const stream = await privacy.export(principal.tenant.id, params[0]!);
        return { status: 200, body: null, stream, contentType: 'application/json', headers: { 'content-disposition': `attachment; filename="${params[0]}.json"` } };
      },
    }),
    route({
      method: 'post', path: '/v1/privacy/requests/:id/close', surface: 'public', auth: true, roles, bodySchema: privacyCloseBody, responseSchema: privacyRequest,
      summary: 'Close a data-subject request; completing an erasure erases now (legal records kept under a hold), a correction applies its change',
      errors: {
        404: 'privacy_request_not_found', 409: 'privacy_request_closed',
        503: "privacy_erasure_busy: the subject's session records had not reached the store; nothing was erased, try again",
      },
      handler: async ({ principal, params, body }) => ({
        status: 200,
        body: await privacy.close(principal.tenant.id, params[0]!, body.outcome, body.note ?? null, `${principal.via}:${principal.subject}`, body.correction),
      }),
      audit: (_ctx, out) => {
        const hold = (out.result as { hold?: { id: string; held_until: string } | null } | null)?.hold ?? null;
        return {
          event: 'privacy_request_closed',
          details: {
            request_id: out.id, type: out.type, outcome: out.outcome, subject_kind: out.subject.kind, subject_ref: out.subject.ref,
            hold_id: hold?.id ?? null, held_until: hold?.held_until ?? null,
          },
        };
      },
    }),
    route({
      method: 'get', path: '/v1/privacy/deletions', surface: 'public', auth: true, roles, querySchema: privacyPeriodQuery, responseSchema: privacyDeletions,
      summary: "Deletions of the tenant's personal data in a range of UTC days: retention (audit partitions, session rows), released holds, erasures",
      handler: async ({ principal, q }) => ({ status: 200, body: { data: await privacy.deletions(principal.tenant.id, ...period(q)) } }),
    }),
    route({
      method: 'get', path: '/v1/privacy/summary', surface: 'public', auth: true, roles, querySchema: privacyPeriodQuery, responseSchema: privacySummary,
      summary: 'The personal-data audit summary of the compliance package for a range of UTC days',
      handler: async ({ principal, q }) => ({ status: 200, body: await privacy.summary(principal.tenant.id, ...period(q)) }),
    }),
  ];
}
