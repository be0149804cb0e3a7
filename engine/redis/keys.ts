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
  /** Outbox records Postgres refused on their own (see OutboxSink), kept for an operator. */
  outboxDead: (tenantId: string) => `${tag(tenantId)}:outbox:dead`,
  /** Sorted set: a hotspot's live session ids, scored by when each must end (ms). Rebuilds and sweeps start here. */
  live: (tenantId: string, hotspotId: string) => `${tag(tenantId)}:live:${hotspotId}`,
  /** String: the MAC a live session id belongs to ("<hotspot> <mac>"), for lookups by id. */
  sessionRef: (tenantId: string, sessionId: string) => `${tag(tenantId)}:sr:${sessionId}`,
  /** Counter: bytes a device used today (hotspot's local day, yyyymmdd), across all its sessions. */
  dailyUsage: (tenantId: string, mac: string, day: string) => `${tag(tenantId)}:dq:${mac}:${day}`,
  /** String: present while a MAC is blocked; expires with a timed block. */
  block: (tenantId: string, mac: string) => `${tag(tenantId)}:blk:${mac}`,
  /** String: the engine process that owns a hotspot's actor; expires unless renewed. */
  lease: (tenantId: string, hotspotId: string) => `${tag(tenantId)}:lease:${hotspotId}`,
  /**
   * String: the run_id of the Redis server the tenant's vouchers and blocks were last loaded into
   * from Postgres. A restarted or failed-over server has another run_id, so it is loaded again.
   */
  loaded: (tenantId: string) => `${tag(tenantId)}:loaded`,

  // --- Portal page and gateway hand-back (helper I) ---
  /** String (JSON): a no-JavaScript form post's outcome, shown by the page it redirects to; short TTL, id unguessable. */
  portalOutcome: (tenantId: string, id: string) => `${tag(tenantId)}:po:${id}`,
  /** Hash: a one-time gateway credential (UAM / MikroTik log-in over RADIUS) by its username; short TTL. */
  uamCredential: (tenantId: string, username: string) => `${tag(tenantId)}:uam:${username}`,
} as const;

/** The consumer group of the outbox sink. */
export const OUTBOX_GROUP = 'pg-sink';
