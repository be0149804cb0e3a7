import type { Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { reportSchedule, reportScheduleList, reportScheduleRuns, scheduleCreate } from './report-schedules.schemas.js';

/** Scheduled report e-mail (docs/reports.md, Scheduled e-mail): module reports; changes need the admin role, as every write. */
export function reportScheduleRoutes(engine: Engine): Route[] {
  const store = engine.reportSchedules;
  return [
    route({
      method: 'post', path: '/v1/reports/schedules', surface: 'public', auth: true, module: 'reports', status: 201, bodySchema: scheduleCreate, responseSchema: reportSchedule,
      summary: 'Schedule a report or the compliance package by e-mail: daily, weekly (Monday) or monthly (day 1), at 08:00 local, to 1-20 addresses',
      errors: { 400: 'report_recipient_invalid (field names the address), validation_failed, report_too_many_venues (a report for all venues of a tenant with more than 10)', 403: 'module_not_licensed (reports; or multi_venue, for a report of all venues of a tenant with several)', 404: "hotspot_not_found (not one of the tenant's)" },
      handler: async ({ principal, body }) => ({ status: 201, body: await store.create(principal.tenant.id, body, principal.tenant.modules) }),
      // The addresses stay out of the chain (kept 730 days): how many, not who.
      audit: (_ctx, out) => ({
        event: 'report_schedule_created',
        details: { schedule_id: out.id, frequency: out.frequency, content: out.content, hotspot_id: out.hotspot_id, recipients: out.recipients.length },
      }),
    }),
    route({
      method: 'get', path: '/v1/reports/schedules', surface: 'public', auth: true, module: 'reports', responseSchema: reportScheduleList,
      summary: "List the tenant's report schedules",
      handler: async ({ principal }) => ({ status: 200, body: { data: await store.list(principal.tenant.id) } }),
    }),
    route({
      method: 'get', path: '/v1/reports/schedules/:id', surface: 'public', auth: true, module: 'reports', responseSchema: reportSchedule,
      summary: 'Read a report schedule', errors: { 404: 'report_schedule_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: await store.get(principal.tenant.id, params[0]!) }),
    }),
    route({
      method: 'del', path: '/v1/reports/schedules/:id', surface: 'public', auth: true, module: 'reports', responseSchema: reportSchedule,
      summary: 'Delete a report schedule and its runs; a mail being sent at that moment still goes', errors: { 404: 'report_schedule_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: await store.delete(principal.tenant.id, params[0]!) }),
      audit: (_ctx, out) => ({ event: 'report_schedule_deleted', details: { schedule_id: out.id } }),
    }),
    route({
      method: 'get', path: '/v1/reports/schedules/:id/runs', surface: 'public', auth: true, module: 'reports', responseSchema: reportScheduleRuns,
      summary: "A schedule's runs, newest period first: period, due_at, sent_at, late, status, attempts, error", errors: { 404: 'report_schedule_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: { data: await store.runs(principal.tenant.id, params[0]!) } }),
    }),
  ];
}
