import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import { keys } from '../redis/keys.js';
import type { WebhookStore } from './webhook-store.js';

/** An attempt's status: delivered (2xx), failed (to be retried), dead (the last attempt failed, or 410). */
export const ATTEMPT_STATUSES = ['delivered', 'failed', 'dead'] as const;
export type AttemptStatus = (typeof ATTEMPT_STATUSES)[number];

/** One attempt as GET /v1/webhooks/{id}/deliveries lists it. */
export interface DeliveryAttempt {
  delivery_id: string;
  event_id: string;
  event_type: string;
  /** 1, 2 or 3 (counted again from 1 after a redelivery). */
  attempt: number;
  status: AttemptStatus;
  /** The receiver's HTTP status; null when there was no answer (time-out, refused, connection error). */
  code: number | null;
  duration_ms: number;
  error: string | null;
  at: string;
}

interface State { s: string; e: string; t: string; n: number; st: string; c?: string; d?: number; err?: string; at?: number }

/** The list and the redelivery of a subscription's deliveries (Redis: keys.webhookAttempts, webhookDead, webhookDeliveries). */
export class WebhookDeliveries {
  constructor(private readonly redis: Redis, private readonly store: WebhookStore, private readonly now: () => number = Date.now) {}

  /**
   * The subscription's recent attempts, newest first; with `status` only
   * those. `dead` lists the dead-letter queue: every dead delivery still kept
   * (7 days), with its last attempt, however old.
   */
  async list(tenantId: string, webhookId: string, status: AttemptStatus | undefined, limit: number): Promise<DeliveryAttempt[]> {
    await this.store.get(tenantId, webhookId);
    if (status === 'dead') return this.dead(tenantId, webhookId, limit);
    const out: DeliveryAttempt[] = [];
    let end = '+';
    // Scan back in pages until `limit` rows match (a filter may skip many); the stream is bounded.
    for (let pages = 0; out.length < limit && pages < 20; pages++) {
      const rows = await this.redis.xrevrange(keys.webhookAttempts(tenantId, webhookId), end, '-', 'COUNT', 200);
      for (const [id, f] of rows) {
        const a = attemptOf(id, f);
        if (!status || a.status === status) out.push(a);
        if (out.length >= limit) break;
      }
      if (rows.length < 200) break;
      end = `(${rows[rows.length - 1]![0]}`;
    }
    return out;
  }

  private async dead(tenantId: string, webhookId: string, limit: number): Promise<DeliveryAttempt[]> {
    const ids = await this.redis.zrevrange(keys.webhookDead(tenantId), 0, 4999);
    if (ids.length === 0) return [];
    const states = await this.redis.hmget(keys.webhookDeliveries(tenantId), ...ids);
    const out: DeliveryAttempt[] = [];
    ids.forEach((id, i) => {
      const raw = states[i];
      if (!raw || out.length >= limit) return;
      const st = JSON.parse(raw) as State;
      if (st.s !== webhookId || st.st !== 'dead') return;
      out.push({
        delivery_id: id, event_id: `evt_${st.e}`, event_type: st.t, attempt: st.n, status: 'dead',
        code: st.c ? Number(st.c) : null, duration_ms: st.d ?? 0, error: st.err || null, at: new Date(st.at ?? 0).toISOString(),
      });
    });
    return out;
  }

  /**
   * Sends a kept delivery again now, with a fresh budget of attempts and the same delivery id.
   * Not to a disabled subscription (its receiver answered 410): the dispatcher would drop it unsent.
   */
  async redeliver(tenantId: string, webhookId: string, deliveryId: string): Promise<{ delivery_id: string; status: 'pending' }> {
    const hook = await this.store.get(tenantId, webhookId);
    if (!hook.active) throw Errors.WEBHOOK_INACTIVE(hook.disabled_reason);
    const r = await this.redis.redeliverWebhookV1(keys.webhookQueue(tenantId), keys.webhookDeliveries(tenantId), keys.webhookDone(tenantId),
      keys.webhookDead(tenantId), deliveryId, webhookId, this.now());
    if (r === 0) throw Errors.WEBHOOK_DELIVERY_NOT_FOUND();
    return { delivery_id: deliveryId, status: 'pending' };
  }
}

function attemptOf(id: string, f: string[]): DeliveryAttempt {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < f.length; i += 2) m.set(f[i]!, f[i + 1]!);
  const code = m.get('code') ?? '';
  return {
    delivery_id: m.get('delivery') ?? '', event_id: `evt_${m.get('event') ?? ''}`, event_type: m.get('type') ?? '',
    attempt: Number(m.get('attempt') ?? 0), status: (m.get('status') ?? 'failed') as AttemptStatus,
    code: code === '' ? null : Number(code), duration_ms: Number(m.get('duration_ms') ?? 0), error: m.get('error') || null,
    at: new Date(Number(id.slice(0, id.indexOf('-')))).toISOString(),
  };
}
