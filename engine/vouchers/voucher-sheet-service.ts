import { Errors } from '../errors.js';
import type { HotspotService } from '../hotspots/hotspot-service.js';
import type { Logger } from '../logger.js';
import type { Pool } from '../store/postgres.js';
import { PdfPrinter } from '../workers/pdf-printer.js';
import { statusCondition, type StatusFilter, type VoucherRow } from './voucher.js';
import type { SheetJob, SheetLayout } from './voucher-sheet-draw.js';
import { termsInWords, type SheetLang, type SheetVoucher } from './voucher-sheet-text.js';

/** Most vouchers in one document (10,000: a console batch's maximum; about 1,250 A4 pages). */
export const MAX_SHEET_VOUCHERS = 10_000;
/** Longest `message` printed on each voucher, in characters. */
export const MAX_SHEET_MESSAGE = 200;
/** Most ids one request may name (the query string stays under common URL limits). */
export const MAX_SHEET_IDS = 500;

/** Documents are drawn one at a time per process (the other core serves requests); a few wait, beyond that 503. */
const DRAW_THREADS = 1;
const QUEUED_DOCUMENTS = 4;

export interface SheetRequest {
  ids?: string[];
  batchId?: string;
  status?: StatusFilter;
  q?: string;
  layout: SheetLayout;
  lang?: SheetLang;
  hotspotId?: string;
  message?: string;
}

export interface SheetDownload {
  filename: string;
  count: number;
  stream: AsyncIterable<Buffer>;
}

export interface VoucherSheetOptions {
  pool: Pool;
  hotspots: HotspotService;
  /** PORTAL_PUBLIC_URL; unset: sheets answer 503 voucher_sheets_unavailable (as sponsor links do). */
  publicUrl: string | undefined;
  log: Logger;
}

/** The logo's bytes when it is a PNG or JPEG data URI (pdfkit embeds only those); else null. */
function logoBytes(dataUri: string | null): Uint8Array | null {
  const m = dataUri ? /^data:image\/(?:png|jpeg);base64,([A-Za-z0-9+/=]+)$/.exec(dataUri) : null;
  return m ? new Uint8Array(Buffer.from(m[1]!, 'base64')) : null;
}

/**
 * Printable voucher sheets. The request thread gathers the tenant's rows
 * (every query carries the tenant id, so another tenant's ids find nothing)
 * and turns them into plain data: code, portal URL, terms in words. A
 * piscina thread (voucher-sheet-worker.ts) draws the PDF and streams it back.
 */
export class VoucherSheetService {
  private readonly printer: PdfPrinter<SheetJob>;

  constructor(private readonly opts: VoucherSheetOptions) {
    this.printer = new PdfPrinter({
      worker: ['engine', 'vouchers', 'voucher-sheet-worker.js'], what: 'The voucher sheet printer', log: opts.log,
      threads: DRAW_THREADS, queued: QUEUED_DOCUMENTS,
    });
  }

  /** Checks the request, reads the vouchers and starts drawing. Throws before the first byte, so errors keep their status. */
  async render(tenantId: string, req: SheetRequest): Promise<SheetDownload> {
    const base = this.opts.publicUrl;
    if (!base) throw Errors.VOUCHER_SHEETS_UNAVAILABLE();
    const selectors = [req.ids !== undefined, req.batchId !== undefined, req.status !== undefined || req.q !== undefined].filter(Boolean).length;
    if (selectors !== 1) {
      throw Errors.VALIDATION_FAILED('Name the vouchers one way: ids, batch_id, or the list filter (status, q)', [{ field: 'ids', message: 'give exactly one of ids, batch_id, status/q' }]);
    }
    const message = req.message?.replace(/[\u0000-\u001f\u007f]/g, ' ').trim() || null;
    const hotspot = await this.hotspotFor(tenantId, req.hotspotId);
    const rows = await this.rows(tenantId, req);
    const lang: SheetLang = req.lang ?? (hotspot.timezone === 'Europe/Istanbul' ? 'tr' : 'en');
    const vouchers: SheetVoucher[] = rows.map((r) => ({
      code: r.code,
      url: `${base}/portal?${new URLSearchParams({ hotspot_id: hotspot.id, code: r.code })}`,
      lines: termsInWords(r, lang, hotspot.timezone),
    }));
    const job: SheetJob = { layout: req.layout, lang, message, logo: logoBytes(hotspot.portal.logo), vouchers };
    const stream = this.printer.print(job, { tenant: tenantId, count: vouchers.length });
    const name = req.batchId ?? (req.ids ? 'selection' : 'list');
    return { filename: `vouchers-${name}-${req.layout}-${lang}.pdf`, count: vouchers.length, stream };
  }

  async close(): Promise<void> {
    await this.printer.close();
  }

  /** The named hotspot of this tenant, or its only one; none or several without a name is the caller's mistake (400). */
  private async hotspotFor(tenantId: string, hotspotId: string | undefined): Promise<{ id: string; timezone: string; portal: { logo: string | null } }> {
    if (hotspotId !== undefined) return this.opts.hotspots.get(tenantId, hotspotId);
    const all = await this.opts.hotspots.list(tenantId);
    if (all.length === 1) return all[0]!;
    throw Errors.VALIDATION_FAILED(all.length === 0
      ? 'The tenant has no hotspot yet: a voucher sheet needs one, whose portal its QR codes open'
      : `The tenant has ${all.length} hotspots: say with hotspot_id which portal the QR codes open`,
    [{ field: 'hotspot_id', message: all.length === 0 ? 'no hotspot to print for' : 'required when the tenant has several hotspots' }]);
  }

  /** The tenant's live vouchers the request names: ids in their order, else oldest first (a batch prints in the order it was made). */
  private async rows(tenantId: string, req: SheetRequest): Promise<VoucherRow[]> {
    const args: unknown[] = [tenantId];
    let where: string;
    if (req.ids !== undefined) {
      args.push([...new Set(req.ids)]);
      where = 'v.id = ANY($2)';
    } else if (req.batchId !== undefined) {
      args.push(req.batchId);
      where = 'v.batch_id = $2';
    } else {
      where = req.status ? statusCondition(req.status) : 'TRUE';
      if (req.q) {
        // The text is data, never a pattern: LIKE's own characters are escaped.
        args.push(`%${req.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
        where += ` AND (v.code ILIKE $2 OR v.notes ILIKE $2)`;
      }
    }
    const { rows } = await this.opts.pool.query<VoucherRow>(
      `SELECT v.* FROM vouchers v WHERE v.tenant_id = $1 AND v.deleted_at IS NULL AND ${where}
       ORDER BY v.created_at, v.id LIMIT ${MAX_SHEET_VOUCHERS + 1}`, args);
    // An id of another tenant is as unknown as one never made: the answer is the same 404, naming no id.
    if (rows.length === 0 || (req.ids !== undefined && rows.length < new Set(req.ids).size)) throw Errors.VOUCHER_ID_NOT_FOUND();
    if (rows.length > MAX_SHEET_VOUCHERS) {
      throw Errors.VALIDATION_FAILED(`More than ${MAX_SHEET_VOUCHERS} vouchers match; one document holds at most ${MAX_SHEET_VOUCHERS}`, [{ field: 'batch_id', message: 'narrow the selection' }]);
    }
    if (req.ids !== undefined) {
      // A selection prints in the order it was named.
      const at = new Map(req.ids.map((id, i) => [id, i] as const));
      rows.sort((a, b) => at.get(a.id)! - at.get(b.id)!);
    }
    return rows;
  }
}
