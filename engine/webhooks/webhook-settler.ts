import type { RedisClient as Redis } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';

/** Outcomes one script call settles at most; more wait for the next call. */
const BATCH = 256;

/** What an attempt's end (or a claim never sent) records (settle-webhook-deliveries-n.lua). */
export interface Settlement {
  id: string;
  /** The claim's token. */
  token: string;
  /** The subscription, whose attempts stream records the attempt. */
  webhookId: string;
  kind: 'delivered' | 'retry' | 'dead' | 'dropped' | 'released';
  dueMs: number;
  code: string;
  durationMs: number;
  error: string;
}

export interface SettleKeep {
  deliveredMs: number;
  deadMs: number;
  attemptsMaxlen: number;
}

interface Waiting { s: Settlement; resolve: (settled: boolean) => void; reject: (err: Error) => void }

/**
 * Settles attempts in batches, one script call per tenant at a time: the
 * outcomes that end while a call is under way go together in the next. At
 * a few thousand deliveries a second a call per attempt cost the service a
 * command and a reply each and Redis a script run each; batched, an attempt's
 * slot is free for the next delivery as soon as its answer arrives, and its
 * record follows within a round trip. Each settlement still resolves alone:
 * true when recorded, false when its claim was no longer the caller's.
 */
export class WebhookSettler {
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly busy = new Set<string>();
  private readonly calls = new Set<Promise<void>>();

  constructor(private readonly redis: Redis, private readonly keep: SettleKeep, private readonly now: () => number) {}

  settle(tenantId: string, s: Settlement): Promise<boolean> {
    return new Promise((resolve, reject) => {
      let list = this.waiting.get(tenantId);
      if (!list) this.waiting.set(tenantId, (list = []));
      list.push({ s, resolve, reject });
      if (!this.busy.has(tenantId)) this.flush(tenantId);
    });
  }

  /** Resolves once every settlement asked for so far is recorded (or failed). */
  async drained(): Promise<void> {
    while (this.calls.size) await Promise.allSettled([...this.calls]);
  }

  /** Sends the tenant's waiting settlements in the next turn of the event loop, so those ending together share a call. */
  private flush(tenantId: string): void {
    this.busy.add(tenantId);
    const call: Promise<void> = new Promise<void>((done) => setImmediate(done))
      .then(() => this.send(tenantId))
      .finally(() => {
        this.calls.delete(call);
        this.busy.delete(tenantId);
        if (this.waiting.get(tenantId)?.length) this.flush(tenantId);
      });
    this.calls.add(call);
  }

  private async send(tenantId: string): Promise<void> {
    const list = this.waiting.get(tenantId) ?? [];
    const batch = list.splice(0, BATCH);
    if (list.length === 0) this.waiting.delete(tenantId);
    if (batch.length === 0) return;
    const args: (string | number)[] = [
      5 + batch.length, keys.webhookQueue(tenantId), keys.webhookDeliveries(tenantId), keys.webhookBodies(tenantId),
      keys.webhookDone(tenantId), keys.webhookDead(tenantId),
    ];
    for (const w of batch) args.push(keys.webhookAttempts(tenantId, w.s.webhookId));
    args.push(this.now(), this.keep.deliveredMs, this.keep.deadMs, this.keep.attemptsMaxlen);
    for (const { s } of batch) args.push(s.id, s.token, s.kind, s.dueMs, s.code, s.durationMs, s.error);
    try {
      const [numKeys, ...rest] = args as [number, ...(string | number)[]];
      const out = await this.redis.settleWebhookDeliveriesV1(numKeys, ...rest);
      batch.forEach((w, i) => w.resolve(out[i] === 1));
    } catch (err) {
      for (const w of batch) w.reject(err as Error);
    }
  }
}
