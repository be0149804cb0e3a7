import { execPerSlot, type RedisClient as Redis } from '../redis/redis-client.js';
import type { Logger } from '../logger.js';
import { keys, WEBHOOK_GROUP } from '../redis/keys.js';
import { EVENTS_MAXLEN } from './types.js';

/** How often every process trims every tenant's events stream. */
const TRIM_EVERY_MS = 10_000;
/** Tenants per pipeline. */
const CHUNK = 500;

/**
 * The one trimmer of the tenants' events streams. Writers add events
 * without MAXLEN (a writer's trim knows nothing of readers and would drop
 * events the webhook router has not read: Redis 7.0 has no trimming that
 * respects consumer groups); every process trims every tenant's stream every
 * TRIM_EVERY_MS with trim-events-1.lua, to about EVENTS_MAXLEN entries but
 * never past the webhook group's last-delivered id. Between two runs a
 * stream may grow by what its tenant writes in that time. Running in every
 * process is only repeated work: trimming is idempotent.
 */
export class EventTrimmer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | null = null;
  private known: string[] = [];

  /** `tenantIds`: every tenant's id (TenantService.list), read at each pass. */
  constructor(private readonly redis: Redis, private readonly tenantIds: () => Promise<string[]>, private readonly log: Logger) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.trimAll().catch((err: Error) => {
        this.log.warn({ err: err.message }, 'events trim failed');
        return 0;
      }).finally(() => { this.running = null; });
    }, TRIM_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** Trims every tenant's stream once; returns the entries trimmed. */
  async trimAll(maxlen = EVENTS_MAXLEN): Promise<number> {
    // Postgres away: the tenants known from the last read are still trimmed (writers no longer trim themselves).
    const ids = this.known = await this.tenantIds().catch((err: Error) => {
      if (this.known.length === 0) throw err;
      return this.known;
    });
    let trimmed = 0;
    for (let i = 0; i < ids.length; i += CHUNK) {
      const replies = await execPerSlot(this.redis, ids.slice(i, i + CHUNK), (t) => keys.events(t), (p, t) => p.trimEventsV1(keys.events(t), maxlen, WEBHOOK_GROUP));
      for (const [err, n] of replies.flat()) if (!err) trimmed += Number(n);
    }
    return trimmed;
  }
}
