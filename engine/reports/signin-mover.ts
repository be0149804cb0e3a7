import { execPerSlot, type RedisClient as Redis } from '../redis/redis-client.js';
import { hourOf } from '../events/activity-keys.js';
import type { Logger } from '../logger.js';
import { keys } from '../redis/keys.js';
import { parseSignInTally } from '../redis/records.js';
import type { Pool } from '../store/postgres.js';

/** How often the sign-in counts are moved: the console's failures and attempts lag Redis by at most this (plus the recorder's 250 ms flush). */
export const SIGNIN_MOVE_MS = 60_000;
/** Hour buckets read per pipeline: a bound on one round trip's size. */
const TENANTS_PER_PIPELINE = 200;

interface Tally { hs: string; h: number; m: string; o: 'accept' | 'reject'; n: number }

/**
 * Moves the sign-in attempts the decision recorder counts into Redis's hour
 * buckets (sign-in tally fields, per hotspot, method and outcome) into Postgres
 * (report_signins, migration 025), for the console's failures, attempts and
 * success rates. The sign-in path never writes Postgres per attempt: a
 * guessing storm is one HINCRBY per field and flush in Redis, and one upsert
 * per hour, hotspot, method and outcome here.
 *
 * A move writes each count AS IT IS in Redis (upsert to the value, never
 * adding; `greatest` so a slower reader's older value never lowers a newer
 * one): run twice, or by every engine process at once, it changes nothing.
 * Each run moves the current hour and the one before (the last flushes of
 * a closed hour land within a second of it), so a figure lags by at most
 * SIGNIN_MOVE_MS. An hour bucket lives 25 hours (ACTIVITY_TTL.hour): a
 * process down longer loses the hours it missed, which `cli reports rebuild`
 * cannot bring back either (it moves what Redis still holds).
 */
export class SignInMover {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;

  constructor(private readonly pool: Pool, private readonly redis: Redis, private readonly log: Logger, private readonly now: () => number = Date.now) {}

  /** Starts the periodic move (the engine's serving processes). */
  start(): void {
    this.timer ??= setInterval(() => void this.runOnce().catch((err: Error) => this.log.warn({ err: err.message }, 'could not move sign-in counts to Postgres')), SIGNIN_MOVE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One move of every tenant's current and previous hour; returns the counts written. One at a time in a process. */
  runOnce(): Promise<number> {
    this.running ??= this.moveAll().finally(() => { this.running = null; });
    return this.running;
  }

  private async moveAll(): Promise<number> {
    const { rows } = await this.pool.query<{ id: string }>('SELECT id FROM tenants ORDER BY id');
    const h = hourOf(this.now());
    let n = 0;
    for (let i = 0; i < rows.length; i += TENANTS_PER_PIPELINE) {
      const part = rows.slice(i, i + TENANTS_PER_PIPELINE);
      const read = await this.read(part.map((r) => r.id), h - 1, h);
      for (const [tenantId, tallies] of read) n += await this.write(tenantId, tallies);
    }
    return n;
  }

  /**
   * Moves one tenant's hours `fromHour`..`toHour` (hours since the epoch, UTC) that Redis still
   * holds: `cli reports rebuild` and tests. Returns the counts written.
   */
  async moveTenant(tenantId: string, fromHour: number, toHour: number): Promise<number> {
    const read = await this.read([tenantId], fromHour, toHour);
    return this.write(tenantId, read.get(tenantId) ?? []);
  }

  private async read(tenants: string[], fromHour: number, toHour: number): Promise<Map<string, Tally[]>> {
    const asked: [string, number][] = [];
    for (const t of tenants) for (let h = fromHour; h <= toHour; h++) asked.push([t, h]);
    // One pipeline, or one per tenant's slot on a cluster (the tenants' keys are of several slots).
    const replies = (await execPerSlot(this.redis, asked, ([t, h]) => keys.activityHour(t, h), (p, [t, h]) => p.hgetall(keys.activityHour(t, h))))
      .map((r) => r[0] ?? [null, null]);
    const out = new Map<string, Tally[]>();
    replies.forEach(([err, fields], i) => {
      if (err || !fields) return;
      const [t, h] = asked[i]!;
      for (const [f, v] of Object.entries(fields as Record<string, string>)) {
        const tally = parseSignInTally(f);
        if (!tally) continue;
        const list = out.get(t) ?? [];
        list.push({ hs: tally.hotspotId, h, m: tally.method, o: tally.accept ? 'accept' : 'reject', n: Number(v) });
        out.set(t, list);
      }
    });
    return out;
  }

  /** Upserts a tenant's counts to their values; a hotspot that is not the tenant's (or no longer exists) is skipped. */
  private async write(tenantId: string, tallies: Tally[]): Promise<number> {
    if (tallies.length === 0) return 0;
    const r = await this.pool.query(
      `WITH j AS MATERIALIZED (SELECT * FROM json_to_recordset($2::json) AS r(hs text, h bigint, m text, o text, n integer)),
       z AS MATERIALIZED (SELECT id, report_zone(timezone) AS zone FROM hotspots WHERE tenant_id = $1 AND id IN (SELECT hs FROM j))
       INSERT INTO report_signins (tenant_id, hotspot_id, hour_start, method, outcome, day, hour, attempts)
       SELECT $1, j.hs, to_timestamp(j.h * 3600), j.m, j.o, (to_timestamp(j.h * 3600) AT TIME ZONE z.zone)::date,
              extract(hour FROM to_timestamp(j.h * 3600) AT TIME ZONE z.zone)::smallint, j.n
       FROM j JOIN z ON z.id = j.hs
       ON CONFLICT (tenant_id, hotspot_id, hour_start, method, outcome) DO UPDATE SET attempts = greatest(report_signins.attempts, EXCLUDED.attempts)
       WHERE report_signins.attempts < EXCLUDED.attempts`,
      [tenantId, JSON.stringify(tallies)]);
    return r.rowCount ?? 0;
  }
}
