import type { Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { consoleReport, consoleReportQuery } from './console-reports.schemas.js';

/** The console's reports (docs/reports.md, "Console reports"): one read, every figure of the page. */
export function consoleReportRoutes(engine: Engine): Route[] {
  return [
    route({
      method: 'get', path: '/api/v1/reports/console', surface: 'console', auth: true, module: 'reports', querySchema: consoleReportQuery,
      responseSchema: consoleReport,
      summary: "The console's report over one venue or several (up to 10, module multi_venue): a preset or custom period in the venue's zone; "
        + 'sessions, devices, sign-ins and failures, data, hours, SSIDs, top devices, methods, guests (from the rollups)',
      errors: {
        400: 'report_date_invalid, report_range_reversed, report_range_too_long (custom), report_too_many_venues (over 10; max_venues), validation_failed (no hotspot_id)',
        403: 'module_not_licensed (reports; multi_venue for more than one hotspot)', 404: 'hotspot_not_found (an id not one of the tenant\'s)',
      },
      handler: async ({ principal, q, query }) => ({
        status: 200,
        body: await engine.consoleReports.report(principal.tenant.id, principal.tenant.modules, {
          preset: q.preset, from: q.from, to: q.to, hotspotIds: query.getAll('hotspot_id'),
        }),
      }),
    }),
  ];
}
