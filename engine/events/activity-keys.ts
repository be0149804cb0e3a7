import { keys } from '../redis/keys.js';
import type { ActivityKeys } from '../redis/scripts.js';

/** The minute (floor(ms / 60000)) and hour (floor(ms / 3600000)) an instant falls in: the activity buckets' numbers. */
export const minuteOf = (ms: number): number => Math.floor(ms / 60_000);
export const hourOf = (ms: number): number => Math.floor(ms / 3_600_000);
/** The 10-second step of keys.decisionStep. */
export const stepOf = (ms: number): number => Math.floor(ms / 10_000);

/** This minute's and this hour's activity bucket keys of a tenant at `nowMs`. */
export function activityBuckets(tenantId: string, nowMs: number): [minute: string, hour: string] {
  return [keys.activityMinute(tenantId, minuteOf(nowMs)), keys.activityHour(tenantId, hourOf(nowMs))];
}

/**
 * The six KEYS of lua/includes/activity.lua for a change at `nowMs`: the
 * event stream, the activity buckets `nowMs` falls in, and the live hashes.
 * The caller computes them (never the script) because the bucket keys depend
 * on the time, and every key a script touches must be in its KEYS (Redis
 * Cluster routes a script by them).
 */
export function activityKeys(tenantId: string, nowMs: number): ActivityKeys {
  const [minute, hour] = activityBuckets(tenantId, nowMs);
  return [keys.events(tenantId), minute, hour, keys.liveDevices(tenantId), keys.liveBySsid(tenantId), keys.liveByAp(tenantId)];
}
