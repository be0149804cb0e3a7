import { keys } from '../redis/keys.js';
import type { ReadBatch, Slot } from '../redis/read-batch.js';

export const STEP_MS = 10_000;
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

/** A run of activity buckets, oldest first. */
export interface ActivityWindow {
  unit: 'minute' | 'hour';
  buckets: number[];
}

/**
 * The `count` buckets of `unit` ending `back` buckets before the current one
 * (back 0: the current bucket, still filling, is the newest), oldest first.
 * docs/dashboard-api.md, "Windows": the last hour is `window(now, 'minute',
 * 60)`, 24 h is `window(now, 'hour', 24)`.
 */
export function activityWindow(now: number, unit: 'minute' | 'hour', count: number, back = 0): ActivityWindow {
  const newest = Math.floor(now / (unit === 'minute' ? MINUTE_MS : HOUR_MS)) - back;
  const buckets: number[] = [];
  for (let b = newest - count + 1; b <= newest; b++) buckets.push(b);
  return { unit, buckets };
}

/** The decision steps of the last minute: the current 10-second step and the five before it. */
export function lastMinuteSteps(now: number): number[] {
  const s = Math.floor(now / STEP_MS);
  return [s - 5, s - 4, s - 3, s - 2, s - 1, s];
}

/** The start of a bucket, ms. */
export function bucketStart(w: ActivityWindow, bucket: number): number {
  return bucket * (w.unit === 'minute' ? MINUTE_MS : HOUR_MS);
}

/** Counts of some ACTIVITY fields (records.ts) in each bucket of a window. */
export class WindowCounts {
  private readonly at = new Map<string, number>();

  constructor(readonly window: ActivityWindow, fields: readonly string[], private readonly rows: number[][]) {
    fields.forEach((f, i) => this.at.set(f, i));
  }

  /** The field's count in each bucket, oldest first. */
  series(field: string): number[] {
    const i = this.index(field);
    return this.rows.map((r) => r[i] ?? 0);
  }

  /** The field summed over the window. */
  total(field: string): number {
    const i = this.index(field);
    let sum = 0;
    for (const r of this.rows) sum += r[i] ?? 0;
    return sum;
  }

  private index(field: string): number {
    const i = this.at.get(field);
    if (i === undefined) throw new Error(`WindowCounts: ${field} was not read`);
    return i;
  }
}

/**
 * Queues the reads of `fields` in every bucket of the window (one HMGET per
 * bucket, whatever the number of sessions behind the counts).
 */
export function readWindow(batch: ReadBatch, tenantId: string, w: ActivityWindow, fields: readonly string[]): Slot<WindowCounts> {
  const key = w.unit === 'minute' ? keys.activityMinute : keys.activityHour;
  const rows = batch.numbersEach(w.buckets.map((b) => key(tenantId, b)), fields);
  return () => new WindowCounts(w, fields, rows());
}

/** Sign-in decisions in the last minute (docs/dashboard-api.md: the last six 10-second steps). */
export function readDecisions1m(batch: ReadBatch, tenantId: string, now: number): Slot<number> {
  const slot = batch.counters(lastMinuteSteps(now).map((s) => keys.decisionStep(tenantId, s)));
  return () => slot().reduce((a, b) => a + b, 0);
}

/** `part / whole` in percent, two decimals; null when `whole` is 0 (nothing to measure). */
export function percent(part: number, whole: number): number | null {
  return whole > 0 ? Math.round((part / whole) * 10_000) / 100 : null;
}
