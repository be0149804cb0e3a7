import type { Readable } from 'node:stream';
import type { RedisClient as Redis } from '../redis/redis-client.js';
import { AppError, Errors } from '../errors.js';
import { newId } from '../ids.js';
import { keys } from '../redis/keys.js';
import type { Pool } from '../store/postgres.js';
import type { BandwidthProfile } from './bandwidth-profiles.js';
import type { BandwidthProfileService } from './bandwidth-profile-service.js';
import { knownZone } from '../util/local-day.js';
import { checkRecord, readCsv, type CsvVoucher, type InvalidRow, type RowContext } from './voucher-csv.js';
import { checkWindow, type VoucherRow } from './voucher.js';
import { putVoucher, queuePutVoucher, removeVoucher } from './voucher-redis.js';

/** Rows written per round (one INSERT, one Redis pipeline); the file is read on while nothing waits. */
export const IMPORT_CHUNK_ROWS = 5000;
/** Invalid rows listed in a report; all are counted. */
export const MAX_LISTED_INVALID = 1000;

export interface ImportOptions {
  /** Match-day window every imported row gets (null: open). */
  valid_from: Date | null;
  valid_until: Date | null;
}

/** The answer to an import: docs/vouchers-bulk.md. */
export interface ImportReport {
  batch_id: string;
  imported: number;
  invalid: number;
  /** The first MAX_LISTED_INVALID invalid rows, in file order. */
  invalid_rows: InvalidRow[];
  invalid_rows_truncated: boolean;
  /** The zone a date-only expires_at was read in. */
  time_zone: string;
}

/**
 * A CSV import of vouchers with chosen codes (POST /v1/vouchers/import).
 *
 * The file is read as a stream and written in chunks of IMPORT_CHUNK_ROWS:
 * each chunk is committed to Postgres (one INSERT ... ON CONFLICT DO NOTHING
 * RETURNING), then written to Redis (one pipeline of put-voucher), before
 * the next is read. So no code works at the portal without its durable row,
 * and every code the report counts works when the answer arrives. Memory is
 * one chunk: duplicates within a chunk are caught by a set, and across
 * chunks by the conflict itself (the row that holds the code carries this
 * import's batch id).
 *
 * On a Redis failure the chunk's rows are taken out of Redis and then, those
 * Redis confirmed gone, deleted from Postgres again (they were never usable,
 * so nobody used them); the import stops with voucher_import_interrupted,
 * naming the batch and the rows that stay (see withdraw).
 */
export class VoucherImport {
  constructor(
    private readonly pool: Pool,
    private readonly redis: Redis,
    private readonly profiles: BandwidthProfileService,
    private readonly chunkRows = IMPORT_CHUNK_ROWS,
    private readonly now: () => number = Date.now,
  ) {}

  async import(tenantId: string, source: Readable, opts: ImportOptions): Promise<ImportReport> {
    // The window every row gets, checked as a creation checks it: a file is not a way round the rule.
    checkWindow(opts.valid_from, opts.valid_until, this.now());
    const [timeZone, profiles] = await Promise.all([this.zoneOf(tenantId), this.profiles.list(tenantId)]);
    const ctx: RowContext = { timeZone, profiles: new Set(Object.keys(profiles)) };
    const report: ImportReport = { batch_id: newId('vbt_'), imported: 0, invalid: 0, invalid_rows: [], invalid_rows_truncated: false, time_zone: timeZone };
    const invalid = (row: InvalidRow): void => {
      report.invalid++;
      if (report.invalid_rows.length < MAX_LISTED_INVALID) report.invalid_rows.push(row);
      else report.invalid_rows_truncated = true;
    };
    let chunk: CsvVoucher[] = [];
    const inChunk = new Set<string>();
    // The chunk being written while the next is read: parsing overlaps the stores' round trips,
    // and a chunk is written only once the one before it is in both stores.
    let writing: Promise<void> = Promise.resolve();
    const flush = async (rows: CsvVoucher[]): Promise<void> => {
      await writing;
      writing = this.write(tenantId, report, rows, profiles, opts, invalid);
      writing.catch(() => undefined); // awaited at the next flush or the end; not unhandled meanwhile
    };
    try {
      for await (const rec of readCsv(source)) {
        if ('malformed' in rec) {
          invalid({ line: rec.line, reason: 'csv_malformed', message: rec.malformed });
          continue;
        }
        const row = checkRecord(rec.line, rec.fields, ctx);
        if ('reason' in row) {
          invalid(row);
        } else if (inChunk.has(row.code)) {
          invalid({ line: row.line, reason: 'duplicate_in_file', message: 'The same code appears earlier in the file; the first one was imported' });
        } else {
          inChunk.add(row.code);
          chunk.push(row);
          if (chunk.length >= this.chunkRows) {
            await flush(chunk);
            chunk = [];
            inChunk.clear();
          }
        }
      }
      if (chunk.length) await flush(chunk);
      await writing;
    } catch (err) {
      source.destroy();
      await writing.catch(() => undefined); // a chunk still in flight is counted (or withdrawn) before the answer
      // Chunks committed before the failure stay: the error says which batch holds them and how many
      // (and the route audits them from these fields). A store's own error becomes voucher_import_interrupted.
      if (report.imported > 0) {
        const app = err instanceof AppError ? err : Errors.VOUCHER_IMPORT_INTERRUPTED().withCause(err);
        throw app.withFields({ batch_id: report.batch_id, imported: report.imported, invalid: report.invalid });
      }
      throw err;
    }
    report.invalid_rows.sort((a, b) => a.line - b.line);
    return report;
  }

  /**
   * The zone a date-only expires_at means: the hotspot's when the tenant has
   * exactly one, else the tenant's (settings.timezone), else UTC.
   */
  async zoneOf(tenantId: string): Promise<string> {
    const { rows } = await this.pool.query<{ tz: string | null; zones: string[] | null }>(
      `SELECT (SELECT settings->>'timezone' FROM tenants WHERE id = $1) AS tz,
              (SELECT array_agg(timezone) FROM (SELECT timezone FROM hotspots WHERE tenant_id = $1 LIMIT 2) h) AS zones`, [tenantId]);
    const r = rows[0];
    const zones = r?.zones ?? [];
    return knownZone(zones.length === 1 ? zones[0] : r?.tz);
  }

  private async write(tenantId: string, report: ImportReport, chunk: CsvVoucher[], profiles: Record<string, BandwidthProfile>,
    opts: ImportOptions, invalid: (row: InvalidRow) => void): Promise<void> {
    const n = chunk.length;
    const ids: string[] = new Array(n), codes: string[] = new Array(n), maxUses: (number | null)[] = new Array(n);
    const expires: (Date | null)[] = new Array(n), names: (string | null)[] = new Array(n), notes: (string | null)[] = new Array(n);
    const down: (number | null)[] = new Array(n), up: (number | null)[] = new Array(n), quota: (number | null)[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const v = chunk[i]!;
      const p = v.bandwidth_profile ? profiles[v.bandwidth_profile] : undefined;
      ids[i] = newId('vch_'); codes[i] = v.code; maxUses[i] = v.max_uses; expires[i] = v.expires_at;
      names[i] = v.bandwidth_profile; notes[i] = v.notes;
      down[i] = p?.down_mbps ?? null; up[i] = p?.up_mbps ?? null; quota[i] = p?.daily_quota_mb ?? null;
    }
    // One statement, so one transaction: committed when it returns. Only the ids come back: the
    // rows are built here from what was sent (parsing 20 columns of each row back cost more than the insert).
    const { rows: back } = await this.pool.query<{ id: string }>(
      `INSERT INTO vouchers (id, tenant_id, code, max_uses, expires_at, bandwidth_profile, bandwidth_down_mbps, bandwidth_up_mbps,
         daily_quota_mb, notes, source, batch_id, valid_from, valid_until)
       SELECT t.id, $1, t.code, t.max_uses, t.expires_at, t.profile, t.down, t.up, t.quota, t.notes, 'csv', $11, $12, $13
       FROM unnest($2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::text[], $7::int[], $8::int[], $9::int[], $10::text[])
         AS t(id, code, max_uses, expires_at, profile, down, up, quota, notes)
       ON CONFLICT (tenant_id, code) WHERE deleted_at IS NULL DO NOTHING
       RETURNING id`,
      [tenantId, ids, codes, maxUses, expires, names, down, up, quota, notes, report.batch_id, opts.valid_from, opts.valid_until]);
    const index = new Map<string, number>();
    for (let i = 0; i < n; i++) index.set(ids[i]!, i);
    const created = new Date();
    const rows: VoucherRow[] = back.map(({ id }) => {
      const i = index.get(id)!;
      return {
        id, tenant_id: tenantId, code: codes[i]!, max_uses: maxUses[i]!, current_uses: 0, expires_at: expires[i]!, bandwidth_profile: names[i]!,
        daily_quota_mb: quota[i]!, session_quota_mb: null, duration_minutes: null, bandwidth_down_mbps: down[i]!, bandwidth_up_mbps: up[i]!,
        ssids: [], notes: notes[i]!, source: 'csv', batch_id: report.batch_id, valid_from: opts.valid_from, valid_until: opts.valid_until, created_at: created,
      };
    });
    if (rows.length < n) await this.reportConflicts(tenantId, report.batch_id, chunk, rows, invalid);
    if (rows.length === 0) return;
    try {
      await this.putAll(rows);
    } catch (err) {
      // Rows that could not be taken out of Redis stay in Postgres too, and count as imported.
      report.imported += await this.withdraw(tenantId, rows);
      throw Errors.VOUCHER_IMPORT_INTERRUPTED().withCause(err);
    }
    report.imported += rows.length;
  }

  /** Rows the INSERT left out: a live voucher of this tenant holds the code, from this file (a duplicate) or from before. */
  private async reportConflicts(tenantId: string, batchId: string, chunk: CsvVoucher[], inserted: VoucherRow[], invalid: (row: InvalidRow) => void): Promise<void> {
    const done = new Set(inserted.map((r) => r.code));
    const left = chunk.filter((v) => !done.has(v.code));
    const { rows } = await this.pool.query<{ code: string; batch_id: string | null }>(
      'SELECT code, batch_id FROM vouchers WHERE tenant_id = $1 AND deleted_at IS NULL AND code = ANY($2)', [tenantId, left.map((v) => v.code)]);
    const ours = new Set(rows.filter((r) => r.batch_id === batchId).map((r) => r.code));
    for (const v of left) {
      invalid(ours.has(v.code)
        ? { line: v.line, reason: 'duplicate_in_file', message: 'The same code appears earlier in the file; the first one was imported' }
        : { line: v.line, reason: 'code_exists', message: 'A voucher with this code exists already' });
    }
  }

  /**
   * Writes committed rows to Redis in one pipeline. A code whose key holds
   * another voucher's id there is a leftover of a deleted voucher (the
   * unique index gave this code to our row): it goes, and ours is written.
   */
  private async putAll(rows: VoucherRow[]): Promise<void> {
    const p = this.redis.pipeline();
    for (const r of rows) queuePutVoucher(p, r);
    const out = (await p.exec()) ?? [];
    if (out.length !== rows.length) throw new Error('Redis pipeline answered short');
    for (let i = 0; i < rows.length; i++) {
      const [err, written] = out[i]!;
      if (err) throw err;
      if (written === 1) continue;
      const r = rows[i]!;
      const stale = await this.redis.hget(keys.voucher(r.tenant_id, r.code), 'id');
      if (stale) await removeVoucher(this.redis, r.tenant_id, r.code, stale);
      if ((await putVoucher(this.redis, r)) !== 1) throw Errors.VOUCHER_STORE_CONFLICT();
    }
  }

  /**
   * A chunk Redis did not take: each row leaves Redis first (whatever of it
   * got there), and only the rows Redis confirmed gone leave Postgres (hard
   * delete: they were never usable, so nothing refers to them). A row Redis
   * could not confirm (Redis away) keeps its Postgres row, so no code ever
   * works at the portal without its durable row. Answers how many rows stay:
   * they are counted as imported (usable now, or at the tenant's next reload
   * into Redis). Should the Postgres delete fail, those rows stay as well.
   */
  private async withdraw(tenantId: string, rows: VoucherRow[]): Promise<number> {
    const gone = await Promise.all(rows.map((r) => removeVoucher(this.redis, tenantId, r.code, r.id).then(() => true, () => false)));
    const out = rows.filter((_, i) => gone[i]).map((r) => r.id);
    if (out.length === 0) return rows.length;
    const deleted = await this.pool.query('DELETE FROM vouchers WHERE tenant_id = $1 AND id = ANY($2)', [tenantId, out])
      .then((r) => r.rowCount ?? 0, () => 0);
    return rows.length - deleted;
  }
}
