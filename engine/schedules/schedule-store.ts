import { checkVenues } from '../reports/report-venues.js';
import { Errors } from '../errors.js';
import { newId } from '../ids.js';
import type { Pool } from '../store/postgres.js';
import { knownZone } from '../util/local-day.js';
import { nextPeriod, type Frequency } from './schedule-periods.js';

export type ScheduleContent = 'report' | 'compliance';
export const SCHEDULE_CONTENTS: readonly ScheduleContent[] = ['report', 'compliance'];
export type ScheduleLang = 'tr' | 'en';
export const SCHEDULE_LANGS: readonly ScheduleLang[] = ['tr', 'en'];
/** Recipients of one schedule, at most. */
export const MAX_RECIPIENTS = 20;

export interface ScheduleInput {
  frequency: Frequency;
  recipients: string[];
  hotspot_id?: string;
  content: ScheduleContent;
  lang?: ScheduleLang;
  name?: string;
}

/** A schedule as the API shows it. */
export interface ReportSchedule {
  id: string;
  name: string;
  frequency: Frequency;
  recipients: string[];
  hotspot_id: string | null;
  content: ScheduleContent;
  lang: ScheduleLang;
  /** The zone its due times and days are in: the hotspot's, or the tenant's for all of them. */
  time_zone: string;
  created_at: string;
  /** The due time of the next period not yet taken up (in the past while one waits to be sent). */
  next_run_at: string;
}

export type RunStatus = 'due' | 'sending' | 'sent' | 'failed' | 'skipped';

export interface ScheduleRun {
  period: { from: string; to: string };
  due_at: string;
  sent_at: string | null;
  late: boolean;
  status: RunStatus;
  attempts: number;
  error: string | null;
}

/**
 * An address as a mail header can carry it: no control character (a CR or
 * LF would start a header of its own: header injection), no space, no angle
 * bracket or comma (one entry, one address), local@domain with a dotted domain.
 */
const ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

/** The recipients checked (each a plain address, 1..MAX_RECIPIENTS) and without repeats (case aside). */
export function checkRecipients(list: readonly string[]): string[] {
  if (list.length === 0 || list.length > MAX_RECIPIENTS) throw Errors.REPORT_RECIPIENT_INVALID('recipients', `between 1 and ${MAX_RECIPIENTS} addresses`);
  const seen = new Set<string>();
  const out: string[] = [];
  list.forEach((a, i) => {
    if (a.length > 254 || !ADDRESS.test(a)) throw Errors.REPORT_RECIPIENT_INVALID(`recipients[${i}]`, 'a plain e-mail address (no name, no spaces, no line breaks)');
    if (!seen.has(a.toLowerCase())) out.push(a);
    seen.add(a.toLowerCase());
  });
  return out;
}

/**
 * The zone of a schedule's row: its hotspot's, else the tenant's setting
 * (`tenants.settings->>'timezone'`), else the tenant's first venue's, else UTC.
 * `s` is the alias of report_schedules in the query.
 */
export const ZONE_SQL = `COALESCE((SELECT h.timezone FROM hotspots h WHERE h.id = s.hotspot_id AND h.tenant_id = s.tenant_id),
  (SELECT CASE WHEN coalesce(t.settings->>'timezone', '') = '' THEN NULL ELSE report_zone(t.settings->>'timezone') END FROM tenants t WHERE t.id = s.tenant_id),
  (SELECT h.timezone FROM hotspots h WHERE h.tenant_id = s.tenant_id ORDER BY h.created_at, h.id LIMIT 1), 'UTC')`;

export interface ScheduleRow {
  tenant_id: string;
  id: string;
  name: string;
  frequency: Frequency;
  recipients: string[];
  hotspot_id: string | null;
  content: ScheduleContent;
  lang: ScheduleLang;
  created_at: Date;
  last_due_at: Date | null;
  zone: string;
}

const COLUMNS = `s.tenant_id, s.id, s.name, s.frequency, s.recipients, s.hotspot_id, s.content, s.lang, s.created_at, s.last_due_at, ${ZONE_SQL} AS zone`;

/** Scheduled report mails (docs/reports.md, Scheduled e-mail): the rows and their runs. */
export class ScheduleStore {
  constructor(private readonly pool: Pool, private readonly now: () => number) {}

  /**
   * `modules`: the tenant's licence. A report for every venue (no hotspot_id) is an aggregate over
   * them: refused now as the PDF report would refuse it at each run (several venues need the
   * multi_venue module, at most 10), not found failing later.
   */
  async create(tenantId: string, input: ScheduleInput, modules: readonly string[]): Promise<ReportSchedule> {
    const recipients = checkRecipients(input.recipients);
    if (input.hotspot_id !== undefined) {
      const { rowCount } = await this.pool.query('SELECT 1 FROM hotspots WHERE id = $1 AND tenant_id = $2', [input.hotspot_id, tenantId]);
      if (!rowCount) throw Errors.HOTSPOT_NOT_FOUND();
    } else if (input.content === 'report') {
      const { rows } = await this.pool.query<{ id: string }>('SELECT id FROM hotspots WHERE tenant_id = $1', [tenantId]);
      checkVenues(rows.map((r) => r.id), modules);
    }
    const id = newId('rsc_');
    // No language given: Turkish for a schedule in Turkey's zone, else English (as the PDF report and the voucher sheets).
    await this.pool.query(
      `INSERT INTO report_schedules (tenant_id, id, name, frequency, recipients, hotspot_id, content, lang, created_at)
       SELECT $1, $2, $3, $4, $5, $6, $7, COALESCE($8, CASE WHEN ${ZONE_SQL} = 'Europe/Istanbul' THEN 'tr' ELSE 'en' END), $9
       FROM (SELECT $1::text AS tenant_id, $6::text AS hotspot_id) s`,
      [tenantId, id, input.name ?? '', input.frequency, recipients, input.hotspot_id ?? null, input.content, input.lang ?? null, new Date(this.now())]);
    return this.get(tenantId, id);
  }

  async list(tenantId: string): Promise<ReportSchedule[]> {
    const { rows } = await this.pool.query<ScheduleRow>(`SELECT ${COLUMNS} FROM report_schedules s WHERE s.tenant_id = $1 ORDER BY s.created_at, s.id`, [tenantId]);
    return rows.map(view);
  }

  /** Another tenant's schedule is as unknown as one that never existed. */
  async get(tenantId: string, id: string): Promise<ReportSchedule> {
    const { rows } = await this.pool.query<ScheduleRow>(`SELECT ${COLUMNS} FROM report_schedules s WHERE s.tenant_id = $1 AND s.id = $2`, [tenantId, id]);
    if (!rows[0]) throw Errors.REPORT_SCHEDULE_NOT_FOUND();
    return view(rows[0]);
  }

  /** Deletes the schedule and its runs; a mail being sent at this moment still goes, and its run is not kept. */
  async delete(tenantId: string, id: string): Promise<ReportSchedule> {
    const s = await this.get(tenantId, id);
    const { rowCount } = await this.pool.query('DELETE FROM report_schedules WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
    if (!rowCount) throw Errors.REPORT_SCHEDULE_NOT_FOUND();
    return s;
  }

  /** The schedule's runs, newest period first (at most `limit`). */
  async runs(tenantId: string, id: string, limit = 100): Promise<ScheduleRun[]> {
    await this.get(tenantId, id);
    const { rows } = await this.pool.query<{
      period_start: string; period_end: string; due_at: Date; sent_at: Date | null; late: boolean | null; status: RunStatus; attempts: number; error: string | null;
    }>(
      `SELECT period_start::text, period_end::text, due_at, sent_at, late, status, attempts, error FROM report_schedule_runs
       WHERE tenant_id = $1 AND schedule_id = $2 ORDER BY period_start DESC LIMIT $3`, [tenantId, id, limit]);
    return rows.map((r) => ({
      period: { from: r.period_start, to: r.period_end }, due_at: r.due_at.toISOString(), sent_at: r.sent_at?.toISOString() ?? null,
      late: r.late ?? false, status: r.status, attempts: r.attempts, error: r.error,
    }));
  }
}

function view(r: ScheduleRow): ReportSchedule {
  const zone = knownZone(r.zone);
  const after = (r.last_due_at ?? r.created_at).getTime();
  return {
    id: r.id, name: r.name, frequency: r.frequency, recipients: r.recipients, hotspot_id: r.hotspot_id, content: r.content, lang: r.lang,
    time_zone: zone, created_at: r.created_at.toISOString(), next_run_at: new Date(nextPeriod(r.frequency, zone, after).dueAt).toISOString(),
  };
}
