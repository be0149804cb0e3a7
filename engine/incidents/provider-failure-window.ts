import { randomBytes } from 'node:crypto';
import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { Logger } from '../logger.js';
import { keys } from '../redis/keys.js';

/** Failures kept per tenant and provider: the threshold is a handful; a flood of them needs no more than this to count. */
const MAX_KEPT = 1_000;

/**
 * OTP provider failures of the last few minutes (ProviderFailures tells it
 * of each), for the `otp_provider_failing` detector, counted in Redis so
 * every engine process sees every process's failures: behind a load
 * balancer a provider failing five times in five minutes may fail only once
 * or twice in each process, and a count per process would never raise it.
 *
 * record() is on a guest's path (a failed send): it never waits and never
 * throws; a failure Redis does not take is logged and lost.
 */
export class ProviderFailureWindow {
  constructor(
    private readonly redis: Redis,
    private readonly threshold: number,
    private readonly windowMs: number,
    private readonly log?: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** `code` is the failure's kind, from the fixed FAILURE_KINDS (never the provider's own answer): it reaches the incident. */
  record(tenantId: string, provider: string, code: string): void {
    const at = this.now();
    const set = keys.otpProviderFailures(tenantId, provider);
    const codes = keys.otpProviderFailing(tenantId);
    const ttlSec = Math.ceil(this.windowMs / 1000) + 60;
    this.redis.multi()
      .zadd(set, at, `${at}:${randomBytes(4).toString('hex')}`)
      .zremrangebyscore(set, '-inf', at - this.windowMs)
      .zremrangebyrank(set, 0, -MAX_KEPT - 1)
      .expire(set, ttlSec)
      .hset(codes, provider, code)
      .expire(codes, ttlSec)
      .exec()
      .catch((err: Error) => this.log?.warn({ tenant: tenantId, provider, err: err.message }, 'could not count an OTP provider failure'));
  }

  /** The tenant's providers that failed `threshold` times within the window after `sinceMs`, with their last code. */
  async failing(tenantId: string, sinceMs = 0): Promise<{ provider: string; failures: number; code: string }[]> {
    const from = Math.max(sinceMs, this.now() - this.windowMs);
    const codes = await this.redis.hgetall(keys.otpProviderFailing(tenantId));
    const providers = Object.keys(codes);
    if (providers.length === 0) return [];
    const p = this.redis.pipeline();
    for (const provider of providers) p.zcount(keys.otpProviderFailures(tenantId, provider), `(${from}`, '+inf');
    const counts = (await p.exec()) ?? [];
    const out: { provider: string; failures: number; code: string }[] = [];
    providers.forEach((provider, i) => {
      const [err, n] = counts[i] ?? [null, 0];
      if (err) throw err;
      if (Number(n) >= this.threshold) out.push({ provider, failures: Number(n), code: codes[provider]! });
    });
    return out;
  }
}
