import type { RedisClient as Redis } from '../redis/redis-client.js';
import { newId } from '../ids.js';
import { keys } from '../redis/keys.js';

/** Operator actions that enter the audit chain (session transitions are queued by their own scripts). */
export type OperatorEvent =
  | 'voucher_created' | 'voucher_batch_created' | 'voucher_deleted'
  | 'hotspot_created' | 'hotspot_updated' | 'nas_client_added'
  | 'device_blocked' | 'device_unblocked' | 'bandwidth_profile_changed'
  | 'incident_updated' | 'sign_in_settings_changed'
  | 'webhook_created' | 'webhook_deleted' | 'webhook_secret_rotated' | 'webhook_redelivered'
  | 'pms_link_changed' | 'pms_link_removed'
  /** Data-subject requests (engine/privacy/): the subject as its keyed reference and kind, never the value. */
  | 'privacy_request_filed' | 'privacy_request_closed'
  | 'voucher_import'
  /** Scheduled report e-mail (engine/schedules/): the recipients as a count, never the addresses. */
  | 'report_schedule_created' | 'report_schedule_deleted'
  /** A change whose request never said how it ended (its process died, or Redis failed at its commit): recorded from its intent. */
  | 'operator_change_unconfirmed';

/** What an operator change is, known before it is made: who asks, on which route, with which path parameters. */
export interface ChangeIntent {
  by: string;
  /** `PUT /v1/hotspots/:id` */
  route: string;
  params: string[];
}

/** A change under way: its intent is in Redis; exactly one of commit or withdraw ends it. */
export interface PendingChange {
  /** The change is made: its record goes to the outbox and the intent goes, in one script. */
  commit(event: OperatorEvent, details: Record<string, unknown>, subject?: { hotspot_id?: string; mac?: string }): Promise<void>;
  /** The change was not made: the intent goes, and no record. */
  withdraw(): Promise<void>;
  /** The request is still at work (a long upload): the intent is not stale yet. Only while it is still stored. */
  refresh(): Promise<void>;
}

/**
 * An intent older than this is taken for one whose request will never end
 * it: a request's work (a batch of 10,000 vouchers included) is done within
 * seconds; the body's time-out is on top and long past by then.
 */
const STALE_MS = 5 * 60_000;

/** How often a long request refreshes its intent (http/router.ts, streamed bodies): well within STALE_MS. */
export const INTENT_REFRESH_MS = 60_000;

interface StoredIntent extends ChangeIntent {
  at: number;
  /** When its request last said it was still at work (refresh); stale counts from here. */
  seen?: number;
}

/**
 * Queues operator actions for the audit chain through the same outbox as
 * session events, so they are linked in the order they happened.
 *
 * Every operator change is audited, or not made (docs/audit-chain.md): the
 * router writes the change's intent here BEFORE the change (begin), and a
 * change whose intent cannot be written is not made (503). After the
 * change, commit replaces the intent by the record in one script; a change
 * that failed withdraws it. An intent nobody ended (the process died
 * between the change and its commit, or Redis failed just then) is turned
 * into an `operator_change_unconfirmed` record, under the same record id,
 * the next time the tenant's operators change anything or at the next
 * minute's sweep (intent-sweep.ts), whichever comes first: the chain then
 * says who asked for what, and that the answer was lost.
 */
export class AuditLog {
  constructor(private readonly redis: Redis, private readonly now: () => number) {}

  /** Writes the intent of a change about to be made; throws (and nothing may change) when it cannot. */
  async begin(tenantId: string, intent: ChangeIntent): Promise<PendingChange> {
    const rid = newId('op_');
    const at = this.now();
    const stored: StoredIntent = { at, ...intent };
    let text = JSON.stringify(stored);
    await this.redis.hset(keys.auditIntents(tenantId), rid, text);
    // Intents left by a request that never ended become records now, before this change is made
    // (and within a minute in any case: AuditIntentSweep).
    await this.recoverStale(tenantId, at);
    return {
      commit: async (event, details, subject = {}) => {
        await this.redis.commitAuditV1(keys.outbox(tenantId), keys.auditIntents(tenantId), rid, '0', event, String(this.now()), intent.by,
          subject.hotspot_id ?? '', subject.mac ?? '', JSON.stringify(details));
      },
      withdraw: async () => {
        await this.redis.hdel(keys.auditIntents(tenantId), rid);
      },
      refresh: async () => {
        const next = JSON.stringify({ ...stored, seen: this.now() });
        if (await this.redis.refreshIntentV1(keys.auditIntents(tenantId), rid, text, next) === 1) text = next;
      },
    };
  }

  /** Records, as `operator_change_unconfirmed`, every intent of the tenant older than STALE_MS at `now` (ms) and never ended. */
  async recoverStale(tenantId: string, now = this.now()): Promise<number> {
    const before = now - STALE_MS;
    const all = await this.redis.hgetall(keys.auditIntents(tenantId));
    let recovered = 0;
    for (const [rid, text] of Object.entries(all)) {
      let i: StoredIntent;
      try {
        i = JSON.parse(text) as StoredIntent;
      } catch {
        i = { at: 0, by: '', route: '', params: [] };
      }
      if ((i.seen ?? i.at) >= before) continue;
      const details = { route: i.route, params: i.params, requested_at: new Date(i.at).toISOString() };
      recovered += await this.redis.commitAuditV1(keys.outbox(tenantId), keys.auditIntents(tenantId), rid, '1', 'operator_change_unconfirmed',
        String(i.at), i.by, '', '', JSON.stringify(details));
    }
    return recovered;
  }
}
