import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Result, Callback, RedisOptions } from 'ioredis';
import { assetPath } from '../util/project-root.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { timeScripts } from './script-timing.js';
import { nodeFor, openRedis, type RedisClient } from './redis-client.js';

export type { RedisClient } from './redis-client.js';

/**
 * The Lua scripts of engine/redis/lua, registered with ioredis under a
 * versioned name. ioredis runs EVALSHA and falls back to EVAL on NOSCRIPT
 * (a restarted or new Redis), so scripts are never loaded by hand.
 * Bump the version suffix when a script's KEYS/ARGV/return contract changes
 * (the records it queues included: engine/redis/records.ts).
 *
 * A script may include shared fragments from lua/includes/ with a line
 * `--- @include "<name>"` (BullMQ's pattern): readScript puts the fragment's
 * text there when it reads the file, so ioredis still sees one script.
 * Fragments define local functions only, and call Redis through the
 * including script's `local rcall = redis.call`, declared before its includes.
 */
const SCRIPTS = [
  // V3: the match-day window (ARGV[13], ARGV[14]).
  { file: 'put-voucher-1.lua', name: 'putVoucherV3', numberOfKeys: 1 },
  // V3: the loaded marker holds the server's run_id and `not_loaded` carries it; the session
  // quota fallback (old ARGV[10], 0 from every caller) is gone, so the method is ARGV[10].
  // V4: a replaced session is ended by the script itself (its end record queued with its bytes).
  // V5: the start is the method-neutral session_start record (no use id, no method argument).
  // V6: the start (and the end of a replaced session) emits its domain event and counts the dashboard's
  // activity: six more KEYS (includes/activity.lua).
  // V7: the guessing limits checked and counted in the same step (three more KEYS, four more ARGV, 'too_many_attempts').
  // V8: a spent use emits voucher.redeemed, and a tenant's first session of a MAC device.new (one more KEY, the known devices).
  // V9: the match-day window: 'not_yet_valid' before it, 'expired' at its end; an optional ARGV[13], the browser's device type (reports).
  { file: 'use-voucher-18.lua', name: 'useVoucherV9', numberOfKeys: 18 },
  { file: 'remove-voucher-2.lua', name: 'removeVoucherV1', numberOfKeys: 2 },
  // Operator audit records (engine/audit/audit-log.ts): the record queued and its intent cleared in one step.
  { file: 'commit-audit-2.lua', name: 'commitAuditV1', numberOfKeys: 2 },
  // A long request's intent kept fresh while it runs, only while it is still the one stored.
  { file: 'refresh-intent-1.lua', name: 'refreshIntentV1', numberOfKeys: 1 },
  // V2: totals per Acct-Session-Id, the status as ARGV[8], and whether the id is the session's current one.
  // V3: byte deltas counted into the activity buckets, the live-per-AP hash moved (three more KEYS).
  // V4: the deltas returned for the caller to count (engine/events/activity-tally.ts), the buckets' KEYS gone.
  { file: 'account-session-3.lua', name: 'accountSessionV4', numberOfKeys: 3 },
  // The same for a batch of one tenant's reports in one round trip (engine/sessions/account-batcher.ts): 1 + 2 KEYS per report.
  // V2: a report that raises an error replies {'failed', message} alone; the batch's others are recorded and replied to.
  { file: 'account-sessions-n.lua', name: 'accountSessionsV2', numberOfKeys: null },
  // V2 (both): the domain event, and for the end the activity counters, written in the script.
  { file: 'end-session-10.lua', name: 'endSessionV3', numberOfKeys: 10 },
  { file: 'extend-session-4.lua', name: 'extendSessionV3', numberOfKeys: 4 },
  // V2: a process refused while it serves the hotspot is next in line for it (a second KEY); refusals say how long to wait.
  { file: 'renew-lease-2.lua', name: 'renewLeaseV2', numberOfKeys: 2 },
  { file: 'release-lease-2.lua', name: 'releaseLeaseV1', numberOfKeys: 2 },
  // V2: the SSID the NAS names replaces the portal's, and moves the session in the live-per-SSID hash.
  { file: 'remember-nas-2.lua', name: 'rememberNasV2', numberOfKeys: 2 },
  // The actor's reload of a device's session: the grant, if its session is live, in one round trip.
  { file: 'live-session-2.lua', name: 'liveSessionV1', numberOfKeys: 2 },
  { file: 'raise-uses-n.lua', name: 'raiseUsesN1', numberOfKeys: null },
  // Erasure (engine/privacy/redis-personal-data.ts): a hash value pseudonymised only if it is still the value read.
  { file: 'replace-hash-value-1.lua', name: 'replaceHashValueV1', numberOfKeys: 1 },
  // V2: the start emits its domain event and counts the dashboard's activity (six more KEYS).
  // V3: a tenant's first session of a MAC emits device.new (one more KEY, the known devices).
  { file: 'start-session-13.lua', name: 'startSessionV3', numberOfKeys: 13 },
  // OTP sign-in (engine/signin/otp/)
  { file: 'request-otp-7.lua', name: 'requestOtpV1', numberOfKeys: 7 },
  // The code check and the session start in one script (it replaced verify-otp-1.lua + start-session-12.lua for codes).
  // V2: a tenant's first session of a MAC emits device.new (one more KEY, the known devices).
  // V3: the device type the browser claimed as ARGV[10], the method groups from ARGV[11] (the reports' device types).
  { file: 'use-otp-14.lua', name: 'useOtpV3', numberOfKeys: 14 },
  { file: 'mark-otp-delivered-2.lua', name: 'markOtpDeliveredV1', numberOfKeys: 2 },
  { file: 'claim-otp-fallbacks-1.lua', name: 'claimOtpFallbacksV1', numberOfKeys: 1 },
  { file: 'settle-otp-fallback-3.lua', name: 'settleOtpFallbackV1', numberOfKeys: 3 },
  // Sponsor approval (engine/signin/sponsor/): the request with its limits, and the link consumed with the session start or the rejection.
  { file: 'request-sponsor-7.lua', name: 'requestSponsorV1', numberOfKeys: 7 },
  { file: 'approve-sponsor-15.lua', name: 'approveSponsorV2', numberOfKeys: 15 },
  { file: 'reject-sponsor-3.lua', name: 'rejectSponsorV1', numberOfKeys: 3 },
  { file: 'withdraw-sponsor-4.lua', name: 'withdrawSponsorV1', numberOfKeys: 4 },
  // Dashboard operations (engine/posture/, engine/nas/): posture verdicts, NAS presence
  { file: 'record-posture-5.lua', name: 'recordPostureV1', numberOfKeys: 5 },
  { file: 'mark-nas-seen-2.lua', name: 'markNasSeenV1', numberOfKeys: 2 },
  // Dashboard activity: buffered sign-in decisions (engine/decisions/decision-recorder.ts)
  // V2: an entry carries a count (a NAS's alike re-checks folded into one), and only sign-ins emit events.
  // V3: an entry carries the device's MAC ('' unknown), which its auth.* event carries for webhooks.
  { file: 'record-decisions-6.lua', name: 'recordDecisionsV4', numberOfKeys: 6 },
  // Dashboard reads (engine/redis/read-batch.ts): a request's reads in one command. The key
  // count is the caller's (the tenant's sites, NAS and windows), so it is passed first: numberOfKeys null.
  { file: 'read-batch-n.lua', name: 'readBatchV1', numberOfKeys: null },
  // Webhooks (engine/webhooks/): subscriptions mirrored for routing, events routed into owed deliveries,
  // claims and settlements of attempts, redelivery, and the events stream's one trimmer.
  { file: 'add-webhook-2.lua', name: 'addWebhookV1', numberOfKeys: 2 },
  { file: 'remove-webhook-2.lua', name: 'removeWebhookV1', numberOfKeys: 2 },
  // V2: what it routes may be claimed in the same step (ARGV[4..6]); a third reply, whether a delivery is left due.
  { file: 'route-webhook-events-5.lua', name: 'routeWebhookEventsV2', numberOfKeys: 5 },
  { file: 'claim-webhook-deliveries-6.lua', name: 'claimWebhookDeliveriesV1', numberOfKeys: 6 },
  // Outcomes settled per tenant in batches: 5 keys + one attempts stream per outcome, so the count is the caller's.
  { file: 'settle-webhook-deliveries-n.lua', name: 'settleWebhookDeliveriesV1', numberOfKeys: null },
  { file: 'redeliver-webhook-4.lua', name: 'redeliverWebhookV1', numberOfKeys: 4 },
  { file: 'trim-events-1.lua', name: 'trimEventsV1', numberOfKeys: 1 },
  // Room sign-in over a PMS link (engine/pms/)
  { file: 'reserve-pms-guess-3.lua', name: 'reservePmsGuessV1', numberOfKeys: 3 },
  { file: 'attach-pms-session-2.lua', name: 'attachPmsSessionV1', numberOfKeys: 2 },
  { file: 'check-out-pms-guest-3.lua', name: 'checkOutPmsGuestV2', numberOfKeys: 3 },
  { file: 'hold-pms-lease-1.lua', name: 'holdPmsLeaseV1', numberOfKeys: 1 },
] as const;

type Arg = string | number;

/**
 * The six KEYS of includes/activity.lua, in its order: event stream, this
 * minute's and this hour's activity buckets, live devices, live per SSID,
 * live per AP. Built by activityKeys (engine/events/activity-keys.ts).
 */
export type ActivityKeys = [events: string, minute: string, hour: string, devices: string, bySsid: string, byAp: string];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    putVoucherV3(
      voucherKey: string,
      id: string, maxUses: Arg, uses: Arg, expiresAtMs: Arg, ssids: string,
      minutes: Arg, downKbps: Arg, upKbps: Arg, quotaMb: Arg, profile: string, code: string, sessionQuotaMb: Arg,
      validFromMs: Arg, validUntilMs: Arg,
      callback?: Callback<number>,
    ): Result<number, Context>;
    useVoucherV9(
      voucherKey: string, devicesKey: string, grantKey: string, outboxKey: string, loadedKey: string,
      liveKey: string, sessionRefKey: string, blockKey: string,
      eventsKey: string, minuteKey: string, hourKey: string, liveDevicesKey: string, liveBySsidKey: string, liveByApKey: string,
      deviceGuessesKey: string, addressGuessesKey: string, refusalsKey: string, knownDevicesKey: string,
      now: Arg, mac: string, hotspotId: string, ip: string, ssid: string,
      sessionId: string, defaultMinutes: Arg, idleSec: Arg,
      perDevice: Arg, perAddress: Arg, windowMs: Arg, refusalsTtlMs: Arg, deviceType?: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    removeVoucherV1(voucherKey: string, devicesKey: string, id: string, callback?: Callback<number>): Result<number, Context>;
    commitAuditV1(
      outboxKey: string, intentsKey: string,
      rid: string, mustHold: '0' | '1', event: string, at: string, by: string, hotspotId: string, mac: string, details: string,
      callback?: Callback<number>,
    ): Result<number, Context>;
    refreshIntentV1(intentsKey: string, rid: string, before: string, after: string, callback?: Callback<number>): Result<number, Context>;
    accountSessionV4(
      grantKey: string, dailyKey: string, liveByApKey: string,
      now: Arg, acctSessionId: string, inOctets: Arg, outOctets: Arg, ip: string, ap: string, signal: string,
      status: 'start' | 'interim' | 'stop',
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    /** numKeys (1 + 2 per report), the live-per-AP hash, each report's grant and daily keys, then 8 ARGV per report (lua/account-sessions-n.lua). */
    accountSessionsV2(numKeys: number, ...keysThenArgs: Arg[]): Result<unknown[][], Context>;
    endSessionV3(
      grantKey: string, liveKey: string, sessionRefKey: string, outboxKey: string,
      eventsKey: string, minuteKey: string, hourKey: string, liveDevicesKey: string, liveBySsidKey: string, liveByApKey: string,
      sid: string, now: Arg, reason: string, hotspotId: string, mac: string, by: string, op: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    extendSessionV3(
      grantKey: string, liveKey: string, outboxKey: string, eventsKey: string, sid: string, now: Arg, minutes: Arg, by: string, op: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    renewLeaseV2(leaseKey: string, nextKey: string, owner: string, ttlMs: Arg, queue: Arg, queueGraceMs: Arg, yieldToNext?: Arg, callback?: Callback<number>): Result<number, Context>;
    releaseLeaseV1(leaseKey: string, nextKey: string, owner: string, callback?: Callback<number>): Result<number, Context>;
    rememberNasV2(grantKey: string, liveBySsidKey: string, sid: string, nasId: string, nasUser: string, ssid: string, callback?: Callback<number>): Result<number, Context>;
    /** The grant hash as HGETALL's flat list, or [] when there is none or its session is not live (lua/live-session-2.lua). */
    liveSessionV1(grantKey: string, liveKey: string, callback?: Callback<string[]>): Result<string[], Context>;
    /** numKeys, the vouchers' hashes (one tenant), then (id, uses) per voucher (lua/raise-uses-n.lua). */
    raiseUsesN1(numKeys: number, ...keysThenArgs: Arg[]): Result<number, Context>;
    replaceHashValueV1(hashKey: string, field: string, expected: string, value: string, callback?: Callback<number>): Result<number, Context>;
    startSessionV3(
      grantKey: string, outboxKey: string, loadedKey: string, liveKey: string, sessionRefKey: string, blockKey: string,
      eventsKey: string, minuteKey: string, hourKey: string, liveDevicesKey: string, liveBySsidKey: string, liveByApKey: string,
      knownDevicesKey: string,
      now: Arg, mac: string, hotspotId: string, ip: string, ssid: string, sessionId: string,
      minutes: Arg, idleSec: Arg, method: string, user: string,
      downKbps: Arg, upKbps: Arg, quotaMb: Arg, sessionQuotaMb: Arg, profile: string, deviceType?: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    // OTP sign-in (engine/signin/otp/)
    requestOtpV1(
      codeKey: string, requestKey: string, userLimitKey: string, ipLimitKey: string, macLimitKey: string,
      prefixLimitKey: string, fallbacksKey: string,
      now: Arg, hash: string, requestId: string, channel: string, hotspotId: string, identity: string,
      codeTtlMs: Arg, stateTtlMs: Arg, cooldownMs: Arg, perIdentity: Arg, dayMs: Arg,
      perIp: Arg, perMac: Arg, perPrefix: Arg, windowMs: Arg, fallbackDueMs: Arg, fallbackSms: Arg, locale: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    useOtpV3(
      codeKey: string, grantKey: string, outboxKey: string, loadedKey: string, liveKey: string, sessionRefKey: string, blockKey: string,
      eventsKey: string, minuteKey: string, hourKey: string, liveDevicesKey: string, liveBySsidKey: string, liveByApKey: string,
      knownDevicesKey: string,
      now: Arg, hash: string, maxTries: Arg, mac: string, hotspotId: string, ip: string, ssid: string, sessionId: string, user: string,
      deviceType: string, ...terms: Arg[]
    ): Result<unknown[], Context>;
    markOtpDeliveredV1(requestKey: string, fallbacksKey: string, requestId: string, channel: string, callback?: Callback<string>): Result<string, Context>;
    claimOtpFallbacksV1(fallbacksKey: string, now: Arg, leaseMs: Arg, limit: Arg, callback?: Callback<string[]>): Result<string[], Context>;
    settleOtpFallbackV1(
      requestKey: string, fallbacksKey: string, codeKey: string,
      requestId: string, outcome: 'resent' | 'not_delivered', hash: string, now: Arg, codeTtlMs: Arg, expect: 'sent' | 'resent_by_sms',
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    // Sponsor approval (engine/signin/sponsor/)
    requestSponsorV1(
      requestKey: string, linkKey: string, recentKey: string, ipLimitKey: string, macLimitKey: string, sponsorLimitKey: string, eventsKey: string,
      now: Arg, requestId: string, tokenHash: string, linkTtlMs: Arg, keepMs: Arg, perIp: Arg, perMac: Arg, perSponsor: Arg, windowMs: Arg,
      hotspotId: string, mac: string, ip: string, ssid: string, guest: string, sponsor: string, gateway: string, lang: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    approveSponsorV2(
      linkKey: string, requestKey: string, grantKey: string, outboxKey: string, loadedKey: string, liveKey: string, sessionRefKey: string, blockKey: string,
      eventsKey: string, minuteKey: string, hourKey: string, liveDevicesKey: string, liveBySsidKey: string, liveByApKey: string, knownDevicesKey: string,
      now: Arg, requestId: string, tokenHash: string, mac: string, hotspotId: string, ip: string, ssid: string, sessionId: string,
      minutes: Arg, idleSec: Arg, user: string, downKbps: Arg, upKbps: Arg, quotaMb: Arg, sessionQuotaMb: Arg, profile: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    rejectSponsorV1(linkKey: string, requestKey: string, eventsKey: string, now: Arg, requestId: string, tokenHash: string, reason: string,
      callback?: Callback<unknown[]>): Result<unknown[], Context>;
    withdrawSponsorV1(requestKey: string, linkKey: string, recentKey: string, eventsKey: string, now: Arg, requestId: string,
      callback?: Callback<number>): Result<number, Context>;
    // Dashboard operations (engine/incidents/, engine/posture/, engine/nas/)
    recordPostureV1(
      postureKey: string, countsKey: string, minuteKey: string, hourKey: string, eventsKey: string,
      mac: string, verdict: string, now: Arg, hotspotId: string, minuteTtl: Arg, hourTtl: Arg, maxlen: Arg, reason: string,
      callback?: Callback<string>,
    ): Result<string, Context>;
    markNasSeenV1(seenKey: string, eventsKey: string, silentMs: Arg, maxlen: Arg, ...nasIdHotspotMs: Arg[]): Result<number, Context>;
    recordDecisionsV4(
      decisionsKey: string, eventsKey: string, minuteKey: string, hourKey: string, stepKey: string, callsKey: string,
      decisionsMaxlen: Arg, callsTtlMs: Arg, minuteTtl: Arg, hourTtl: Arg, stepTtl: Arg, acc: string, rej: string, err: string,
      recorder: string, call: Arg,
      ...decisions: Arg[]
    ): Result<number, Context>;
    /** numKeys, then that many keys, then the reads (lua/read-batch-n.lua): one reply per read. */
    readBatchV1(numKeys: number, ...keysThenReads: Arg[]): Result<unknown[], Context>;
    // Webhooks (engine/webhooks/)
    addWebhookV1(subsKey: string, eventsKey: string, id: string, entry: string, group: string, callback?: Callback<number>): Result<number, Context>;
    removeWebhookV1(subsKey: string, eventsKey: string, id: string, group: string, callback?: Callback<number>): Result<number, Context>;
    /** [events read, deliveries made, 1 when a delivery is left due unclaimed, then per claimed delivery: id, state JSON, data]. */
    routeWebhookEventsV2(
      eventsKey: string, subsKey: string, queueKey: string, deliveriesKey: string, bodiesKey: string,
      group: string, count: Arg, now: Arg, claim: Arg, leaseMs: Arg, token: string, callback?: Callback<[number, number, number, ...string[]]>,
    ): Result<[number, number, number, ...string[]], Context>;
    claimWebhookDeliveriesV1(
      queueKey: string, deliveriesKey: string, bodiesKey: string, doneKey: string, deadKey: string, subsKey: string,
      now: Arg, leaseMs: Arg, limit: Arg, token: string, maxAttempts: Arg, keepDeadMs: Arg, callback?: Callback<string[]>,
    ): Result<string[], Context>;
    /** numKeys (5 + outcomes), the five queue keys, one attempts stream per outcome, then the ARGV of lua/settle-webhook-deliveries-n.lua. */
    settleWebhookDeliveriesV1(numKeys: number, ...keysThenArgs: Arg[]): Result<number[], Context>;
    redeliverWebhookV1(queueKey: string, deliveriesKey: string, doneKey: string, deadKey: string, id: string, webhookId: string, now: Arg,
      callback?: Callback<number>): Result<number, Context>;
    trimEventsV1(eventsKey: string, maxlen: Arg, group: string, callback?: Callback<number>): Result<number, Context>;
    // Room sign-in over a PMS link (engine/pms/)
    reservePmsGuessV1(
      deviceKey: string, addressKey: string, refusalsKey: string,
      now: Arg, windowMs: Arg, perDevice: Arg, perAddress: Arg, member: string, hotspotId: string, refusalsTtlMs: Arg,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    attachPmsSessionV1(guestsKey: string, sessionsKey: string, reservation: string, sid: string, callback?: Callback<number>): Result<number, Context>;
    checkOutPmsGuestV2(guestsKey: string, roomKey: string, sessionsKey: string, reservation: string, room: string, keepMs: Arg, callback?: Callback<string[]>): Result<string[], Context>;
    holdPmsLeaseV1(leaseKey: string, owner: string, mode: 'hold' | 'release', ttlMs: Arg, callback?: Callback<number>): Result<number, Context>;
  }
}

const LUA_DIR = assetPath('engine', 'redis', 'lua');
const INCLUDE = /^--- @include "([^"\n]*)"[ \t]*\r?$/gm;

/**
 * A script's text with its includes resolved: each `--- @include "<name>"`
 * line becomes the text of `<dir>/includes/<name>.lua` (itself resolved the
 * same way). A fragment goes in once per script, where it is first included:
 * a second include of it (two fragments sharing a third) becomes a comment,
 * and so does a cycle. Throws, naming the script and the line, when a
 * fragment does not exist: a script missing a function would otherwise fail
 * only when run.
 */
export function readScript(file: string, dir: string = LUA_DIR): string {
  const seen = new Set<string>();
  const resolve = (name: string, text: string): string => text.replace(INCLUDE, (_line, inc: string) => {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(inc)) throw new Error(`${name}: bad include name ${JSON.stringify(inc)}`);
    if (seen.has(inc)) return `-- (${inc} included above)`;
    const path = join(dir, 'includes', `${inc}.lua`);
    if (!existsSync(path)) throw new Error(`${name}: --- @include "${inc}": no such fragment (${path})`);
    seen.add(inc);
    return resolve(`includes/${inc}.lua`, readFileSync(path, 'utf8'));
  });
  return resolve(file, readFileSync(join(dir, file), 'utf8'));
}

let sources: { name: string; numberOfKeys: number | null; lua: string }[] | undefined;

/** Registers every script on a connection. Reads the files once per process. */
export function defineScripts(redis: RedisClient): void {
  sources ??= SCRIPTS.map((s) => ({ name: s.name, numberOfKeys: s.numberOfKeys, lua: readScript(s.file) }));
  for (const s of sources) redis.defineCommand(s.name, { numberOfKeys: s.numberOfKeys ?? undefined, lua: s.lua });
}

/**
 * The run_id of the Redis server behind a connection (`INFO server`). It is
 * new on every start of a server, so a replica promoted by a failover or a
 * restarted server never shows the id of the one before. The tenant loaded
 * marker holds it (see lua/includes/admit-device.lua). On a cluster, the
 * run_id of the master serving `key`'s slot (the tenant's loaded marker):
 * INFO without a key would go to any node.
 */
export async function serverRunId(redis: RedisClient, key?: string): Promise<string> {
  if (redis.isCluster && key === undefined) throw new Error('serverRunId: a cluster has a run_id per node: name the key whose node is meant');
  const node = await nodeFor(redis, key ?? '');
  const m = /^run_id:([0-9a-f]{40})\r?$/m.exec(await node.info('server'));
  if (!m) throw new Error('Redis INFO server shows no run_id');
  return m[1]!;
}

/**
 * A client with the scripts defined: one connection, or a Cluster when `url`
 * is `redis+cluster://` (redis-client.ts). Commands fail fast (two retries)
 * while Redis is away, so a request gets a 503 instead of hanging. With
 * `metrics`, every script's latency goes to its histogram (script-timing.ts).
 */
export function createRedis(url: string, log: Logger, options: RedisOptions = {}, metrics?: Metrics): RedisClient {
  const redis = openRedis(url, { maxRetriesPerRequest: 2, ...options });
  redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis connection error'));
  defineScripts(redis);
  if (metrics) timeScripts(redis, SCRIPTS.map((s) => s.name), metrics);
  return redis;
}
