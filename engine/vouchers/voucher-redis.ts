import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { ChainableCommander } from 'ioredis';
import { keys } from '../redis/keys.js';
import type { VoucherRow } from './voucher.js';

/**
 * A voucher's Redis side, what use-voucher verifies against: written at
 * creation and by the tenant's reload, removed at deletion. The creating
 * service and the loader both go through here, so the two never disagree on
 * how a row becomes a hash.
 */

/** Writes a voucher's definition (put-voucher-1.lua). 1: written; 0: the code holds another voucher's id. */
export function putVoucher(redis: Redis, r: VoucherRow): Promise<number> {
  return redis.putVoucherV3(...putVoucherArgs(r));
}

/** putVoucher queued on a pipeline (a bulk import writes a chunk in one round trip); the same hash, the same replies. */
export function queuePutVoucher(pipeline: ChainableCommander, r: VoucherRow): void {
  pipeline.putVoucherV3(...putVoucherArgs(r));
}

function putVoucherArgs(r: VoucherRow): [string, string, number, number, number, string, number, number, number, number, string, string, number, number, number] {
  const mbpsToKbps = (m: number | null): number => (m === null ? 0 : m * 1000);
  return [keys.voucher(r.tenant_id, r.code),
    r.id, r.max_uses ?? -1, r.current_uses, r.expires_at ? r.expires_at.getTime() : 0, r.ssids.join('\n'),
    r.duration_minutes ?? 0, mbpsToKbps(r.bandwidth_down_mbps), mbpsToKbps(r.bandwidth_up_mbps), r.daily_quota_mb ?? 0,
    r.bandwidth_profile ?? '', r.code, r.session_quota_mb ?? 0,
    r.valid_from ? r.valid_from.getTime() : 0, r.valid_until ? r.valid_until.getTime() : 0];
}

/** Removes a voucher and its devices, if the code still holds this id (remove-voucher-2.lua). */
export function removeVoucher(redis: Redis, tenantId: string, code: string, id: string): Promise<number> {
  return redis.removeVoucherV1(keys.voucher(tenantId, code), keys.voucherDevices(tenantId, code), id);
}
