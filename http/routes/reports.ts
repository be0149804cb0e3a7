import type { Engine } from '../../engine/index.js';
import type { Reply } from '../respond.js';
import { route, type Route } from '../router.js';
import { analytics, analyticsQuery, sessionReport, sessionReportQuery } from './reports.schemas.js';

const RANGE_ERRORS = {
  400: 'report_date_invalid (from or to not a YYYY-MM-DD date), report_range_reversed, report_range_too_long (over 366 days)',
  403: 'module_not_licensed (reports)', 404: 'hotspot_not_found (hotspot_id not one of the tenant\'s)',
};

/** Session report and analytics (the spec's contract; docs/reports.md). */
export function reportRoutes(engine: Engine): Route[] {
  return [
    // The console's copy (/api/v1/, its operator JWT) is what its reports page downloads the CSV from.
    ...(['public', 'console'] as const).map((surface) => route({
      method: 'get', path: surface === 'public' ? '/v1/reports/sessions' : '/api/v1/reports/sessions', surface, auth: true, module: 'reports',
      querySchema: sessionReportQuery, responseSchema: sessionReport,
      summary: 'Sessions started on the days asked (local days of each hotspot), with totals; format=csv for text/csv with a header row. Streamed whatever the size',
      errors: { ...RANGE_ERRORS, 503: 'service_unavailable: the process has its most session report downloads running (4); try again shortly' },
      handler: async ({ principal, q }): Promise<Reply> => {
        const rq = { from: q.from, to: q.to, hotspotId: q.hotspot_id };
        if (q.format === 'csv') {
          const { range, stream } = await engine.reports.sessionsCsv(principal.tenant.id, rq);
          return {
            status: 200, body: null, stream, contentType: 'text/csv; charset=utf-8',
            headers: { 'content-disposition': `attachment; filename="sessions-${range.from}-${range.to}.csv"`, 'cache-control': 'no-store' },
          };
        }
        const stream = await engine.reports.sessionsJson(principal.tenant.id, rq);
        return { status: 200, body: null, stream, contentType: 'application/json', headers: { 'cache-control': 'no-store' } };
      },
    })),
    route({
      method: 'get', path: '/v1/reports/analytics', surface: 'public', auth: true, module: 'reports', querySchema: analyticsQuery,
      responseSchema: analytics,
      summary: 'Analytics as the spec shapes them, over the rollups: sessions, unique devices, average duration, methods, device types, peak hour',
      errors: RANGE_ERRORS,
      handler: async ({ principal, q }) => ({
        status: 200, body: await engine.reports.analytics(principal.tenant.id, { from: q.from, to: q.to, hotspotId: q.hotspot_id }),
      }),
    }),
  ];
}
