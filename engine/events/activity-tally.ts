import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { Logger } from '../logger.js';
import { ACTIVITY, ACTIVITY_TTL, perSite } from '../redis/records.js';
import { activityBuckets } from './activity-keys.js';

/** How often the summed byte counts are written. */
export const TALLY_FLUSH_MS = 1_000;
/** Bucket keys held at most between flushes (Redis away): past it new counts are dropped, never queued without limit. */
const MAX_BUCKETS = 20_000;

/**
 * The accounting byte counts of the dashboard's activity buckets (bin and
 * bout, tenant-wide and per hotspot, in the minute and the hour buckets),
 * summed in memory and written once a second.
 *
 * An Interim-Update is the most frequent thing a NAS sends: tens of
 * thousands a second at a stadium. Counted inside account-session's script
 * the eight HINCRBYs cost Redis about three times the rest of the script
 * (each redis.call from Lua has its own overhead), and the Interim rate fell
 * from 26k/s to 6k/s (bench/results/radius-vs-freeradius.md). What must be
 * exact and atomic stays in the script: the session's totals, the device's
 * daily counter and the quota checks. These counts only draw the
 * dashboard's bandwidth, so a process that dies loses at most its last
 * second of them.
 *
 * One tally per Redis connection that runs account-session (each actor
 * thread); the counts of several threads and processes add up in Redis.
 */
export class ActivityTally {
  /** tenant -> bucket key -> field -> bytes; and each bucket key's lifetime. */
  private pending = new Map<string, Map<string, Map<string, number>>>();
  private ttl = new Map<string, number>();
  private buckets = 0;
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly redis: Redis, private readonly log?: Logger) {
    this.timer = setInterval(() => void this.flush(), TALLY_FLUSH_MS);
    this.timer.unref();
  }

  /** Counts one accounting delta at `atMs`: `bytesIn` what the guest downloaded, `bytesOut` uploaded. */
  add(tenantId: string, hotspotId: string, atMs: number, bytesIn: number, bytesOut: number): void {
    if (bytesIn <= 0 && bytesOut <= 0) return;
    const [minute, hour] = activityBuckets(tenantId, atMs);
    let tenant = this.pending.get(tenantId);
    if (!tenant) this.pending.set(tenantId, (tenant = new Map()));
    this.count(tenant, minute, ACTIVITY_TTL.minute, hotspotId, bytesIn, bytesOut);
    this.count(tenant, hour, ACTIVITY_TTL.hour, hotspotId, bytesIn, bytesOut);
  }

  /** Writes what is summed; one flush at a time. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.size === 0) return Promise.resolve();
    const pending = this.pending;
    const ttl = this.ttl;
    this.pending = new Map();
    this.ttl = new Map();
    this.buckets = 0;
    this.flushing = this.write(pending, ttl).finally(() => { this.flushing = null; });
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }

  private count(tenant: Map<string, Map<string, number>>, key: string, ttlSec: number, hotspotId: string, bytesIn: number, bytesOut: number): void {
    let fields = tenant.get(key);
    if (!fields) {
      if (this.buckets >= MAX_BUCKETS) return;
      this.buckets++;
      tenant.set(key, (fields = new Map()));
      this.ttl.set(key, ttlSec);
    }
    if (bytesIn > 0) {
      bump(fields, ACTIVITY.bytesIn, bytesIn);
      bump(fields, perSite(ACTIVITY.bytesIn, hotspotId), bytesIn);
    }
    if (bytesOut > 0) {
      bump(fields, ACTIVITY.bytesOut, bytesOut);
      bump(fields, perSite(ACTIVITY.bytesOut, hotspotId), bytesOut);
    }
  }

  private async write(pending: Map<string, Map<string, Map<string, number>>>, ttl: Map<string, number>): Promise<void> {
    // One pipeline per tenant, not a transaction: each bucket's counts are independent, and a tenant's keys share
    // its hash tag, so under Redis Cluster each pipeline goes to one node.
    await Promise.all([...pending].map(async ([tenantId, buckets]) => {
      const p = this.redis.pipeline();
      for (const [key, fields] of buckets) {
        for (const [field, n] of fields) p.hincrby(key, field, n);
        // Set on every write of the bucket: written only during its own minute or hour (and up to a flush after),
        // so it still outlives the widest window read from it.
        p.expire(key, ttl.get(key)!);
      }
      try {
        const results = (await p.exec()) ?? [];
        const failed = results.find(([err]) => err);
        if (failed) throw failed[0];
      } catch (err) {
        this.log?.warn({ tenant: tenantId, err: (err as Error).message }, 'could not write accounting bytes to the activity buckets');
      }
    }));
  }
}

function bump(m: Map<string, number>, field: string, n: number): void {
  m.set(field, (m.get(field) ?? 0) + n);
}
