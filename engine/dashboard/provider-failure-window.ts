/** Tenants x providers remembered at most: a bound, not a figure any real installation reaches. */
const MAX_TRACKED = 10_000;

/**
 * OTP provider failures of the last few minutes in this process
 * (ProviderFailures tells it of each), for the `otp_provider_failing`
 * detector. Kept in memory: a provider that fails, fails for every engine
 * process sending through it, so each process sees it on its own; raising
 * the incident is idempotent across processes.
 */
export class ProviderFailureWindow {
  /** "<tenant> <provider>" -> the times of its latest failures (at most `threshold`), oldest first. */
  private readonly recent = new Map<string, { tenantId: string; provider: string; code: string; at: number[] }>();

  constructor(private readonly threshold: number, private readonly windowMs: number, private readonly now: () => number = Date.now) {}

  record(tenantId: string, provider: string, code: string): void {
    const key = `${tenantId} ${provider}`;
    let r = this.recent.get(key);
    if (!r) {
      if (this.recent.size >= MAX_TRACKED) this.prune();
      this.recent.set(key, (r = { tenantId, provider, code, at: [] }));
    }
    r.code = code;
    r.at.push(this.now());
    if (r.at.length > this.threshold) r.at.shift();
  }

  /** The tenant's providers that failed `threshold` times within the window after `sinceMs`. */
  failing(tenantId: string, sinceMs = 0): { provider: string; failures: number; code: string }[] {
    const from = Math.max(sinceMs, this.now() - this.windowMs);
    const out: { provider: string; failures: number; code: string }[] = [];
    for (const r of this.recent.values()) {
      if (r.tenantId !== tenantId) continue;
      const failures = r.at.filter((t) => t > from).length;
      if (failures >= this.threshold) out.push({ provider: r.provider, failures, code: r.code });
    }
    return out;
  }

  private prune(): void {
    const from = this.now() - this.windowMs;
    for (const [key, r] of this.recent) if ((r.at[r.at.length - 1] ?? 0) <= from) this.recent.delete(key);
  }
}
