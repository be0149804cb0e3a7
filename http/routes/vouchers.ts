import { Errors, VOUCHER_CSV_HEADER, codeFormat, codeStrength, toConsole, toPublic, type Engine, type VoucherSpec } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import {
  bandwidthProfile, bandwidthProfiles, consoleBatch, consoleVoucherBatch, voucher, voucherCreate, voucherCreated, voucherDeleted, voucherExportQuery, voucherList, voucherPage,
  type VoucherFields,
} from './vouchers.schemas.js';

/** Body fields shared by both creation surfaces, as the engine's spec. */
function specOf(body: VoucherFields): VoucherSpec {
  return {
    max_uses: body.max_uses ?? null,
    expires_at: body.expires_at ? new Date(body.expires_at) : null,
    bandwidth_profile: body.bandwidth_profile ?? null,
    daily_quota_mb: body.daily_quota_mb ?? null,
    session_quota_mb: body.session_quota_mb ?? null,
    duration_minutes: body.duration_minutes ?? null,
    bandwidth_down_mbps: body.bandwidth_down_mbps ?? null,
    bandwidth_up_mbps: body.bandwidth_up_mbps ?? null,
    ssids: body.ssids ?? [],
    notes: body.notes ?? null,
    valid_from: body.valid_from ? new Date(body.valid_from) : null,
    valid_until: body.valid_until ? new Date(body.valid_until) : null,
  };
}

/** Vouchers: public API, console batch creation (/api/v1/vouchers), bandwidth profiles; shapes in /v1/openapi.json. */
export function voucherRoutes(engine: Engine): Route[] {
  const vs = engine.vouchers;
  const now = (): number => Date.now();
  return [
    route({
      method: 'post', path: '/v1/vouchers', surface: 'public', auth: true, module: 'vouchers', bodySchema: voucherCreate,
      responseSchema: voucherCreated, status: 201,
      summary: 'Create one voucher (POS systems); code generated when omitted (9 alphanumeric characters, 44.5 bits); the answer says what the code is worth',
      errors: { 409: 'voucher_code_taken', 400: 'unknown_bandwidth_profile, or validation_failed: valid_until not after valid_from or already past' },
      handler: async ({ principal, body }) => ({
        status: 201, body: await vs.createOne(principal.tenant.id, specOf(body), body.code, 'api'),
      }),
      audit: (_ctx, out) => ({ event: 'voucher_created', details: { voucher_id: out.id, code: out.code, max_uses: out.max_uses } }),
    }),
    route({
      method: 'get', path: '/v1/vouchers', surface: 'public', auth: true, module: 'vouchers', querySchema: voucherList,
      responseSchema: voucherPage,
      summary: 'List vouchers; status filter takes active, used, expired or the console states created, activated',
      handler: async ({ principal, q }) => {
        const page = await vs.list(principal.tenant.id, q.status, q.limit, q.offset, q.q, q.cursor);
        return { status: 200, body: { ...page, data: page.data.map((r) => toPublic(r, r.uses, now())) } };
      },
    }),
    // Before /v1/vouchers/:id, so `export` is never read as an id (uWS also prefers the static segment).
    ...(['public', 'console'] as const).map((surface) => route({
      method: 'get', path: surface === 'public' ? '/v1/vouchers/export' : '/api/v1/vouchers/export', surface, auth: true, module: 'vouchers',
      querySchema: voucherExportQuery, responseType: 'text/csv; charset=utf-8',
      summary: `Vouchers of a batch (batch_id) or the list's filter (status, q) as CSV, streamed; header ${VOUCHER_CSV_HEADER}, `
        + 'the import\'s, expires_at a full ISO 8601 UTC timestamp, notes guarded against formula injection (docs/vouchers.md)',
      errors: { 503: 'service_unavailable: too many exports at once' },
      handler: ({ principal, q }) => ({
        status: 200, body: null, stream: vs.exportCsv(principal.tenant.id, { batch_id: q.batch_id, status: q.status, q: q.q }),
        contentType: 'text/csv; charset=utf-8',
        headers: { 'content-disposition': `attachment; filename="vouchers-${q.batch_id ?? new Date().toISOString().slice(0, 10)}.csv"`, 'cache-control': 'no-store' },
      }),
    })),
    route({
      method: 'get', path: '/v1/vouchers/:id', surface: 'public', auth: true, module: 'vouchers', responseSchema: voucher,
      summary: 'Read a voucher', errors: { 404: 'voucher_not_found' },
      handler: async ({ principal, params }) => {
        const r = await vs.get(principal.tenant.id, params[0]!);
        return { status: 200, body: toPublic(r, r.uses, now()) };
      },
    }),
    route({
      method: 'del', path: '/v1/vouchers/:id', surface: 'public', auth: true, module: 'vouchers', responseSchema: voucherDeleted,
      summary: 'Delete a voucher: the code stops working at once; live sessions it started go on', errors: { 404: 'voucher_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: await vs.delete(principal.tenant.id, params[0]!) }),
      audit: (_ctx, out) => ({ event: 'voucher_deleted', details: { voucher_id: out.id, code: out.code } }),
    }),
    route({
      method: 'post', path: '/api/v1/vouchers', surface: 'console', auth: true, module: 'vouchers', bodySchema: consoleVoucherBatch,
      responseSchema: consoleBatch, status: 201, summary: 'Create a batch of up to 10,000 vouchers with generated codes',
      errors: { 409: 'code_space_exhausted', 400: 'unknown_bandwidth_profile, or validation_failed: valid_until not after valid_from or already past' },
      handler: async ({ principal, body }) => {
        const format = codeFormat(body.format);
        const rows = await vs.createBatch(principal.tenant.id, { ...specOf(body), count: body.count, format }, 'console');
        return { status: 201, body: { vouchers: rows.map((r) => ({ id: r.id, code: r.code, status: 'created' })), ...codeStrength(format), batch_id: rows[0]?.batch_id ?? null } };
      },
      audit: ({ body }, out) => ({
        event: 'voucher_batch_created',
        details: { count: out.vouchers.length, first_id: out.vouchers[0]?.id ?? null, last_id: out.vouchers.at(-1)?.id ?? null, bandwidth_profile: body.bandwidth_profile ?? null },
      }),
    }),
    route({
      method: 'get', path: '/api/v1/vouchers', surface: 'console', auth: true, module: 'vouchers', querySchema: voucherList,
      summary: 'List vouchers with console states (created, activated, used, expired)',
      handler: async ({ principal, q }) => {
        const page = await vs.list(principal.tenant.id, q.status, q.limit, q.offset, q.q, q.cursor);
        return { status: 200, body: { ...page, data: page.data.map((r) => toConsole(r, r.uses, now())) } };
      },
    }),
    route({
      method: 'get', path: '/v1/bandwidth-profiles', surface: 'public', auth: true, responseSchema: bandwidthProfiles,
      summary: "The tenant's bandwidth profiles (the four defaults with the tenant's overrides)",
      handler: async ({ principal }) => ({ status: 200, body: await engine.bandwidthProfiles.list(principal.tenant.id) }),
    }),
    route({
      method: 'put', path: '/v1/bandwidth-profiles/:name', surface: 'public', auth: true, bodySchema: bandwidthProfile,
      responseSchema: bandwidthProfiles, summary: 'Customise or add a bandwidth profile; applies to vouchers created afterwards',
      handler: async ({ principal, params, body }) => {
        if (!/^[a-z0-9_-]{1,64}$/.test(params[0]!)) {
          throw Errors.VALIDATION_FAILED('profile name must be 1-64 of a-z, 0-9, _ and -', [{ field: 'name', message: 'invalid' }]);
        }
        return { status: 200, body: await engine.bandwidthProfiles.put(principal.tenant.id, params[0]!, { daily_quota_mb: null, ...body }) };
      },
      audit: ({ params, body }) => ({ event: 'bandwidth_profile_changed', details: { name: params[0], ...body } }),
    }),
  ];
}
