import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import { normalizeMac } from '../ids.js';
import { keys } from '../redis/keys.js';
import type { Pool } from '../store/postgres.js';

export type BlockDuration = '24h' | '7d' | 'permanent';
const BLOCK_MS: Record<BlockDuration, number | null> = { '24h': 86_400_000, '7d': 7 * 86_400_000, permanent: null };

/** A block as the API lists it. */
export interface BlockEntry {
  mac: string;
  duration: string;
  until: string | null;
  reason: string | null;
  created_at: string;
  created_by: string | null;
}

/** A row of `blocks` as the reload needs it; `until` null: permanent. */
interface BlockRow {
  mac: string;
  duration: string;
  until: Date | null;
}

/**
 * Blocked devices: the only code that reads or writes the `blocks` table
 * and the Redis block marker (keys.block). Postgres is the record; the
 * marker is what sign-in checks, and expires with a timed block.
 */
export class BlockService {
  constructor(private readonly pool: Pool, private readonly redis: Redis, private readonly now: () => number) {}

  /** Blocks a device for the chosen time; a block already there is replaced. Ends no session (SessionService.block does). */
  async block(tenantId: string, macInput: string, duration: BlockDuration, by: string, reason: string | null): Promise<{ mac: string; duration: BlockDuration; until: string | null }> {
    const mac = normalizeMac(macInput);
    if (!mac) throw Errors.INVALID_MAC(macInput);
    const ms = BLOCK_MS[duration];
    const until = ms === null ? null : new Date(this.now() + ms);
    // Redis first: the block must hold for the next sign-in even if Postgres is slow.
    if (ms === null) await this.redis.set(keys.block(tenantId, mac), duration);
    else await this.redis.set(keys.block(tenantId, mac), duration, 'PX', ms);
    await this.pool.query(
      `INSERT INTO blocks (tenant_id, mac, until, duration, reason, created_by) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant_id, mac) DO UPDATE SET until = EXCLUDED.until, duration = EXCLUDED.duration,
         reason = EXCLUDED.reason, created_by = EXCLUDED.created_by, created_at = now()`,
      [tenantId, mac, until, duration, reason, by]);
    return { mac, duration, until: until ? until.toISOString() : null };
  }

  /** The tenant's blocks in force, newest first. */
  async list(tenantId: string): Promise<BlockEntry[]> {
    const { rows } = await this.pool.query<{ mac: string; duration: string; until: Date | null; reason: string | null; created_at: Date; created_by: string | null }>(
      `SELECT mac, duration, until, reason, created_at, created_by FROM blocks
       WHERE tenant_id = $1 AND (until IS NULL OR until > now()) ORDER BY created_at DESC`, [tenantId]);
    return rows.map((r) => ({ ...r, until: r.until ? r.until.toISOString() : null, created_at: r.created_at.toISOString() }));
  }

  async unblock(tenantId: string, macInput: string): Promise<{ mac: string; unblocked: true }> {
    const mac = normalizeMac(macInput);
    if (!mac) throw Errors.INVALID_MAC(macInput);
    const { rowCount } = await this.pool.query('DELETE FROM blocks WHERE tenant_id = $1 AND mac = $2 AND (until IS NULL OR until > now())', [tenantId, mac]);
    const removed = await this.redis.del(keys.block(tenantId, mac));
    if (!rowCount && !removed) throw Errors.BLOCK_NOT_FOUND();
    return { mac, unblocked: true };
  }

  /** Which of these (canonical) MACs the tenant blocks now. */
  async blockedAmong(tenantId: string, macs: string[]): Promise<Set<string>> {
    if (macs.length === 0) return new Set();
    const { rows } = await this.pool.query<{ mac: string }>(
      'SELECT mac FROM blocks WHERE tenant_id = $1 AND mac = ANY($2) AND (until IS NULL OR until > now())', [tenantId, macs]);
    return new Set(rows.map((r) => r.mac));
  }

  /**
   * Writes the tenant's unexpired blocks back into Redis (a new, emptied or
   * restarted server), timed ones with the time they have left, as block()
   * set them. Postgres is the record here: a Redis that came back without its
   * last writes may hold an older block for a MAC, so keys are overwritten.
   * An unblock or a new block for a MAC between the read and the write
   * would be undone by the write, so the rows are read again afterwards and
   * Redis follows what changed meanwhile.
   */
  async restoreIntoRedis(tenantId: string): Promise<void> {
    const rows = await this.unexpired(tenantId);
    if (rows.length === 0) return;
    await this.writeMarkers(tenantId, rows);
    const after = new Map((await this.unexpired(tenantId, rows.map((r) => r.mac))).map((r) => [r.mac, r]));
    const gone = rows.filter((r) => !after.has(r.mac)).map((r) => keys.block(tenantId, r.mac));
    if (gone.length) await this.redis.del(...gone);
    const changed = rows.flatMap((r) => {
      const now = after.get(r.mac);
      return now && (now.duration !== r.duration || now.until?.getTime() !== r.until?.getTime()) ? [now] : [];
    });
    if (changed.length) await this.writeMarkers(tenantId, changed);
  }

  private async unexpired(tenantId: string, macs?: string[]): Promise<BlockRow[]> {
    const { rows } = await this.pool.query<BlockRow>(
      `SELECT mac, duration, until FROM blocks WHERE tenant_id = $1 AND (until IS NULL OR until > $2)
       ${macs ? 'AND mac = ANY($3)' : ''}`,
      macs ? [tenantId, new Date(this.now()), macs] : [tenantId, new Date(this.now())]);
    return rows;
  }

  private async writeMarkers(tenantId: string, rows: BlockRow[]): Promise<void> {
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
}
