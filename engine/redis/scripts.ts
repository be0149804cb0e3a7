import { readFileSync } from 'node:fs';
import { Redis, type Result, type Callback, type RedisOptions } from 'ioredis';
import { projectPath } from '../util/project-root.js';
import type { Logger } from '../logger.js';

/**
 * The Lua scripts of engine/redis/lua, registered with ioredis under a
 * versioned name. ioredis runs EVALSHA and falls back to EVAL on NOSCRIPT
 * (a restarted or new Redis), so scripts are never loaded by hand.
 * Bump the version suffix when a script's KEYS/ARGV/return contract changes.
 */
const SCRIPTS = [
  { file: 'put-voucher-1.lua', name: 'putVoucherV2', numberOfKeys: 1 },
  // V3: the loaded marker holds the server's run_id and `not_loaded` carries it; the session
  // quota fallback (old ARGV[10], 0 from every caller) is gone, so the method is ARGV[10].
  // V4: a replaced session is ended by the script itself (its end record queued with its bytes).
  { file: 'use-voucher-8.lua', name: 'useVoucherV4', numberOfKeys: 8 },
  { file: 'remove-voucher-2.lua', name: 'removeVoucherV1', numberOfKeys: 2 },
  // V2: totals per Acct-Session-Id, the status as ARGV[8], and whether the id is the session's current one.
  { file: 'account-session-2.lua', name: 'accountSessionV2', numberOfKeys: 2 },
  { file: 'end-session-4.lua', name: 'endSessionV1', numberOfKeys: 4 },
  { file: 'extend-session-3.lua', name: 'extendSessionV1', numberOfKeys: 3 },
  { file: 'renew-lease-1.lua', name: 'renewLeaseV1', numberOfKeys: 1 },
  { file: 'remember-nas-1.lua', name: 'rememberNasV1', numberOfKeys: 1 },
  { file: 'raise-uses-1.lua', name: 'raiseUsesV1', numberOfKeys: 1 },
  // OTP sign-in (engine/signin/otp/)
  { file: 'request-otp-7.lua', name: 'requestOtpV1', numberOfKeys: 7 },
  { file: 'verify-otp-1.lua', name: 'verifyOtpV1', numberOfKeys: 1 },
  { file: 'mark-otp-delivered-2.lua', name: 'markOtpDeliveredV1', numberOfKeys: 2 },
  { file: 'claim-otp-fallbacks-1.lua', name: 'claimOtpFallbacksV1', numberOfKeys: 1 },
  { file: 'settle-otp-fallback-3.lua', name: 'settleOtpFallbackV1', numberOfKeys: 3 },
] as const;

type Arg = string | number;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    putVoucherV2(
      voucherKey: string,
      id: string, maxUses: Arg, uses: Arg, expiresAtMs: Arg, ssids: string,
      minutes: Arg, downKbps: Arg, upKbps: Arg, quotaMb: Arg, profile: string, code: string, sessionQuotaMb: Arg,
      callback?: Callback<number>,
    ): Result<number, Context>;
    useVoucherV4(
      voucherKey: string, devicesKey: string, grantKey: string, outboxKey: string, loadedKey: string,
      liveKey: string, sessionRefKey: string, blockKey: string,
      now: Arg, mac: string, hotspotId: string, ip: string, ssid: string,
      sessionId: string, useId: string, defaultMinutes: Arg, idleSec: Arg, method: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    removeVoucherV1(voucherKey: string, devicesKey: string, id: string, callback?: Callback<number>): Result<number, Context>;
    accountSessionV2(
      grantKey: string, dailyKey: string,
      now: Arg, acctSessionId: string, inOctets: Arg, outOctets: Arg, ip: string, ap: string, signal: string,
      status: 'start' | 'interim' | 'stop',
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    endSessionV1(
      grantKey: string, liveKey: string, sessionRefKey: string, outboxKey: string,
      sid: string, now: Arg, reason: string, hotspotId: string, mac: string, by: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    extendSessionV1(
      grantKey: string, liveKey: string, outboxKey: string, sid: string, now: Arg, minutes: Arg, by: string,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    renewLeaseV1(leaseKey: string, owner: string, ttlMs: Arg, callback?: Callback<number>): Result<number, Context>;
    rememberNasV1(grantKey: string, sid: string, nasId: string, nasUser: string, callback?: Callback<number>): Result<number, Context>;
    raiseUsesV1(voucherKey: string, voucherId: string, uses: Arg, callback?: Callback<number>): Result<number, Context>;
    // OTP sign-in (engine/signin/otp/)
    requestOtpV1(
      codeKey: string, requestKey: string, userLimitKey: string, ipLimitKey: string, macLimitKey: string,
      prefixLimitKey: string, fallbacksKey: string,
      now: Arg, hash: string, requestId: string, channel: string, hotspotId: string, identity: string,
      codeTtlMs: Arg, stateTtlMs: Arg, cooldownMs: Arg, perIdentity: Arg, dayMs: Arg,
      perIp: Arg, perMac: Arg, perPrefix: Arg, windowMs: Arg, fallbackDueMs: Arg, fallbackSms: Arg,
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
    verifyOtpV1(codeKey: string, now: Arg, hash: string, maxTries: Arg, callback?: Callback<unknown[]>): Result<unknown[], Context>;
    markOtpDeliveredV1(requestKey: string, fallbacksKey: string, requestId: string, channel: string, callback?: Callback<string>): Result<string, Context>;
    claimOtpFallbacksV1(fallbacksKey: string, now: Arg, leaseMs: Arg, limit: Arg, callback?: Callback<string[]>): Result<string[], Context>;
    settleOtpFallbackV1(
      requestKey: string, fallbacksKey: string, codeKey: string,
      requestId: string, outcome: 'resent' | 'not_delivered', hash: string, now: Arg, codeTtlMs: Arg, expect: 'sent' | 'resent_by_sms',
      callback?: Callback<unknown[]>,
    ): Result<unknown[], Context>;
  }
}

let sources: { name: string; numberOfKeys: number; lua: string }[] | undefined;

/** Registers every script on a connection. Reads the files once per process. */
export function defineScripts(redis: Redis): void {
  sources ??= SCRIPTS.map((s) => ({
    name: s.name,
    numberOfKeys: s.numberOfKeys,
    lua: readFileSync(projectPath('engine', 'redis', 'lua', s.file), 'utf8'),
  }));
  for (const s of sources) redis.defineCommand(s.name, { numberOfKeys: s.numberOfKeys, lua: s.lua });
}

/**
 * The run_id of the Redis server behind a connection (`INFO server`). It is
 * new on every start of a server, so a replica promoted by a failover or a
 * restarted server never shows the id of the one before. The tenant loaded
 * marker holds it (see use-voucher-8.lua).
 */
export async function serverRunId(redis: Redis): Promise<string> {
  const m = /^run_id:([0-9a-f]{40})\r?$/m.exec(await redis.info('server'));
  if (!m) throw new Error('Redis INFO server shows no run_id');
  return m[1]!;
}

/**
 * A connection with the scripts defined. Commands fail fast (two retries)
 * while Redis is away, so a request gets a 503 instead of hanging.
 */
export function createRedis(url: string, log: Logger, options: RedisOptions = {}): Redis {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, enableAutoPipelining: true, ...options });
  redis.on('error', (err: Error) => log.warn({ err: err.message }, 'redis connection error'));
  defineScripts(redis);
  return redis;
}
