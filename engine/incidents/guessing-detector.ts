import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { GUESS_REFUSAL_WINDOW_MS, type GuessingLimitsSource } from '../signin/voucher-method.js';
import type { IncidentService } from './incident-service.js';

/**
 * The `signin_guessing` detector: a hotspot whose guests the voucher
 * guessing limits refused at least `incident_refusals` times (the tenant's
 * sign-in settings) within one 10-minute window. use-voucher-18.lua counts
 * every refusal per hotspot into that window's hash, atomically with the
 * refusal, so every process's refusals are counted, and the limits that
 * keep an attack out are also what makes it seen.
 *
 * Once per window: the incident is per hotspot (one open per tenant, kind and
 * subject, by the table's unique index, however many processes run this),
 * and a window whose count an operator already saw (resolved after the
 * window began) does not raise it again. The window this one and the last:
 * a round late after a window's end still sees it.
 */
export class GuessingDetector {
  constructor(
    private readonly redis: Redis,
    private readonly incidents: IncidentService,
    private readonly settings: GuessingLimitsSource,
  ) {}

  async check(tenantId: string, now: number): Promise<void> {
    const threshold = (await this.settings.guessing(tenantId)).incident_refusals;
    if (threshold <= 0) return;
    const current = Math.floor(now / GUESS_REFUSAL_WINDOW_MS);
    const windows = [current - 1, current];
    const counts = await Promise.all(windows.map((w) => this.redis.hgetall(keys.guessRefusals(tenantId, w))));
    for (const [i, byHotspot] of counts.entries()) {
      const start = windows[i]! * GUESS_REFUSAL_WINDOW_MS;
      for (const [hotspotId, raw] of Object.entries(byHotspot)) {
        const refusals = Number(raw);
        if (!(refusals >= threshold)) continue;
        const resolved = await this.incidents.lastResolved(tenantId, 'signin_guessing', hotspotId);
        if (resolved !== null && resolved >= start) continue;
        await this.incidents.raise(tenantId, {
          kind: 'signin_guessing', subject: hotspotId, siteId: hotspotId, severity: 'warning',
          title: `Voucher codes being guessed at hotspot ${hotspotId}: ${refusals} attempts refused by the guessing limits in 10 min`,
          details: {
            refusals, threshold, window_start: new Date(start).toISOString(), window_min: GUESS_REFUSAL_WINDOW_MS / 60_000,
          },
        });
      }
    }
  }
}
