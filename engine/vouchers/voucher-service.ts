import { Redis } from 'ioredis';
import { Errors } from '../errors.js';
import { newId } from '../ids.js';
import { keys } from '../redis/keys.js';
import { serverRunId } from '../redis/scripts.js';
import { inTransaction, type Pool, type PoolClient } from '../store/postgres.js';
import { profilesFor, type BandwidthProfile } from './bandwidth-profiles.js';
import { codeSpace, generateCode, DEFAULT_CODE_FORMAT, type CodeFormat } from './code-generator.js';
import {
  consoleStatus, publicStatus, statusCondition,
  type ConsoleStatus, type PublicStatus, type StatusFilter, type VoucherRow,
} from './voucher.js';

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
}

export interface BatchRequest extends VoucherSpec {
  count: number;
  format: CodeFormat;
}

/** The public API's voucher record. */
export interface PublicVoucher {
  id: string;
  code: string;
  max_uses: number | null;
  current_uses: number;
  status: PublicStatus;
  created_at: string;
  expires_at: string | null;
  duration_minutes: number | null;
  bandwidth_down_mbps: number | null;
  bandwidth_up_mbps: number | null;
  bandwidth_profile: string | null;
  daily_quota_mb: number | null;
  session_quota_mb: number | null;
  ssids: string[];
  notes: string | null;
}

export interface ConsoleVoucher extends Omit<PublicVoucher, 'status'> {
  status: ConsoleStatus;
}

export interface Page<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
}

/** A row of `blocks` as the reload needs it; `until` null: permanent. */
interface BlockRow {
  mac: string;
  duration: string;
  until: Date | null;
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
  constructor(private readonly pool: Pool, private readonly redis: Redis, private readonly now: () => number) {}

  async profiles(tenantId: string): Promise<Record<string, BandwidthProfile>> {
    const { rows } = await this.pool.query<{ p: Record<string, BandwidthProfile> | null }>(
      "SELECT settings->'bandwidth_profiles' AS p FROM tenants WHERE id = $1", [tenantId]);
    return profilesFor(rows[0]?.p ?? undefined);
  }

  async putProfile(tenantId: string, name: string, profile: BandwidthProfile): Promise<Record<string, BandwidthProfile>> {
    await this.pool.query(
      `UPDATE tenants SET settings = jsonb_set(settings, '{bandwidth_profiles}',
         COALESCE(settings->'bandwidth_profiles', '{}'::jsonb) || jsonb_build_object($2::text, $3::jsonb))
       WHERE id = $1`, [tenantId, name, JSON.stringify(profile)]);
    return this.profiles(tenantId);
  }

  /** One voucher with a given or generated code (public API, POS). */
  async createOne(tenantId: string, spec: VoucherSpec, code: string | undefined, source: string): Promise<PublicVoucher> {
    const resolved = await this.resolveProfile(tenantId, spec);
    if (code !== undefined) {
      // One try: the code is taken, or it is ours.
      const rows = await this.insert(tenantId, resolved, source, 1, (round) => (round === 0 ? [code] : null));
      if (rows.length === 0) throw Errors.VOUCHER_CODE_TAKEN();
      return toPublic(rows[0]!, rows[0]!.current_uses, this.now());
    }
    const rows = await this.createBatch(tenantId, { ...resolved, count: 1, format: DEFAULT_CODE_FORMAT }, source);
    return toPublic(rows[0]!, 0, this.now());
  }

  /** Up to MAX_BATCH vouchers with generated codes; collisions are generated again. */
  async createBatch(tenantId: string, req: BatchRequest, source: string): Promise<VoucherRow[]> {
    const spec = await this.resolveProfile(tenantId, req);
    // Refuse formats that cannot yield the batch without endless collisions.
    if (codeSpace(req.format) < req.count * 20) throw Errors.CODE_SPACE_EXHAUSTED();
    const created = await this.insert(tenantId, spec, source, req.count, (_round, want) => {
      const codes = new Set<string>();
      while (codes.size < want) codes.add(generateCode(req.format));
      return [...codes];
    });
    return created;
  }

  async list(tenantId: string, filter: StatusFilter | undefined, limit: number, offset: number): Promise<Page<VoucherRow & { uses: number }>> {
    const where = filter ? `AND ${statusCondition(filter)}` : '';
    const { rows } = await this.pool.query<VoucherRow & { total: number }>(
      `SELECT v.*, count(*) OVER () AS total FROM vouchers v
       WHERE v.tenant_id = $1 AND v.deleted_at IS NULL ${where}
       ORDER BY v.created_at DESC, v.id LIMIT $2 OFFSET $3`, [tenantId, limit, offset]);
    let total = rows[0]?.total ?? 0;
    if (rows.length === 0 && offset > 0) {
      const c = await this.pool.query<{ n: number }>(
        `SELECT count(*) AS n FROM vouchers v WHERE v.tenant_id = $1 AND v.deleted_at IS NULL ${where}`, [tenantId]);
      total = c.rows[0]?.n ?? 0;
    }
    // Redis has the exact counter; Postgres may lag it by the outbox sink's delay.
    const live = rows.length ? await this.redis.pipeline(rows.map((r) => ['hget', keys.voucher(tenantId, r.code), 'uses'])).exec() : [];
    const data = rows.map((r, i) => {
      const fromRedis = Number(live?.[i]?.[1]);
      return { ...r, uses: Number.isFinite(fromRedis) && live?.[i]?.[1] != null ? Math.max(fromRedis, r.current_uses) : r.current_uses };
    });
    return { data, total, limit, offset };
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
      await this.redis.removeVoucherV1(keys.voucher(tenantId, row.code), keys.voucherDevices(tenantId, row.code), id);
      return { id, code: row.code, deleted: true as const, deleted_at: row.deleted_at.toISOString() };
    });
    // Once more after the commit: a reload (loadIntoRedis) that read the voucher before the
    // commit may have written it back since, and its own check only sees committed deletes.
    await this.redis.removeVoucherV1(keys.voucher(tenantId, out.code), keys.voucherDevices(tenantId, out.code), id);
    return out;
  }

  /**
   * Brings the Redis server in step with Postgres for one tenant (a new,
   * emptied, restarted or failed-over Redis): writes every live voucher and
   * every unexpired block, then sets the tenant's loaded marker to the
   * server's run_id. A counter becomes the larger of Redis's and Postgres's,
   * so a use that Redis lost but Postgres holds is never handed out again.
   * Returns the number of vouchers written.
   *
   * `runId` is the server's run_id as seen before the load: use-voucher's
   * `not_loaded` answer carries it; without it, it is read here, also before
   * anything is written. A server that restarts or fails over during the load
   * has another run_id by then, so the marker does not match it and the next
   * use loads again: a stale run_id costs a load, never skips one.
   */
  async loadIntoRedis(tenantId: string, runId?: string): Promise<number> {
    const server = runId ?? (await serverRunId(this.redis));
    let n = 0;
    let after = '';
    for (;;) {
      const { rows } = await this.pool.query<VoucherRow>(
        `SELECT * FROM vouchers WHERE tenant_id = $1 AND deleted_at IS NULL AND id > $2 ORDER BY id LIMIT 5000`, [tenantId, after]);
      if (rows.length === 0) break;
      await Promise.all(rows.map((r) => this.putRedis(r)));
      // A voucher deleted since the page was read is now back in Redis: take it out again.
      // (A delete committed after this check removes it itself, after its commit.)
      const gone = await this.pool.query<{ id: string; code: string }>(
        'SELECT id, code FROM vouchers WHERE tenant_id = $1 AND id = ANY($2) AND deleted_at IS NOT NULL', [tenantId, rows.map((r) => r.id)]);
      for (const g of gone.rows) await this.redis.removeVoucherV1(keys.voucher(tenantId, g.code), keys.voucherDevices(tenantId, g.code), g.id);
      n += rows.length - gone.rows.length;
      after = rows[rows.length - 1]!.id;
    }
    await this.restoreBlocks(tenantId);
    // Last: a use that finds the marker finds the vouchers and blocks too.
    await this.redis.set(keys.loaded(tenantId), server);
    return n;
  }

  /**
   * Writes the tenant's unexpired blocks (table `blocks`) back into Redis,
   * timed ones with the time they have left, as SessionService.blockMac set
   * them. Postgres is the record here: a Redis that came back without its
   * last writes may hold an older block for a MAC, so keys are overwritten.
   * An unblock or a new block for a MAC between the read and the write
   * would be undone by the write, so the rows are read again afterwards and
   * Redis follows what changed meanwhile.
   */
  private async restoreBlocks(tenantId: string): Promise<void> {
    const rows = await this.unexpiredBlocks(tenantId);
    if (rows.length === 0) return;
    await this.writeBlocks(tenantId, rows);
    const after = new Map((await this.unexpiredBlocks(tenantId, rows.map((r) => r.mac))).map((r) => [r.mac, r]));
    const gone = rows.filter((r) => !after.has(r.mac)).map((r) => keys.block(tenantId, r.mac));
    if (gone.length) await this.redis.del(...gone);
    const changed = rows.flatMap((r) => {
      const now = after.get(r.mac);
      return now && (now.duration !== r.duration || now.until?.getTime() !== r.until?.getTime()) ? [now] : [];
    });
    if (changed.length) await this.writeBlocks(tenantId, changed);
  }

  private async unexpiredBlocks(tenantId: string, macs?: string[]): Promise<BlockRow[]> {
    const { rows } = await this.pool.query<BlockRow>(
      `SELECT mac, duration, until FROM blocks WHERE tenant_id = $1 AND (until IS NULL OR until > $2)
       ${macs ? 'AND mac = ANY($3)' : ''}`,
      macs ? [tenantId, new Date(this.now()), macs] : [tenantId, new Date(this.now())]);
    return rows;
  }

  private async writeBlocks(tenantId: string, rows: BlockRow[]): Promise<void> {
    const now = this.now();
    const p = this.redis.pipeline();
    for (const b of rows) {
      const key = keys.block(tenantId, b.mac);
      if (b.until === null) p.set(key, b.duration);
      else p.set(key, b.duration, 'PX', Math.max(1, b.until.getTime() - now));
    }
    const failed = ((await p.exec()) ?? []).find(([err]) => err);
    if (failed) throw failed[0];
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
    codesFor: (round: number, want: number) => string[] | null): Promise<VoucherRow[]> {
    const c = await this.pool.connect();
    const put: VoucherRow[] = [];
    try {
      await c.query('BEGIN');
      const rows: VoucherRow[] = [];
      for (let round = 0; round < COLLISION_ROUNDS && rows.length < count; round++) {
        const codes = codesFor(round, count - rows.length);
        if (!codes) break;
        rows.push(...(await this.insertRows(c, tenantId, spec, source, codes)));
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

  private async insertRows(c: PoolClient, tenantId: string, spec: VoucherSpec, source: string, codes: string[]): Promise<VoucherRow[]> {
    const ids = codes.map(() => newId('vch_'));
    const { rows } = await c.query<VoucherRow>(
      `INSERT INTO vouchers (id, tenant_id, code, max_uses, expires_at, bandwidth_profile, daily_quota_mb,
         duration_minutes, bandwidth_down_mbps, bandwidth_up_mbps, ssids, notes, source, session_quota_mb)
       SELECT id, $1, code, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14 FROM unnest($2::text[], $3::text[]) AS t(id, code)
       ON CONFLICT (tenant_id, code) WHERE deleted_at IS NULL DO NOTHING
       RETURNING *`,
      [tenantId, ids, codes, spec.max_uses, spec.expires_at, spec.bandwidth_profile, spec.daily_quota_mb,
        spec.duration_minutes, spec.bandwidth_down_mbps, spec.bandwidth_up_mbps, spec.ssids, spec.notes, source,
        spec.session_quota_mb]);
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
    if ((await this.putRedis(r)) === 1) return;
    const key = keys.voucher(r.tenant_id, r.code);
    const stale = await this.redis.hget(key, 'id');
    if (stale) await this.redis.removeVoucherV1(key, keys.voucherDevices(r.tenant_id, r.code), stale);
    if ((await this.putRedis(r)) !== 1) {
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
      this.redis.removeVoucherV1(keys.voucher(tenantId, r.code), keys.voucherDevices(tenantId, r.code), r.id).catch(() => 0)));
  }

  private putRedis(r: VoucherRow): Promise<number> {
    const mbpsToKbps = (m: number | null): number => (m === null ? 0 : m * 1000);
    return this.redis.putVoucherV2(keys.voucher(r.tenant_id, r.code),
      r.id, r.max_uses ?? -1, r.current_uses, r.expires_at ? r.expires_at.getTime() : 0, r.ssids.join('\n'),
      r.duration_minutes ?? 0, mbpsToKbps(r.bandwidth_down_mbps), mbpsToKbps(r.bandwidth_up_mbps), r.daily_quota_mb ?? 0,
      r.bandwidth_profile ?? '', r.code, r.session_quota_mb ?? 0);
  }

  /** Fills bandwidth and quota from the named profile where the request leaves them out. */
  private async resolveProfile<T extends VoucherSpec>(tenantId: string, spec: T): Promise<T> {
    if (!spec.bandwidth_profile) return spec;
    const profiles = await this.profiles(tenantId);
    // Own keys only: `constructor` or `toString` name no profile, whatever Object.prototype holds.
    const profile = Object.hasOwn(profiles, spec.bandwidth_profile) ? profiles[spec.bandwidth_profile] : undefined;
    if (!profile) throw Errors.UNKNOWN_BANDWIDTH_PROFILE(spec.bandwidth_profile);
    return {
      ...spec,
      bandwidth_down_mbps: spec.bandwidth_down_mbps ?? profile.down_mbps,
      bandwidth_up_mbps: spec.bandwidth_up_mbps ?? profile.up_mbps,
      daily_quota_mb: spec.daily_quota_mb ?? profile.daily_quota_mb,
    };
  }
}

function base(r: VoucherRow, uses: number): Omit<PublicVoucher, 'status'> {
  return {
    id: r.id, code: r.code, max_uses: r.max_uses, current_uses: uses,
    created_at: r.created_at.toISOString(), expires_at: r.expires_at ? r.expires_at.toISOString() : null,
    duration_minutes: r.duration_minutes, bandwidth_down_mbps: r.bandwidth_down_mbps, bandwidth_up_mbps: r.bandwidth_up_mbps,
    bandwidth_profile: r.bandwidth_profile, daily_quota_mb: r.daily_quota_mb, session_quota_mb: r.session_quota_mb,
    ssids: r.ssids, notes: r.notes,
  };
}

export function toPublic(r: VoucherRow, uses: number, nowMs: number): PublicVoucher {
  return { ...base(r, uses), status: publicStatus(consoleStatus(r, uses, nowMs)) };
}

export function toConsole(r: VoucherRow, uses: number, nowMs: number): ConsoleVoucher {
  return { ...base(r, uses), status: consoleStatus(r, uses, nowMs) };
}
