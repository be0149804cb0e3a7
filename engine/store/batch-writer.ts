import type { RedisClient as Redis } from '../redis/redis-client.js';
import { EventLog } from '../events/event-log.js';
import { keys } from '../redis/keys.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { daysToFile, PartitionCache, type AuditEntry } from '../audit/chain-writer.js';
import { auditEntriesOf, writeOutbox, type OutboxRecord, type VoucherCount } from './outbox-writer.js';
import type { Pool } from './postgres.js';

/**
 * Stores one batch of outbox records in one Postgres transaction (the day
 * partitions it needs made first), then brings voucher counters in Redis up
 * to what Postgres counts and tells each tenant's event stream that audit
 * entries were written (audit.written), so a reader of the audit stream
 * refetches only once Postgres has the rows.
 */
export class BatchWriter {
  private readonly partitions = new PartitionCache();
  private readonly events: EventLog;

  constructor(
    private readonly redis: Redis,
    private readonly pool: Pool,
    private readonly log: Logger,
    private readonly metrics: Metrics,
  ) {
    this.events = new EventLog(redis);
  }

  /** Our cache of partitions made is wrong (one is missing): they are made again on the next write. */
  forgetPartitions(): void {
    this.partitions.forgetAll();
  }

  async write(records: OutboxRecord[]): Promise<void> {
    const audit = auditEntriesOf(records);
    await this.partitions.ensure(this.pool, daysToFile(audit.map((e) => e.ts)));
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const { written, counters } = await writeOutbox(client, records, audit);
      await client.query('COMMIT');
      this.metrics.inc('outbox_records_written_total', '', written);
      await Promise.all([counters.length ? this.raiseRedisCounters(counters) : undefined, audit.length ? this.auditWritten(audit) : undefined]);
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * One audit.written event per tenant of a committed batch: how many audit
   * entries it held and the first and last of their ids, in stream order (a
   * batch delivered again after a crash says so again: readers only
   * refetch). Best effort, like the counters: the entries are stored; a
   * failure here is only logged.
   */
  private async auditWritten(audit: AuditEntry[]): Promise<void> {
    const byTenant = new Map<string, { count: number; first: string; last: string; site: string | null }>();
    for (const e of audit) {
      const t = byTenant.get(e.tenant_id);
      if (!t) byTenant.set(e.tenant_id, { count: 1, first: e.id, last: e.id, site: e.hotspot_id || null });
      else {
        t.count += 1;
        t.last = e.id;
        // The site only when every entry of the tenant's batch was at that one.
        if (t.site !== e.hotspot_id) t.site = null;
      }
    }
    try {
      await Promise.all([...byTenant].map(([tenant, t]) =>
        this.events.append(tenant, 'audit.written', t.site, { count: t.count, first_id: t.first, last_id: t.last })));
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'could not append audit.written events after a commit');
    }
  }

  /**
   * After a commit, no voucher's Redis counter may stay below what Postgres
   * now counts. Redis is normally ahead and nothing is written; it is behind
   * only when a restarted Redis was reloaded from Postgres before this batch
   * (read from the old Redis) was stored, and then this closes the gap.
   * Best effort: the uses are stored; a failure here is only logged.
   */
  private async raiseRedisCounters(counters: VoucherCount[]): Promise<void> {
    // One script call per tenant (its keys share a slot) and RAISE_PER_CALL vouchers, not one per voucher.
    const byTenant = new Map<string, VoucherCount[]>();
    for (const v of counters) {
      const list = byTenant.get(v.tenant_id);
      if (list) list.push(v);
      else byTenant.set(v.tenant_id, [v]);
    }
    const calls: Promise<number>[] = [];
    for (const [tenant, list] of byTenant) {
      for (let i = 0; i < list.length; i += RAISE_PER_CALL) {
        const part = list.slice(i, i + RAISE_PER_CALL);
        const args: (string | number)[] = part.map((v) => keys.voucher(tenant, v.code));
        for (const v of part) args.push(v.id, v.uses);
        calls.push(this.redis.raiseUsesN1(part.length, ...args));
      }
    }
    const failed = (await Promise.allSettled(calls)).find((r) => r.status === 'rejected');
    if (failed) this.log.warn({ err: (failed.reason as Error).message }, 'could not raise voucher counters in Redis after a commit');
  }
}

/** Vouchers per raise-uses-n call: a batch of 2,000 single-use vouchers' starts is four calls, none with thousands of arguments. */
const RAISE_PER_CALL = 500;

/**
 * Whether Postgres refused a write for what it carried (a value it cannot
 * store, a constraint) rather than for being unreachable or busy: only then
 * is retrying the same rows pointless. Errors our own code throws while
 * building rows from a malformed record (TypeError, RangeError, SyntaxError)
 * count as refusals too.
 */
export function refusedForItsData(err: unknown): boolean {
  if (partitionMissing(err)) return false;
  if (err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError) return true;
  const code = (err as { code?: unknown }).code;
  // SQLSTATE class 21: cardinality violation; 22: data exception; 23: integrity constraint violation.
  return typeof code === 'string' && /^2[123][0-9A-Z]{3}$/.test(code);
}

/**
 * An insert that found no partition for its day (23514, "no partition of
 * relation found for row") or a partition table that is gone (42P01): our
 * cache of created partitions is wrong, not the record.
 */
export function partitionMissing(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === '23514' || code === '42P01';
}
