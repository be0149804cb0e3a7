import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { ACTIVITY, perStep } from '../redis/records.js';
import { ensureReadScript, ReadBatch } from '../redis/read-batch.js';

const STEP_MS = 10_000;
const STEPS_PER_MINUTE = 6;
const MINUTE_MS = 60_000;
/** The baseline: the rejects of this many whole minutes before the window, as a rate per window. */
export const BASELINE_MINUTES = 60;

/** The settings the judgement reads (IncidentThresholds: INCIDENT_SURGE_*). */
export interface SurgeSettings {
  /** Absolute floor: more than this many rejected sign-ins in the window. */
  surgeRejects: number;
  /** ... and more than this many times the baseline's rejects per window ... */
  surgeBaselineFactor: number;
  /** ... or more than this share (%) of the window's sign-in decisions. */
  surgeRejectPct: number;
  /** The sliding window, s (a multiple of 10). */
  surgeWindowSec: number;
}

/** What the detector read for one tenant at one moment. */
export interface SurgeReading {
  rejects: number;
  accepts: number;
  /** Rejects per window over the BASELINE_MINUTES before the window (a mean; fractional). */
  baseline: number;
  windowStart: number;
  windowEnd: number;
}

/**
 * Reads the sliding window's sign-ins (the per-step fields of the minute
 * buckets, perStep) and the baseline (the whole-minute rejects of the hour
 * before the window) in one read script call. The window is the last
 * `windowSec / 10` steps, the current one (still filling) included: a burst
 * stays in it for `windowSec` seconds however it falls against the minute.
 */
export async function readSurgeWindow(redis: Redis, tenantId: string, now: number, windowSec: number): Promise<SurgeReading> {
  ensureReadScript(redis);
  const last = Math.floor(now / STEP_MS);
  const first = last - Math.max(1, Math.round(windowSec / 10)) + 1;
  const byMinute = new Map<number, number[]>();
  for (let s = first; s <= last; s++) {
    const m = Math.floor(s / STEPS_PER_MINUTE);
    const list = byMinute.get(m) ?? [];
    list.push(s - m * STEPS_PER_MINUTE);
    byMinute.set(m, list);
  }
  const batch = new ReadBatch(redis);
  const window = [...byMinute].map(([m, ks]) =>
    batch.numbers(keys.activityMinute(tenantId, m), ks.flatMap((k) => [perStep(ACTIVITY.rejects, k), perStep(ACTIVITY.accepts, k)])));
  const firstMinute = Math.floor(first / STEPS_PER_MINUTE);
  const baselineKeys: string[] = [];
  for (let m = firstMinute - BASELINE_MINUTES; m < firstMinute; m++) baselineKeys.push(keys.activityMinute(tenantId, m));
  const baseline = batch.numbersEach(baselineKeys, [ACTIVITY.rejects]);
  await batch.run();

  let rejects = 0;
  let accepts = 0;
  for (const slot of window) {
    const v = slot();
    for (let i = 0; i + 1 < v.length; i += 2) {
      rejects += v[i]!;
      accepts += v[i + 1]!;
    }
  }
  let before = 0;
  for (const [r] of baseline()) before += r ?? 0;
  const windowMs = (last - first + 1) * STEP_MS;
  return {
    rejects, accepts, baseline: (before * windowMs) / (BASELINE_MINUTES * MINUTE_MS),
    windowStart: first * STEP_MS, windowEnd: (last + 1) * STEP_MS,
  };
}

/**
 * A surge of failed sign-ins: more than the floor in the window, and either
 * more than `surgeBaselineFactor` times the hour's usual rate per window (an
 * attack beside a burst of good sign-ins, which a share of all decisions
 * hides), or more than `surgeRejectPct` of the window's decisions (failures
 * that have become the usual, while they still dominate). Below the floor
 * nothing is a surge: quiet-time noise stays quiet.
 */
export function isSurge(r: SurgeReading, t: SurgeSettings): boolean {
  if (r.rejects <= t.surgeRejects) return false;
  return r.rejects > t.surgeBaselineFactor * r.baseline || r.rejects * 100 > t.surgeRejectPct * (r.rejects + r.accepts);
}
