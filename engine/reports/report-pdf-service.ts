import { Errors } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Pool } from '../store/postgres.js';
import { PdfPrinter } from '../workers/pdf-printer.js';
import { reportFigures } from './report-document.js';
import type { ReportPdfJob, ReportPdfLang } from './report-pdf-draw.js';
import { reportRange, type ReportRange } from './report-range.js';
import { checkVenues, reportZone, TENANT_ZONE_SQL, venueIds } from './report-venues.js';

/** Reports are drawn one at a time per process (the other core serves requests); a few wait, beyond that 503. */
const DRAW_THREADS = 1;
const QUEUED_DOCUMENTS = 3;

/** What a PDF report asks for. */
export interface ReportPdfRequest {
  /** YYYY-MM-DD, both included, at most 366 days (the analytics' rules and 400s). */
  from?: string;
  to?: string;
  /** The venues; empty or absent: all of the tenant's. More than one named needs the multi_venue module; at most 10. */
  hotspotIds?: string[];
  /** Default: Turkish when the report's zone is Europe/Istanbul, else English (as the voucher sheets). */
  lang?: ReportPdfLang;
}

/** A report being drawn: its file name, range, and its bytes as they come (nothing is held whole). */
export interface ReportPdfDownload {
  filename: string;
  range: ReportRange;
  lang: ReportPdfLang;
  stream: AsyncIterable<Buffer>;
}

export interface ReportPdfOptions {
  pool: Pool;
  log: Logger;
  now: () => number;
}

interface Venue { id: string; name: string; zone: string }

/**
 * The PDF report (docs/reports.md, "PDF export"): cover, KPI cards, charts,
 * tables and notes in words, Turkish or English. The request thread checks
 * the request and reads the figures from the rollups (report-document.ts);
 * a piscina thread (report-pdf-worker.ts) draws and streams the document
 * back through the voucher sheets' port stream. The HTTP routes and the
 * scheduled e-mail call the same `render`.
 */
export class ReportPdfService {
  private readonly printer: PdfPrinter<ReportPdfJob>;

  constructor(private readonly opts: ReportPdfOptions) {
    this.printer = new PdfPrinter({
      worker: ['engine', 'reports', 'report-pdf-worker.js'], log: opts.log, threads: DRAW_THREADS, queued: QUEUED_DOCUMENTS,
      what: `The PDF report printer (at most ${DRAW_THREADS + QUEUED_DOCUMENTS} at once)`,
    });
  }

  /**
   * Checks the request, reads the figures and starts drawing; throws before
   * the first byte (a bad range 400, too many venues 400, several (named,
   * or all of a tenant's when none is) without the licence 403, a venue not the tenant's 404), so errors keep their
   * status. When every drawing place is taken, the stream's first read
   * throws service_unavailable (503).
   */
  async render(tenantId: string, req: ReportPdfRequest): Promise<ReportPdfDownload> {
    const range = reportRange(req.from, req.to);
    const ids = venueIds(req.hotspotIds ?? []);
    const { rows: [tenant] } = await this.opts.pool.query<{ name: string; modules: string[]; tz: string | null }>(
      `SELECT name, modules, ${TENANT_ZONE_SQL} AS tz FROM tenants t WHERE id = $1`, [tenantId]);
    if (!tenant) throw Errors.TENANT_NOT_FOUND();
    checkVenues(ids, tenant.modules);
    const venues = await this.venues(tenantId, ids);
    // None named is every venue: an aggregate like any other, under the same licence and limit.
    if (ids.length === 0) checkVenues(venues.map((v) => v.id), tenant.modules);
    const timeZone = reportZone(venues.map((v) => v.zone), tenant.tz);
    const lang: ReportPdfLang = req.lang ?? (timeZone === 'Europe/Istanbul' ? 'tr' : 'en');
    const figures = await reportFigures(this.opts.pool, tenantId, venues.map((v) => v.id), range);
    const job: ReportPdfJob = {
      lang, timeZone, from: range.from, to: range.to, days: range.days, generatedAt: this.opts.now(),
      tenantName: tenant.name, sites: venues.map((v) => v.name), figures,
    };
    const stream = this.printer.print(job, { tenant: tenantId, from: range.from, to: range.to });
    return { filename: `report-${range.from}-${range.to}.pdf`, range, lang, stream };
  }

  /** The whole document in memory: for an e-mail attachment (a report is tens to hundreds of KB). */
  async renderBuffer(tenantId: string, req: ReportPdfRequest): Promise<{ filename: string; range: ReportRange; lang: ReportPdfLang; pdf: Buffer }> {
    const { stream, ...rest } = await this.render(tenantId, req);
    const parts: Buffer[] = [];
    for await (const b of stream) parts.push(b);
    return { ...rest, pdf: Buffer.concat(parts) };
  }

  async close(): Promise<void> {
    await this.printer.close();
  }

  /** The venues named, in the order given (all must be the tenant's, else 404 as if unknown), or all of the tenant's, in the order made. */
  private async venues(tenantId: string, ids: string[]): Promise<Venue[]> {
    const { rows } = await this.opts.pool.query<Venue>(
      `SELECT id, name, report_zone(timezone) AS zone FROM hotspots WHERE tenant_id = $1 AND ($2::text[] IS NULL OR id = ANY($2::text[])) ORDER BY created_at, id`,
      [tenantId, ids.length > 0 ? ids : null]);
    if (rows.length < ids.length) throw Errors.HOTSPOT_NOT_FOUND();
    return ids.length > 0 ? ids.map((id) => rows.find((r) => r.id === id)!) : rows;
  }
}
