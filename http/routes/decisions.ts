import { DASHBOARD_MODULES, type Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { oneOf, requestSchema, responseSchema } from '../schemas.js';

const decisionQuery = requestSchema<{ limit: number; outcome?: 'accept' | 'reject'; hotspot_id?: string }>('decisionQuery', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    outcome: oneOf(['accept', 'reject'] as const),
    hotspot_id: { type: 'string', minLength: 1, maxLength: 64 },
  },
});

const decisionList = responseSchema('decisionList', {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      description: 'The latest decisions, newest first; outcome and hotspot_id filter them (among the latest 5,000)',
      items: {
        type: 'object',
        properties: {
          id: { type: 'string', description: 'Entry id, ordered' },
          at: { type: 'string', format: 'date-time' },
          outcome: { enum: ['accept', 'reject'] },
          method: { type: 'string', description: 'voucher, sms_otp, msgapp_otp, email, sponsor, pms; for an Access-Request that is no sign-in: mac_auth or uam_login' },
          reason: { type: 'string', description: "'' for an accept; the error code (voucher_exhausted, otp_invalid, ...) or the RADIUS reject reason (not_signed_in, daily_quota, ...)" },
          hotspot_id: { type: 'string' },
          source: { enum: ['portal', 'otp', 'radius'] },
          count: { type: 'integer', minimum: 1, description: 'Decisions the row stands for: 1 for a sign-in; the alike answers to a NAS asking again about devices (mac_auth, uam_login: same hotspot, outcome and reason) within a quarter second are one row' },
        },
      },
    },
    decisions_1m: { type: 'integer', description: 'Decisions in the last minute (six 10-second steps), the whole tenant' },
    fail_reasons: {
      type: 'array', description: 'Rejects of the last 24 h by reason, most first, the whole tenant',
      items: { type: 'object', properties: { reason: { type: 'string' }, count: { type: 'integer' } } },
    },
  },
});

/** The engine's sign-in decisions and their aggregates, under /api/v1/tenants/me/ (docs/dashboard-api.md). */
export function decisionRoutes(engine: Engine): Route[] {
  return [
    route({
      method: 'get', path: '/api/v1/tenants/me/decisions', surface: 'dashboard', auth: true, module: DASHBOARD_MODULES,
      querySchema: decisionQuery, responseSchema: decisionList,
      summary: 'Accept and reject decisions of portal, OTP and RADIUS sign-ins, with decisions_1m and the 24 h fail reasons',
      handler: async ({ principal, q }) => ({
        status: 200,
        body: await engine.decisionReader.list(principal.tenant.id, {
          limit: q.limit, ...(q.outcome ? { outcome: q.outcome } : {}), ...(q.hotspot_id ? { hotspotId: q.hotspot_id } : {}),
        }),
      }),
    }),
  ];
}
