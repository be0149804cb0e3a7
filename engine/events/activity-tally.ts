import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { Logger } from '../logger.js';
import { ACTIVITY, ACTIVITY_TTL, perSite } from '../redis/records.js';
import { activityBuckets, minuteOf } from './activity-keys.js';

/** How often the summed byte counts are written. */
export const TALLY_FLUSH_MS = 1_000;
/** (minute, tenant, hotspot) sums held at most between flushes (Redis away): past it new counts are dropped, never queued without limit. */
const MAX_CELLS = 50_000;

/** One hotspot's bytes in one minute, summed. */
interface Cell {
  bytesIn: number;
  bytesOut: number;
}

/** minute -> tenant -> hotspot -> bytes. */
type Pending = Map<number, Map<string, Map<string, Cell>>>;

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
 * add() sums per minute, tenant and hotspot, with no key or field name built
 * (it runs once per report on the actor thread); the flush derives the
 * buckets' keys, the tenant-wide sums and the hour buckets from those sums.
 *
 * One tally per Redis connection that runs account-session (each actor
 * thread); the counts of several threads and processes add up in Redis.
 */
export class ActivityTally {
  private pending: Pending = new Map();
  /** The last minute add() saw, and its tenants: most reports of a second fall in one minute. */
  private minute = -1;
  private tenants: Map<string, Map<string, Cell>> | undefined;
  private cells = 0;
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly redis: Redis, private readonly log?: Logger) {
    this.timer = setInterval(() => void this.flush(), TALLY_FLUSH_MS);
    this.timer.unref();
  }

  /** Counts one accounting delta at `atMs`: `bytesIn` what the guest downloaded, `bytesOut` uploaded. */
  add(tenantId: string, hotspotId: string, atMs: number, bytesIn: number, bytesOut: number): void {
    if (bytesIn <= 0 && bytesOut <= 0) return;
    const minute = minuteOf(atMs);
    let tenants = this.tenants;
    if (minute !== this.minute || !tenants) {
      tenants = this.pending.get(minute);
      if (!tenants) this.pending.set(minute, (tenants = new Map()));
      this.minute = minute;
      this.tenants = tenants;
    }
    let sites = tenants.get(tenantId);
    if (!sites) tenants.set(tenantId, (sites = new Map()));
    let cell = sites.get(hotspotId);
    if (!cell) {
      if (this.cells >= MAX_CELLS) return;
      this.cells++;
      sites.set(hotspotId, (cell = { bytesIn: 0, bytesOut: 0 }));
    }
    if (bytesIn > 0) cell.bytesIn += bytesIn;
    if (bytesOut > 0) cell.bytesOut += bytesOut;
  }

  /** Writes what is summed; one flush at a time. */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.size === 0) return Promise.resolve();
    const pending = this.pending;
    this.pending = new Map();
    this.minute = -1;
    this.tenants = undefined;
    this.cells = 0;
    this.flushing = this.write(pending).finally(() => { this.flushing = null; });
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }

  private async write(pending: Pending): Promise<void> {
    // One pipeline per tenant, not a transaction: each bucket's counts are independent, and a tenant's keys share
    // its hash tag, so under Redis Cluster each pipeline goes to one node.
    await Promise.all([...bucketsByTenant(pending)].map(async ([tenantId, buckets]) => {
      const p = this.redis.pipeline();
      for (const [key, { ttl, fields }] of buckets) {
        for (const [field, n] of fields) p.hincrby(key, field, n);
        // Set on every write of the bucket: written only during its own minute or hour (and up to a flush after),
        // so it still outlives the widest window read from it.
        p.expire(key, ttl);
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

interface Bucket {
  ttl: number;
  fields: Map<string, number>;
}

/** The sums as bucket writes: tenant -> bucket key -> its lifetime and field increments (only fields above 0). */
function bucketsByTenant(pending: Pending): Map<string, Map<string, Bucket>> {
  const out = new Map<string, Map<string, Bucket>>();
  for (const [minute, tenants] of pending) {
    for (const [tenantId, sites] of tenants) {
      let buckets = out.get(tenantId);
      if (!buckets) out.set(tenantId, (buckets = new Map()));
      const [minuteKey, hourKey] = activityBuckets(tenantId, minute * 60_000);
      const inMinute = bucket(buckets, minuteKey, ACTIVITY_TTL.minute);
      const inHour = bucket(buckets, hourKey, ACTIVITY_TTL.hour);
      for (const [hotspotId, cell] of sites) {
        for (const fields of [inMinute, inHour]) {
          if (cell.bytesIn > 0) {
            bump(fields, ACTIVITY.bytesIn, cell.bytesIn);
            bump(fields, perSite(ACTIVITY.bytesIn, hotspotId), cell.bytesIn);
          }
          if (cell.bytesOut > 0) {
            bump(fields, ACTIVITY.bytesOut, cell.bytesOut);
            bump(fields, perSite(ACTIVITY.bytesOut, hotspotId), cell.bytesOut);
          }
        }
      }
    }
  }
  return out;
}

function bucket(buckets: Map<string, Bucket>, key: string, ttl: number): Map<string, number> {
  let b = buckets.get(key);
  if (!b) buckets.set(key, (b = { ttl, fields: new Map() }));
  return b.fields;
}

function bump(m: Map<string, number>, field: string, n: number): void {
  m.set(field, (m.get(field) ?? 0) + n);
}
