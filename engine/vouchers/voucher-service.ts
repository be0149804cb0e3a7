import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import { newId } from '../ids.js';
import { decodeCursor, encodeCursor } from '../util/list-cursor.js';
import { keys } from '../redis/keys.js';
import { BlockService } from '../sessions/block-service.js';
import { inTransaction, type Pool, type PoolClient } from '../store/postgres.js';
import { BandwidthProfileService } from './bandwidth-profile-service.js';
import { chosenCodeStrength, codeSpace, codeStrength, generateCode, DEFAULT_CODE_FORMAT, type CodeFormat, type CodeStrength } from './code-generator.js';
import { checkWindow, statusCondition, toPublic, type PublicVoucher, type StatusFilter, type VoucherRow } from './voucher.js';
import { VoucherExport, type ExportSelection } from './voucher-export.js';
import { VoucherLoader } from './voucher-loader.js';
import { putVoucher, removeVoucher } from './voucher-redis.js';

/** What a voucher is made of, whichever surface creates it. */
export interface VoucherSpec {
  max_uses: number | null;
  expires_at: Date | null;
  bandwidth_profile: string | null;
  daily_quota_mb: number | null;
  /** Data one session may use, MB; null: none. */
  session_quota_mb: number | null;
  duration_minutes: number | null;
  bandwidth_down_mbps: number | null;
  bandwidth_up_mbps: number | null;
  ssids: string[];
  notes: string | null;
  /** Match-day window (null or absent: open on that side). */
  valid_from?: Date | null;
  valid_until?: Date | null;
}

export interface BatchRequest extends VoucherSpec {
  count: number;
  format: CodeFormat;
}

export interface Page<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
  /** Give it as `cursor` for the next page; null when this page is the last. */
  next_cursor: string | null;
}

/** Most vouchers one console call may create (issue: up to 10,000 per call). */
export const MAX_BATCH = 10_000;
const COLLISION_ROUNDS = 8;

/**
 * Creating, listing and deleting vouchers. Postgres holds the definitions
 * (and the unique (tenant, code)); Redis holds what verification needs and the
 * authoritative use counter. A create writes Redis inside the Postgres
 * transaction, so a voucher is never committed without being usable.
 */
export class VoucherService {
  /**
   * `profiles` and `loader` default to ones over the same pool and Redis,
   * for tools and tests that need a service and nothing else.
   */
  constructor(
    private readonly pool: Pool,
    private readonly redis: Redis,
    private readonly now: () => number,
    private readonly profiles = new BandwidthProfileService(pool),
    private readonly loader = new VoucherLoader(pool, redis, new BlockService(pool, redis, now)),
    private readonly exporter = new VoucherExport(pool),
  ) {}

  /**
   * One voucher with a given or generated code (public API, POS), with what
   * its code is worth: a chosen code may be as short as 3 characters, and the
   * answer then says so (CodeStrength's warning).
   */
  async createOne(tenantId: string, spec: VoucherSpec, code: string | undefined, source: string): Promise<PublicVoucher & CodeStrength> {
    checkWindow(spec.valid_from, spec.valid_until, this.now());
    const resolved = await this.profiles.resolve(tenantId, spec);
    if (code !== undefined) {
      // One try: the code is taken, or it is ours.
      const rows = await this.insert(tenantId, resolved, source, 1, (round) => (round === 0 ? [code] : null));
      if (rows.length === 0) throw Errors.VOUCHER_CODE_TAKEN();
      return { ...toPublic(rows[0]!, rows[0]!.current_uses, this.now()), ...chosenCodeStrength(code) };
    }
    const rows = await this.createBatch(tenantId, { ...resolved, count: 1, format: DEFAULT_CODE_FORMAT }, source);
    return { ...toPublic(rows[0]!, 0, this.now()), ...codeStrength(DEFAULT_CODE_FORMAT) };
  }

  /** Up to MAX_BATCH vouchers with generated codes; collisions are generated again. */
  async createBatch(tenantId: string, req: BatchRequest, source: string): Promise<VoucherRow[]> {
    checkWindow(req.valid_from, req.valid_until, this.now());
    const spec = await this.profiles.resolve(tenantId, req);
    // Refuse formats that cannot yield the batch without endless collisions.
    if (codeSpace(req.format) < req.count * 20) throw Errors.CODE_SPACE_EXHAUSTED();
    const batchId = newId('vbt_');
    const created = await this.insert(tenantId, spec, source, req.count, (_round, want) => {
      const codes = new Set<string>();
      while (codes.size < want) codes.add(generateCode(req.format));
      return [...codes];
    }, batchId);
    return created;
  }

  /** A page of the tenant's vouchers, newest first; `text` keeps those whose code or notes contain it, in any case. */
  async list(tenantId: string, filter: StatusFilter | undefined, limit: number, offset: number, text?: string, cursor?: string): Promise<Page<VoucherRow & { uses: number }>> {
    let where = filter ? `AND ${statusCondition(filter)}` : '';
    const args: unknown[] = [tenantId];
    if (text) {
      // The text is data, never a pattern: LIKE's own characters are escaped.
      args.push(`%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      where += ` AND (v.code ILIKE $${args.length} OR v.notes ILIKE $${args.length})`;
    }
    // After the cursor's row in the list's order (created_at DESC, id): keyset, outside the window so `total` counts the whole list.
    let after = 'TRUE';
    if (cursor !== undefined) {
      args.push(decodeCursor(cursor));
      const c = `(SELECT created_at, id FROM vouchers WHERE tenant_id = $1 AND id = $${args.length})`;
      after = `(x.created_at < (SELECT created_at FROM ${c} c) OR (x.created_at = (SELECT created_at FROM ${c} c) AND x.id > $${args.length}))`;
    }
    const { rows } = await this.pool.query<VoucherRow & { total: number }>(
      `SELECT * FROM (SELECT v.*, count(*) OVER () AS total FROM vouchers v
       WHERE v.tenant_id = $1 AND v.deleted_at IS NULL ${where}) x
       WHERE ${after} ORDER BY x.created_at DESC, x.id LIMIT $${args.length + 1} OFFSET $${args.length + 2}`, [...args, limit, offset]);
    let total = rows[0]?.total ?? 0;
    if (rows.length === 0 && (offset > 0 || cursor !== undefined)) {
      const c = await this.pool.query<{ n: number }>(
        `SELECT count(*) AS n FROM vouchers v WHERE v.tenant_id = $1 AND v.deleted_at IS NULL ${where}`, args.slice(0, text ? 2 : 1));
      total = c.rows[0]?.n ?? 0;
    }
    // Redis has the exact counter; Postgres may lag it by the outbox sink's delay.
    const live = rows.length ? await this.redis.pipeline(rows.map((r) => ['hget', keys.voucher(tenantId, r.code), 'uses'])).exec() : [];
    const data = rows.map((r, i) => {
      const fromRedis = Number(live?.[i]?.[1]);
      return { ...r, uses: Number.isFinite(fromRedis) && live?.[i]?.[1] != null ? Math.max(fromRedis, r.current_uses) : r.current_uses };
    });
    const last = rows[rows.length - 1];
    return { data, total, limit, offset, next_cursor: rows.length === limit && last ? encodeCursor(last.id) : null };
  }

  async get(tenantId: string, id: string): Promise<VoucherRow & { uses: number }> {
    const { rows } = await this.pool.query<VoucherRow>(
      'SELECT * FROM vouchers WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL', [id, tenantId]);
    const r = rows[0];
    if (!r) throw Errors.VOUCHER_ID_NOT_FOUND();
    const live = await this.redis.hget(keys.voucher(tenantId, r.code), 'uses');
    return { ...r, uses: live === null ? r.current_uses : Math.max(Number(live), r.current_uses) };
  }

  /** Soft delete: the row stays for reports and audit; the code stops working at once and may be issued again. */
  async delete(tenantId: string, id: string): Promise<{ id: string; code: string; deleted: true; deleted_at: string }> {
    const out = await inTransaction(this.pool, async (c) => {
      const { rows } = await c.query<{ code: string; deleted_at: Date }>(
        `UPDATE vouchers SET deleted_at = now() WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL
         RETURNING code, deleted_at`, [id, tenantId]);
      const row = rows[0];
      if (!row) throw Errors.VOUCHER_ID_NOT_FOUND();
      await removeVoucher(this.redis, tenantId, row.code, id);
      return { id, code: row.code, deleted: true as const, deleted_at: row.deleted_at.toISOString() };
    });
    // Once more after the commit: a reload (loadIntoRedis) that read the voucher before the
    // commit may have written it back since, and its own check only sees committed deletes.
    await removeVoucher(this.redis, tenantId, out.code, id);
    return out;
  }

  /**
   * The tenant's vouchers of a batch or a filter as CSV chunks, streamed from
   * Postgres (VoucherExport); another tenant's batch id selects nothing.
   */
  exportCsv(tenantId: string, sel: ExportSelection): AsyncGenerator<Buffer> {
    return this.exporter.csv(tenantId, sel);
  }

  /** Writes the tenant's vouchers and blocks into a new or restarted Redis (VoucherLoader.loadIntoRedis). */
  loadIntoRedis(tenantId: string, runId?: string): Promise<number> {
    return this.loader.loadIntoRedis(tenantId, runId);
  }

  /**
   * Inserts up to `count` vouchers in one transaction, in rounds: `codesFor`
   * gives the codes to try (null: no more tries), and codes another live
   * voucher holds are left out and tried again with new ones. All or
   * nothing: a batch that cannot be completed (the code space is crowded)
   * commits none of it, and returns [] only for a single given code.
   *
   * The codes go into Redis inside the transaction, so a Redis failure
   * commits nothing; any failure takes out of Redis again what this call put
   * there and Postgres does not hold, so no code works that Postgres does
   * not know (use-voucher reads Redis alone).
   */
  private async insert(tenantId: string, spec: VoucherSpec, source: string, count: number,
    codesFor: (round: number, want: number) => string[] | null, batchId: string | null = null): Promise<VoucherRow[]> {
    const c = await this.pool.connect();
    const put: VoucherRow[] = [];
    try {
      await c.query('BEGIN');
      const rows: VoucherRow[] = [];
      for (let round = 0; round < COLLISION_ROUNDS && rows.length < count; round++) {
        const codes = codesFor(round, count - rows.length);
        if (!codes) break;
        rows.push(...(await this.insertRows(c, tenantId, spec, source, codes, batchId)));
      }
      if (rows.length < count) {
        if (count > 1) throw Errors.CODE_SPACE_EXHAUSTED(); // rolled back below
        await c.query('ROLLBACK');
        return [];
      }
      await Promise.all(rows.map(async (r) => {
        put.push(r);
        await this.putFresh(r);
      }));
      await c.query('COMMIT');
      return rows;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => undefined);
      await this.takeBack(tenantId, put);
      throw err;
    } finally {
      c.release();
    }
  }

  private async insertRows(c: PoolClient, tenantId: string, spec: VoucherSpec, source: string, codes: string[], batchId: string | null): Promise<VoucherRow[]> {
    const ids = codes.map(() => newId('vch_'));
    const { rows } = await c.query<VoucherRow>(
      `INSERT INTO vouchers (id, tenant_id, code, max_uses, expires_at, bandwidth_profile, daily_quota_mb,
         duration_minutes, bandwidth_down_mbps, bandwidth_up_mbps, ssids, notes, source, session_quota_mb,
         batch_id, valid_from, valid_until)
       SELECT id, $1, code, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17 FROM unnest($2::text[], $3::text[]) AS t(id, code)
       ON CONFLICT (tenant_id, code) WHERE deleted_at IS NULL DO NOTHING
       RETURNING *`,
      [tenantId, ids, codes, spec.max_uses, spec.expires_at, spec.bandwidth_profile, spec.daily_quota_mb,
        spec.duration_minutes, spec.bandwidth_down_mbps, spec.bandwidth_up_mbps, spec.ssids, spec.notes, source,
        spec.session_quota_mb, batchId, spec.valid_from ?? null, spec.valid_until ?? null]);
    return rows;
  }

  /**
   * Writes a voucher this transaction has just inserted into Redis. A key
   * there already holding another voucher's id is a leftover (of a deleted
   * voucher whose removal failed, or of a transaction that died between
   * Redis and its commit): our insert holds the code under the unique index,
   * so no live voucher can have it. The leftover goes, with its devices.
   */
  private async putFresh(r: VoucherRow): Promise<void> {
    if ((await putVoucher(this.redis, r)) === 1) return;
    const stale = await this.redis.hget(keys.voucher(r.tenant_id, r.code), 'id');
    if (stale) await removeVoucher(this.redis, r.tenant_id, r.code, stale);
    if ((await putVoucher(this.redis, r)) !== 1) {
      throw Errors.VOUCHER_STORE_CONFLICT();
    }
  }

  /**
   * After a failed insert: removes from Redis the vouchers this call put
   * there that Postgres does not hold (a COMMIT that failed may still have
   * committed, so Postgres is asked). Best effort: logged by the caller's
   * error, never thrown over it.
   */
  private async takeBack(tenantId: string, put: VoucherRow[]): Promise<void> {
    if (put.length === 0) return;
    let kept = new Set<string>();
    try {
      const { rows } = await this.pool.query<{ id: string }>(
        'SELECT id FROM vouchers WHERE tenant_id = $1 AND id = ANY($2) AND deleted_at IS NULL', [tenantId, put.map((r) => r.id)]);
      kept = new Set(rows.map((r) => r.id));
    } catch {
      // Postgres away too: all of them go. Should the failed COMMIT have committed after all, those
      // codes fail safe (unknown to the portal) until the tenant is next loaded into Redis.
    }
    await Promise.all(put.filter((r) => !kept.has(r.id)).map((r) =>
      removeVoucher(this.redis, tenantId, r.code, r.id).catch(() => 0)));
  }
}
