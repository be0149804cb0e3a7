/**
 * Every Redis key of the service is built here.
 *
 * Each key carries the tenant as its hash tag, `{t:<tenant>}`, so all keys a
 * script touches sit in one Redis Cluster slot: a voucher (tenant-wide, usable
 * at any of the tenant's hotspots), the grant it creates at one hotspot, and
 * the tenant's outbox stream. The price is that one tenant lives on one shard;
 * sharding is across tenants.
 */
const tag = (tenantId: string): string => `{t:${tenantId}}`;

export const keys = {
  /** Hash: a voucher's definition and use counter, by its (case-sensitive) code. */
  voucher: (tenantId: string, code: string) => `${tag(tenantId)}:v:${code}`,
  /** Hash: MAC -> session id, the devices that used the voucher holding this code; removed with it. */
  voucherDevices: (tenantId: string, code: string) => `${tag(tenantId)}:vd:${code}`,
  /** Hash: a device's authorisation at a hotspot; expires with the grant. */
  grant: (tenantId: string, hotspotId: string, mac: string) => `${tag(tenantId)}:g:${hotspotId}:${mac}`,
  /** Stream: records waiting for the Postgres sink (voucher uses, later audit records). */
  outbox: (tenantId: string) => `${tag(tenantId)}:outbox`,
  /** String: set once the tenant's vouchers have been loaded from Postgres into this Redis. */
  loaded: (tenantId: string) => `${tag(tenantId)}:loaded`,
} as const;

/** The consumer group of the outbox sink. */
export const OUTBOX_GROUP = 'pg-sink';
