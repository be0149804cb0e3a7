import type { Logger } from '../logger.js';
import type { AuditLog } from './audit-log.js';

/** How often every process looks for operator-change intents that no request ended. */
const SWEEP_MS = 60_000;

/**
 * Turns the intents of operator changes whose request never ended (the
 * process died between the change and its record, or Redis failed just then)
 * into `operator_change_unconfirmed` records, for every tenant, once a
 * minute: a tenant that changes nothing more still gets its record. Every
 * process sweeps; the record id is the intent's, so two sweeps of one intent
 * queue one record (commit-audit-2.lua).
 */
export class AuditIntentSweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;

  constructor(
    private readonly audit: AuditLog,
    private readonly tenants: { list(): Promise<{ id: string }[]> },
    private readonly log: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), SWEEP_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One pass over every tenant; a pass still running is not started twice. */
  runOnce(): Promise<void> {
    this.running ??= this.pass().finally(() => { this.running = null; });
    return this.running;
  }

  private async pass(): Promise<void> {
    try {
      for (const t of await this.tenants.list()) await this.audit.recoverStale(t.id);
    } catch (err) {
      this.log.warn({ err: (err as Error).message }, 'audit intent sweep failed; the next one tries again');
    }
  }
}
