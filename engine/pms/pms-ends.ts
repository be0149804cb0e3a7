import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';

/** Ends a session the way an operator's disconnect does (SessionService.endLive). */
export type EndSession = (tenantId: string, hotspotId: string, sid: string) => Promise<boolean>;

/** What endOrQueue did with the ids it was given. */
export interface EndOutcome { ended: number; alreadyEnded: number; queued: string[] }

/**
 * Ends sessions a PMS record took away (a check-out, or a check-out that
 * raced a room sign-in) through the session engine (Disconnect-Request to
 * the NAS). The sessions' actor may live in another process: the session
 * engine forwards the end to it (ActorForwarder, at most once); when that
 * fails too (hotspot_owned_elsewhere, a time-out), and after any other
 * failure, the ids go to the hotel's end queue (keys.pmsEnds), which the
 * process owning the actor drains on its next scan (PmsLinks); an end
 * applied and queued as well is found ended there.
 */
export async function endOrQueue(redis: Redis, endSession: EndSession, tenantId: string, hotspotId: string,
  sids: string[], onQueued?: (sid: string, err: Error) => void): Promise<EndOutcome> {
  const out: EndOutcome = { ended: 0, alreadyEnded: 0, queued: [] };
  await Promise.all(sids.map(async (sid) => {
    try {
      if (await endSession(tenantId, hotspotId, sid)) out.ended++;
      else out.alreadyEnded++;
    } catch (err) {
      onQueued?.(sid, err as Error);
      out.queued.push(sid);
    }
  }));
  if (out.queued.length === 0) return out;
  const k = keys.pmsEnds(tenantId, hotspotId);
  await redis.multi().rpush(k, ...out.queued).pexpire(k, 86_400_000).exec();
  return out;
}
