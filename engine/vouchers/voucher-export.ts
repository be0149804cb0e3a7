import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { Errors } from '../errors.js';
import type { Pool } from '../store/postgres.js';
import { statusCondition, type StatusFilter } from './voucher.js';

/** The export's header: the CSV import's, so an export imports again (docs/vouchers.md). */
export const VOUCHER_CSV_HEADER = 'code,max_uses,expires_at,bandwidth_profile,notes';

/** Which vouchers an export holds: a batch, or the list's filter (status, text), or both. */
export interface ExportSelection {
  batch_id?: string;
  status?: StatusFilter;
  q?: string;
}

/**
 * Exports running at once in this process. Each holds a Postgres connection
 * for as long as its client reads (COPY cannot pause without its session),
 * so a few slow downloads must not take the whole pool from sign-in writes.
 */
export const MAX_CONCURRENT_EXPORTS = 4;

/**
 * A tenant's vouchers as CSV, streamed from Postgres with COPY ... TO STDOUT:
 * Postgres writes the CSV (RFC 4180 quoting: a field with a comma, a quote or
 * a line break is quoted, its quotes doubled), and the chunks go to the
 * client as they come, with its back-pressure; nothing is held whole, so
 * memory stays flat whatever the size.
 *
 * Formula injection (as engine/util/csv-cell.ts, in SQL since Postgres
 * writes the cells): a note opening with `=`, `+`, `-`, `@`, a tab or a CR
 * gets a leading `'`, a plain signed number excepted. The other columns
 * cannot open a formula: codes and profile names are [A-Za-z0-9_-] (a code
 * may open with `-`, but with no parenthesis or operator a spreadsheet can
 * only show it, and a prefix would change the code the POS sells), max_uses
 * a number, expires_at a timestamp.
 *
 * COPY takes no bind parameters, so the values go in as literals: the
 * tenant id is ours, the batch id and status are schema-checked, and the
 * text is quoted by pg's escapeLiteral (and its LIKE characters escaped).
 */
export class VoucherExport {
  private running = 0;

  constructor(private readonly pool: Pool) {}

  /** The CSV's chunks; the first `next()` throws service_unavailable when MAX_CONCURRENT_EXPORTS are running. */
  async *csv(tenantId: string, sel: ExportSelection): AsyncGenerator<Buffer> {
    if (this.running >= MAX_CONCURRENT_EXPORTS) throw Errors.SERVICE_UNAVAILABLE(`Voucher export (at most ${MAX_CONCURRENT_EXPORTS} at once)`);
    this.running++;
    try {
      const c = await this.pool.connect();
      let whole = false;
      try {
        for await (const chunk of c.query(copyTo(exportSql(tenantId, sel)))) yield chunk as Buffer;
        whole = true;
      } finally {
        // A COPY cut short (the client went away) leaves the connection mid-protocol: it is
        // destroyed, which also ends the statement in Postgres, never handed to the next caller.
        c.release(whole ? undefined : true);
      }
    } finally {
      this.running--;
    }
  }
}

/** The COPY statement of a selection (exported for its test). */
export function exportSql(tenantId: string, sel: ExportSelection): string {
  let where = `v.tenant_id = ${pg.escapeLiteral(tenantId)} AND v.deleted_at IS NULL`;
  if (sel.batch_id !== undefined) where += ` AND v.batch_id = ${pg.escapeLiteral(sel.batch_id)}`;
  if (sel.status !== undefined) where += ` AND ${statusCondition(sel.status)}`;
  if (sel.q) {
    const like = pg.escapeLiteral(`%${sel.q.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`);
    where += ` AND (v.code ILIKE ${like} OR v.notes ILIKE ${like})`;
  }
  const notes = String.raw`CASE WHEN v.notes ~ '^[-=+@\t\r]' AND v.notes !~ '^[-+][0-9]+(\.[0-9]+)?$' THEN '''' || v.notes ELSE v.notes END`;
  return `COPY (SELECT v.code, v.max_uses,
      to_char(v.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at,
      v.bandwidth_profile, ${notes} AS notes
    FROM vouchers v WHERE ${where} ORDER BY v.created_at, v.id) TO STDOUT WITH (FORMAT csv, HEADER true)`;
}
