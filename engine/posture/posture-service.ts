import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import type { HotspotService } from '../hotspots/hotspot-service.js';
import { normalizeMac } from '../ids.js';
import { keys } from '../redis/keys.js';
import { ACTIVITY_TTL } from '../redis/records.js';

export const POSTURE_VERDICTS = ['pass', 'fail', 'drift'] as const;
export type PostureVerdict = (typeof POSTURE_VERDICTS)[number];

export interface PostureInput {
  mac: string;
  verdict: PostureVerdict;
  hotspot_id?: string;
  reason?: string;
}

/** The answer to a verdict received (docs/dashboard-api.md, POST posture). */
export interface PostureReceived {
  mac: string;
  verdict: PostureVerdict;
  hotspot_id: string | null;
  received_at: string;
}

/**
 * Posture verdicts from the tenant's network access control (an ingest
 * call). One script keeps each device's latest verdict, the per-verdict
 * device counts (posture_compliance_pct) and the fail/drift counter
 * (posture_fail_24h) together, and appends posture.verdict with them.
 */
export class PostureService {
  constructor(private readonly redis: Redis, private readonly hotspots: HotspotService, private readonly now: () => number = Date.now) {}

  /** 400 validation_failed for a MAC that is none; 404 hotspot_not_found for a hotspot not the tenant's. */
  async record(tenantId: string, input: PostureInput): Promise<PostureReceived> {
    const mac = normalizeMac(input.mac);
    if (!mac) throw Errors.VALIDATION_FAILED(`mac is not a MAC address: ${JSON.stringify(input.mac)}`, [{ field: 'mac', message: 'must be a MAC address' }]);
    const hotspotId = input.hotspot_id ?? '';
    if (hotspotId) await this.hotspots.get(tenantId, hotspotId);
    const now = this.now();
    await this.redis.recordPostureV1(
      keys.posture(tenantId), keys.postureCounts(tenantId),
      keys.activityMinute(tenantId, Math.floor(now / 60_000)), keys.activityHour(tenantId, Math.floor(now / 3_600_000)), keys.events(tenantId),
      mac, input.verdict, now, hotspotId, ACTIVITY_TTL.minute, ACTIVITY_TTL.hour, 0, input.reason ?? '');
    return { mac, verdict: input.verdict, hotspot_id: hotspotId || null, received_at: new Date(now).toISOString() };
  }
}
