import { REPORT_MAX_VENUES, type Engine } from '../../engine/index.js';
import type { Reply } from '../respond.js';
import { route, type Route, type RouteContext } from '../router.js';
import { reportPdfQuery, type ReportPdfQuery } from './report-pdf.schemas.js';

const SUMMARY = 'The report as a streamed PDF: a cover with the venues and the period in words, KPI cards, vector charts (sessions per day and hour, '
  + 'methods, device types), tables per method, device type and day, and notes in plain words; Turkish or English (docs/reports.md, "PDF export")';
const ERRORS = {
  400: 'report_date_invalid, report_range_reversed, report_range_too_long (over 366 days); '
    + `report_too_many_venues (more than ${REPORT_MAX_VENUES} hotspot_id, with max_venues)`,
  403: 'module_not_licensed (reports; multi_venue for more than one hotspot_id)',
  404: "hotspot_not_found (a hotspot_id not one of the tenant's)",
  503: 'service_unavailable: the process is drawing its most reports at once; try again shortly',
};

async function pdf(engine: Engine, { principal, q, query }: RouteContext<unknown, ReportPdfQuery>): Promise<Reply> {
  // Every hotspot_id given (the validated query keeps only the last of a repeated one); the engine splits the lists.
  const doc = await engine.reportPdf.render(principal.tenant.id, { from: q.from, to: q.to, hotspotIds: query.getAll('hotspot_id'), lang: q.lang });
  return {
    status: 200, body: null, stream: doc.stream, contentType: 'application/pdf',
    headers: { 'content-disposition': `attachment; filename="${doc.filename}"`, 'cache-control': 'no-store' },
  };
}

/** The PDF report: the public API and the console's download (same query, the console's sign-in). */
export function reportPdfRoutes(engine: Engine): Route[] {
  return (['public', 'console'] as const).map((surface) => route({
    method: 'get', path: surface === 'public' ? '/v1/reports/pdf' : '/api/v1/reports/pdf', surface, auth: true, module: 'reports',
    querySchema: reportPdfQuery, responseType: 'application/pdf', summary: SUMMARY, errors: ERRORS,
    handler: (ctx) => pdf(engine, ctx),
  }));
}
