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
  /** Stream: records waiting for the Postgres sink (engine/redis/records.ts: session starts, ends, extensions, audit). */
  outbox: (tenantId: string) => `${tag(tenantId)}:outbox`,
  /** Outbox records Postgres refused on their own (see OutboxSink), kept for an operator. */
  outboxDead: (tenantId: string) => `${tag(tenantId)}:outbox:dead`,
  /**
   * Hash: operator changes under way, record id -> JSON {at, by, route, params}: written before the
   * change, replaced by the change's audit record (commit-audit-2.lua) or withdrawn (engine/audit/audit-log.ts).
   */
  auditIntents: (tenantId: string) => `${tag(tenantId)}:audit:intents`,
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
  /** String: the engine process next in line for a hotspot's lease (renew-lease-2.lua); expires soon after the lease it waits for. */
  leaseNext: (tenantId: string, hotspotId: string) => `${tag(tenantId)}:lease-next:${hotspotId}`,
  /**
   * String: the run_id of the Redis server the tenant's vouchers and blocks were last loaded into
   * from Postgres. A restarted or failed-over server has another run_id, so it is loaded again.
   */
  loaded: (tenantId: string) => `${tag(tenantId)}:loaded`,

  // --- Voucher guessing limits (use-voucher-18.lua, includes/guess-limit.lua; README, Guessing limits) ---
  /** Sorted set: a device's unknown codes at one hotspot, scored by when (ms); the sliding window's log, expires with it. */
  guessesByDevice: (tenantId: string, hotspotId: string, mac: string) => `${tag(tenantId)}:gl:d:${hotspotId}:${mac}`,
  /** Sorted set: unknown codes from one source address (the socket's peer), scored by when (ms); expires with the window. */
  guessesByAddress: (tenantId: string, address: string) => `${tag(tenantId)}:gl:a:${address}`,
  /** Hash: hotspot -> attempts the guessing limits refused in one window (floor(ms / GUESS_REFUSAL_WINDOW_MS)). */
  guessRefusals: (tenantId: string, window: number) => `${tag(tenantId)}:gr:${window}`,

  // --- OTP sign-in (engine/signin/otp/): codes, abuse limits, delivery state, fallback watches ---
  /** Hash: an identity's live OTP code at a hotspot (keyed hash, wrong tries, expiry, request id, channel). */
  otpCode: (tenantId: string, hotspotId: string, identity: string) => `${tag(tenantId)}:otp:c:${hotspotId}:${identity}`,
  /** Hash: one OTP request's delivery state (status, channel, hotspot, identity, fallback flag); expires. */
  otpRequest: (tenantId: string, requestId: string) => `${tag(tenantId)}:otp:r:${requestId}`,
  /** Hash: one abuse-limit window of OTP sends (n, reset ms; for `user` also the cool-down end). */
  otpLimit: (tenantId: string, kind: 'user' | 'ip' | 'mac' | 'prefix', subject: string) => `${tag(tenantId)}:otp:l:${kind}:${subject}`,
  /** Sorted set: messaging-app requests waiting for delivery, scored by when their fallback is due (ms). */
  otpFallbacks: (tenantId: string) => `${tag(tenantId)}:otp:fb`,
  /**
   * Sorted set: tenants that scheduled a fallback, scored by when they last did (ms), so pollers look
   * only at those. Service-wide, hence no tenant tag; never touched by a script with tenant keys.
   */
  otpFallbackTenants: () => '{svc}:otp:fb-tenants',
  // --- OTP providers (engine/signin/providers) ---
  /** String: our OTP request id for a provider's message id, so its delivery callback can name the request; expires. */
  otpProviderRef: (tenantId: string, provider: string, providerRef: string) => `${tag(tenantId)}:otp:pref:${provider}:${providerRef}`,
  /** Sorted set: one OTP provider's failed sends of the last few minutes (members `<ms>:<random>`, scored by ms), every process's. */
  otpProviderFailures: (tenantId: string, provider: string) => `${tag(tenantId)}:otp:pfail:${provider}`,
  /** Hash: provider -> its last failure's code, for the providers that failed lately (expires with the window). */
  otpProviderFailing: (tenantId: string) => `${tag(tenantId)}:otp:pfail`,
  // --- Sponsor approval (engine/signin/sponsor/; docs/sponsor.md) ---
  /** Hash: one sponsor request (status, hotspot, device, guest, sponsor, link hash and expiry, outcome); kept a day for the console. */
  sponsorRequest: (tenantId: string, requestId: string) => `${tag(tenantId)}:sp:r:${requestId}`,
  /** String: the request a sponsor link stands for, by the SHA-256 of the link's token; gone once used, expires with the link. */
  sponsorLink: (tenantId: string, tokenHash: string) => `${tag(tenantId)}:sp:l:${tokenHash}`,
  /** Sorted set: the tenant's sponsor requests of the last day, scored by when asked (ms): the console's list and the JIT approvals. */
  sponsorRecent: (tenantId: string) => `${tag(tenantId)}:sp:recent`,
  /** Hash: one window of sponsor requests (n, reset ms) per source address, device (MAC) or sponsor address. */
  sponsorLimit: (tenantId: string, kind: 'ip' | 'mac' | 'sponsor', subject: string) => `${tag(tenantId)}:sp:lim:${kind}:${subject}`,
  // --- Portal page and gateway hand-back ---
  /** String (JSON): a no-JavaScript form post's outcome, shown by the page it redirects to; short TTL, id unguessable. */
  portalOutcome: (tenantId: string, id: string) => `${tag(tenantId)}:po:${id}`,
  /** Hash: a one-time gateway credential (UAM / MikroTik log-in over RADIUS) by its username; short TTL. */
  uamCredential: (tenantId: string, username: string) => `${tag(tenantId)}:uam:${username}`,
  // --- Domain events and dashboard activity (engine/events/, engine/decisions/, engine/views/; docs/events.md, docs/dashboard-api.md) ---
  /** Stream: the tenant's domain events (engine/events/types.ts), queued atomically with the change; trimmed to about EVENTS_MAXLEN by the events trimmer only, never past what the webhook group has not read. */
  events: (tenantId: string) => `${tag(tenantId)}:ev`,
  /** Hash: activity counted in one minute (floor(ms / 60000)), fields ACTIVITY of records.ts; expires after ACTIVITY_TTL.minute. */
  activityMinute: (tenantId: string, minute: number) => `${tag(tenantId)}:am:${minute}`,
  /** Hash: activity counted in one hour (floor(ms / 3600000)), fields ACTIVITY; expires after ACTIVITY_TTL.hour. */
  activityHour: (tenantId: string, hour: number) => `${tag(tenantId)}:ah:${hour}`,
  /** String counter: sign-in decisions in one 10-second step (floor(ms / 10000)), for decisions_1m; expires after ACTIVITY_TTL.step. */
  decisionStep: (tenantId: string, step: number) => `${tag(tenantId)}:ad:${step}`,
  /** Stream: the latest sign-in decisions (the dashboard's `decisions` list); trimmed to about DECISIONS_MAXLEN. */
  decisions: (tenantId: string) => `${tag(tenantId)}:dec`,
  /** Hash: each decision recorder's last call applied, recorder id -> its number (record-decisions-6.lua); expires DECISION_CALLS_TTL_MS after the last. */
  decisionCalls: (tenantId: string) => `${tag(tenantId)}:decb`,
  /** Hash: MAC -> number of its live sessions (at any hotspot); HLEN = devices online. +1 at start, -1 at end, field removed at 0. */
  liveDevices: (tenantId: string) => `${tag(tenantId)}:ldev`,
  /**
   * Hash: MAC -> when the tenant first saw it (ms): every device that ever started a session at any of the
   * tenant's hotspots. The session start creates the field with HSETNX and emits device.new when it did
   * (includes/session-start.lua), so the event is sent once per tenant and MAC; reloaded from Postgres's
   * sessions when Redis lost it (VoucherLoader). Never trimmed: about 90 bytes a device (docs/events.md).
   */
  knownDevices: (tenantId: string) => `${tag(tenantId)}:kdev`,
  /** Hash: "<hotspot>|<ssid>" -> live sessions; +1 at start, -1 at end. */
  liveBySsid: (tenantId: string) => `${tag(tenantId)}:lss`,
  /** Hash: "<hotspot>|<access point>" -> live sessions, the AP as accounting names it (GRANT.apName); moved when it changes, -1 at end. */
  liveByAp: (tenantId: string) => `${tag(tenantId)}:lap`,
  /** Hash: NAS client id -> last packet received from it (ms). */
  nasSeen: (tenantId: string) => `${tag(tenantId)}:nas:seen`,
  /** Hash: one NAS client's ports: port key -> JSON (docs/dashboard-api.md, switches/{id}/ports). */
  nasPorts: (tenantId: string, nasId: string) => `${tag(tenantId)}:nas:p:${nasId}`,
  /** Hash: device MAC -> its latest posture verdict, "<verdict> <ms> <hotspot or ''>". */
  posture: (tenantId: string) => `${tag(tenantId)}:pos`,
  /** Hash: verdict (pass, fail, drift) -> devices whose latest verdict it is. */
  postureCounts: (tenantId: string) => `${tag(tenantId)}:pos:n`,
  // --- Webhooks (engine/webhooks/; docs/webhooks.md) ---
  /** Hash: the tenant's active webhook subscriptions, id -> "<created ms> <event,event,...>"; mirrors Postgres for the routing script. */
  webhookSubs: (tenantId: string) => `${tag(tenantId)}:wh:subs`,
  /** Sorted set: owed deliveries by when each is due (ms); a claimed one is scored by when its claim lapses. */
  webhookQueue: (tenantId: string) => `${tag(tenantId)}:wh:q`,
  /** Hash: delivery id -> its state (JSON: subscription, event, attempts, status, last answer, claim token). */
  webhookDeliveries: (tenantId: string) => `${tag(tenantId)}:wh:d`,
  /** Hash: delivery id -> the event's `data` JSON as the stream held it (the body is built from it, the same bytes every attempt). */
  webhookBodies: (tenantId: string) => `${tag(tenantId)}:wh:b`,
  /** Sorted set: finished deliveries (delivered, dead) by when they are forgotten (ms). */
  webhookDone: (tenantId: string) => `${tag(tenantId)}:wh:done`,
  /** Sorted set: dead-lettered deliveries by when they died (ms). */
  webhookDead: (tenantId: string) => `${tag(tenantId)}:wh:dead`,
  /** Stream: one subscription's recent attempts (status, answer code, duration, error); trimmed to about WEBHOOK_ATTEMPTS_MAXLEN. */
  webhookAttempts: (tenantId: string, webhookId: string) => `${tag(tenantId)}:wh:att:${webhookId}`,

  // --- Room sign-in over a PMS link (engine/pms/; docs/pms.md) ---
  /** Hash: the hotel's in-house guests, reservation (G#) -> JSON {rn, gn, gf, gs}; written only by the link's holder. */
  pmsGuests: (tenantId: string, hotspotId: string) => `${tag(tenantId)}:pms:g:${hotspotId}`,
  /** Set: the reservations in one room (two or more: a share). */
  pmsRoom: (tenantId: string, hotspotId: string, room: string) => `${tag(tenantId)}:pms:r:${hotspotId}:${room}`,
  /** Set: the session ids room sign-in started for one reservation; what its check-out ends. */
  pmsSessions: (tenantId: string, hotspotId: string, reservation: string) => `${tag(tenantId)}:pms:s:${hotspotId}:${reservation}`,
  /** Hash: the link's state (alive_at, up, synced_at, resyncing), which decides pms_unavailable. */
  pmsState: (tenantId: string, hotspotId: string) => `${tag(tenantId)}:pms:st:${hotspotId}`,
  /** Set: the reservations a database resync has sent so far (DS ... DE); the difference is checked out at DE. */
  pmsResync: (tenantId: string, hotspotId: string) => `${tag(tenantId)}:pms:rs:${hotspotId}`,
  /** String: the engine process holding the hotel's FIAS connection (hold-pms-lease-1.lua); expires unless renewed. */
  pmsLease: (tenantId: string, hotspotId: string) => `${tag(tenantId)}:pms:lease:${hotspotId}`,
  /**
   * String: the process that owns the hotspot's actor (keys.lease) asks for the PMS link, so that a check-out's
   * Disconnect-Requests go from the process that holds the sessions; the holder hands the link over. Expires.
   */
  pmsWant: (tenantId: string, hotspotId: string) => `${tag(tenantId)}:pms:want:${hotspotId}`,
  /**
   * List: session ids a check-out must end that the link's holder could not (another process owns the hotspot's
   * actor); that process drains it on its next scan (engine/pms/pms-links.ts).
   */
  pmsEnds: (tenantId: string, hotspotId: string) => `${tag(tenantId)}:pms:end:${hotspotId}`,
  /** Sorted set: a device's room+surname misses at one hotspot (reserve-pms-guess-3.lua), scored by when (ms). */
  pmsGuessesByDevice: (tenantId: string, hotspotId: string, mac: string) => `${tag(tenantId)}:pms:gl:d:${hotspotId}:${mac}`,
  /** Sorted set: room+surname misses from one source address (the socket's peer), scored by when (ms). */
  pmsGuessesByAddress: (tenantId: string, address: string) => `${tag(tenantId)}:pms:gl:a:${address}`,

  // --- Personal data (engine/privacy/; docs/privacy.md) ---
  /** SCAN pattern: every key of the tenant (an access export and an erasure look at each; never used by a script). */
  tenantScan: (tenantId: string) => `${tag(tenantId).replace(/[*?[\]\\]/g, '\\$&')}:*`,
} as const;

/**
 * The tenant a key belongs to, from its hash tag: `{t:<tenant>}:...` gives
 * `<tenant>`. Only for keys built by `keys` (the outbox sink reads streams by
 * key and must know whose records they hold).
 */
export function tenantOfKey(key: string): string {
  return key.slice(3, key.indexOf('}'));
}

/** The consumer group of the outbox sink. */
export const OUTBOX_GROUP = 'pg-sink';

/**
 * The consumer group of the webhook router on a tenant's events stream (keys.events): its
 * last-delivered id is how far the tenant's owed deliveries are made, and the events trimmer never
 * trims past it (engine/webhooks/event-trimmer.ts).
 */
export const WEBHOOK_GROUP = 'webhooks';
