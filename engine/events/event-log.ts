import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { EVENT_FIELD, type EventType } from './types.js';

/**
 * Appends the events of changes made outside a Lua script (an incident
 * raised, a posture verdict, rows the audit sink wrote) to the tenant's event
 * stream. A change a Lua script makes emits its event in that script instead,
 * atomically with the change.
 */
export class EventLog {
  constructor(private readonly redis: Redis, private readonly now: () => number = Date.now) {}

  /** Returns the event's id (the stream entry id). */
  async append(tenantId: string, type: EventType, siteId: string | null, data: Record<string, unknown>): Promise<string> {
    // No MAXLEN: the stream's one trimmer (event-trimmer.ts) never drops what webhooks have not routed.
    const id = await this.redis.xadd(keys.events(tenantId), '*',
      EVENT_FIELD.type, type, EVENT_FIELD.ts, String(this.now()), EVENT_FIELD.site, siteId ?? '', EVENT_FIELD.data, JSON.stringify(data));
    return id ?? '';
  }
}
