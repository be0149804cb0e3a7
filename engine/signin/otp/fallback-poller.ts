import type { Logger } from '../../logger.js';
import type { OtpService } from './otp-service.js';

/** Watches claimed per tenant and tick; the rest wait for the next tick. */
const CLAIM_BATCH = 100;

/**
 * Fires the messaging-app delivery watches that are due.
 * The watches live in Redis (one sorted set per tenant, plus an index of
 * tenants that scheduled one), not in this process: a restarted engine, or
 * any other engine process, picks them up on its next tick. The claim script
 * gives each due watch to exactly one poller at a time.
 */
export class OtpFallbackPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;

  constructor(
    private readonly otp: OtpService,
    private readonly log: Logger,
    private readonly now: () => number,
    private readonly intervalMs = 1000,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    // A pending fallback never keeps a process alive that is otherwise done.
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One pass over the due watches; overlapping calls share the pass in progress. */
  tick(): Promise<void> {
    this.running ??= this.pass()
      .catch((err: Error) => this.log.warn({ err: err.message }, 'OTP fallback pass failed'))
      .finally(() => { this.running = null; });
    return this.running;
  }

  private async pass(): Promise<void> {
    const store = this.otp.store;
    for (const tenantId of await store.fallbackTenants(this.now())) {
      const due = await store.claimDue(tenantId, this.now(), CLAIM_BATCH);
      for (const requestId of due) {
        try {
          await this.otp.fireFallback(tenantId, requestId);
        } catch (err) {
          // The watch stays claimed; after its lease another pass tries again.
          this.log.warn({ tenant: tenantId, request: requestId, err: (err as Error).message }, 'OTP fallback failed; retried after its lease');
        }
      }
    }
  }
}
