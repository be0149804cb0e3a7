import type { Redis } from 'ioredis';
import { keys } from '../redis/keys.js';

/**
 * How far the tenant's audit chain in Postgres is behind its queue, ms: the
 * age of the oldest outbox entry (0 when the queue is empty). The sink
 * deletes each entry as it acknowledges it (OutboxReader: XACK and XDEL
 * together), so the stream's first entry is the oldest one not yet written,
 * whether pending at a consumer or not yet delivered; its id is the time it
 * was queued.
 */
export async function outboxLagMs(redis: Redis, tenantId: string, now: number): Promise<number> {
  const first = await redis.xrange(keys.outbox(tenantId), '-', '+', 'COUNT', 1);
  const id = first[0]?.[0];
  if (!id) return 0;
  return Math.max(0, now - Number(id.slice(0, id.indexOf('-'))));
}
