import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { serverRunId } from '../redis/scripts.js';
import type { BlockService } from '../sessions/block-service.js';
import type { Pool } from '../store/postgres.js';
import type { VoucherRow } from './voucher.js';
import { putVoucher, removeVoucher } from './voucher-redis.js';

/** Vouchers (and known devices) read from Postgres per round trip while loading. */
const PAGE = 5000;

/**
 * Brings a Redis server in step with Postgres for one tenant: a new,
 * emptied, restarted or failed-over server holds none of the vouchers and
 * blocks that use-voucher and sign-in read from it.
 */
export class VoucherLoader {
  constructor(private readonly pool: Pool, private readonly redis: Redis, private readonly blocks: BlockService) {}

  /**
   * Writes every live voucher and every unexpired block (and, when Redis
   * lost them, the known devices), then sets the
   * tenant's loaded marker to the server's run_id. A counter becomes the
   * larger of Redis's and Postgres's, so a use that Redis lost but Postgres
   * holds is never handed out again. Returns the number of vouchers written.
   *
   * `runId` is the server's run_id as seen before the load: use-voucher's
   * `not_loaded` answer carries it; without it, it is read here, also before
   * anything is written. A server that restarts or fails over during the load
   * has another run_id by then, so the marker does not match it and the next
   * use loads again: a stale run_id costs a load, never skips one.
   */
  async loadIntoRedis(tenantId: string, runId?: string): Promise<number> {
    const server = runId ?? (await serverRunId(this.redis, keys.loaded(tenantId)));
    let n = 0;
    let after = '';
    for (;;) {
      const { rows } = await this.pool.query<VoucherRow>(
        `SELECT * FROM vouchers WHERE tenant_id = $1 AND deleted_at IS NULL AND id > $2 ORDER BY id LIMIT ${PAGE}`, [tenantId, after]);
      if (rows.length === 0) break;
      await Promise.all(rows.map((r) => putVoucher(this.redis, r)));
      // A voucher deleted since the page was read is now back in Redis: take it out again.
      // (A delete committed after this check removes it itself, after its commit.)
      const gone = await this.pool.query<{ id: string; code: string }>(
        'SELECT id, code FROM vouchers WHERE tenant_id = $1 AND id = ANY($2) AND deleted_at IS NOT NULL', [tenantId, rows.map((r) => r.id)]);
      for (const g of gone.rows) await removeVoucher(this.redis, tenantId, g.code, g.id);
      n += rows.length - gone.rows.length;
      after = rows[rows.length - 1]!.id;
    }
    await this.blocks.restoreIntoRedis(tenantId);
    await this.loadKnownDevices(tenantId);
    // Last: a use that finds the marker finds the vouchers and blocks too.
    await this.redis.set(keys.loaded(tenantId), server);
    return n;
  }

  /**
   * The tenant's known devices (keys.knownDevices, device.new's memory) from
   * the sessions Postgres holds, when Redis has none: a new, emptied or
   * failed-over-to-empty server would otherwise announce every returning
   * device as new. Only then: a restart that kept its data (AOF) keeps the
   * hash, and reading every session of a big tenant on each restart would
   * hold its sign-ins (they wait for this load) for nothing. HSETNX, so a
   * start that got in first keeps its own first-seen time. What this cannot
   * know (docs/events.md): devices whose sessions retention has deleted, and
   * a hash that survived with its last moments lost.
   */
  private async loadKnownDevices(tenantId: string): Promise<void> {
    const key = keys.knownDevices(tenantId);
    if (await this.redis.exists(key)) return;
    let after = '';
    for (;;) {
      // One row per MAC, in MAC order, from the (tenant_id, mac, started_at) index.
      const { rows } = await this.pool.query<{ mac: string; first_ms: string }>(
        `SELECT mac, (extract(epoch FROM min(started_at)) * 1000)::bigint AS first_ms FROM sessions
          WHERE tenant_id = $1 AND mac > $2 GROUP BY mac ORDER BY mac LIMIT ${PAGE}`, [tenantId, after]);
      if (rows.length === 0) break;
      // Auto-pipelined by the connection: one round trip per page.
      await Promise.all(rows.map((r) => this.redis.hsetnx(key, r.mac, r.first_ms)));
      after = rows[rows.length - 1]!.mac;
    }
  }
}
