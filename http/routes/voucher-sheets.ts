import { MAX_SHEET_VOUCHERS, type Engine } from '../../engine/index.js';
import type { Reply } from '../respond.js';
import { route, type Route, type RouteContext } from '../router.js';
import { voucherSheetQuery, type SheetQuery } from './voucher-sheets.schemas.js';

const SUMMARY = `Printable voucher sheets as a streamed PDF (A4 grid or 80 mm receipt), each with its code in large type, a QR code `
  + `that opens the portal with the code filled in, validity and limits in words, the hotspot's logo and an optional message; `
  + `at most ${MAX_SHEET_VOUCHERS} vouchers per document (docs/voucher-sheets.md)`;
const ERRORS = {
  400: 'validation_failed: not exactly one of ids, batch_id, status/q; hotspot_id missing when the tenant has several hotspots or none; '
    + `more than ${MAX_SHEET_VOUCHERS} vouchers`,
  404: "voucher_not_found: an id that is not this tenant's, or nothing matches; hotspot_not_found",
  503: 'voucher_sheets_unavailable (no PORTAL_PUBLIC_URL); service_unavailable: too many documents being drawn',
};

/** The query as the engine's request; the route decides nothing else. */
async function sheet(engine: Engine, { principal, q }: RouteContext<unknown, SheetQuery>): Promise<Reply> {
  const doc = await engine.voucherSheets.render(principal.tenant.id, {
    ids: q.ids?.split(','), batchId: q.batch_id, status: q.status, q: q.q, layout: q.layout, lang: q.lang, hotspotId: q.hotspot_id, message: q.message,
  });
  return {
    status: 200, body: null, stream: doc.stream, contentType: 'application/pdf',
    headers: { 'content-disposition': `attachment; filename="${doc.filename}"`, 'cache-control': 'no-store', 'x-voucher-count': String(doc.count) },
  };
}

/** Voucher sheets: the public API and the console's print button (same query, the console's sign-in). */
export function voucherSheetRoutes(engine: Engine): Route[] {
  return (['public', 'console'] as const).map((surface) => route({
    method: 'get', path: surface === 'public' ? '/v1/vouchers/pdf' : '/api/v1/vouchers/pdf', surface, auth: true, module: 'vouchers',
    querySchema: voucherSheetQuery, responseType: 'application/pdf', summary: SUMMARY, errors: ERRORS,
    handler: (ctx) => sheet(engine, ctx),
  }));
}
