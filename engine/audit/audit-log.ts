import { Redis } from 'ioredis';
import { newId } from '../ids.js';
import { keys } from '../redis/keys.js';

/** Operator actions that enter the audit chain (session transitions are queued by their own scripts). */
export type OperatorEvent =
  | 'voucher_created' | 'voucher_batch_created' | 'voucher_deleted'
  | 'hotspot_created' | 'hotspot_updated' | 'nas_client_added'
  | 'device_blocked' | 'device_unblocked' | 'bandwidth_profile_changed'
  | 'incident_updated' | 'sign_in_settings_changed';

/**
 * Queues operator actions for the audit chain through the same outbox as
 * session events, so they are linked in the order they happened.
 */
export class AuditLog {
  constructor(private readonly redis: Redis, private readonly now: () => number) {}

  async operator(tenantId: string, by: string, event: OperatorEvent, details: Record<string, unknown>, subject: { hotspot_id?: string; mac?: string } = {}): Promise<void> {
    // A field pair per value (engine/store/outbox-record.ts): few, and readable by every version's sink.
    await this.redis.xadd(keys.outbox(tenantId), '*',
      'type', 'audit', 'rid', newId('op_'), 'event', event, 'at', String(this.now()), 'by', by,
      'hs', subject.hotspot_id ?? '', 'mac', subject.mac ?? '', 'details', JSON.stringify(details));
  }
}
