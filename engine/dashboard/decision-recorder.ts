import type { Redis } from 'ioredis';
import { activityBuckets, stepOf } from '../events/activity-keys.js';
import { DECISIONS_MAXLEN, EVENTS_MAXLEN } from '../events/types.js';
import { AppError, Errors } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { keys } from '../redis/keys.js';
import { ACTIVITY, ACTIVITY_TTL } from '../redis/records.js';
import { decisionSource, isSignIn, type DecisionSink, type SignInDecision } from '../signin/decision-sink.js';

/** How often buffered decisions are written. */
export const DECISION_FLUSH_MS = 250;
/** Decisions held at most between flushes (Redis away): past it new ones are dropped and counted, never queued without limit. */
const MAX_BUFFERED = 100_000;

/** The error codes whose catalogue status is 5xx: a reject for one of them is our failure (ACTIVITY.errors), not the guest's. */
const SERVER_SIDE = serverSideCodes();

/**
 * The dashboard's DecisionSink: every sign-in decision (portal, OTP, RADIUS)
 * counted into the tenant's activity buckets and 10-second steps, listed in
 * its decisions stream, and emitted as auth.success / auth.failure on its
 * event stream (docs/events.md).
 *
 * record() is on the guest's path (a portal verify, an Access-Request): it
 * only pushes onto an in-memory buffer, never awaits and never throws. A
 * timer writes the buffer every DECISION_FLUSH_MS with one script call per
 * tenant (record-decisions-5.lua: counts summed in Redis, one XADD per
 * decision to each stream). Every engine process
 * has its own recorder: the counts add up across processes. A failed write
 * loses that flush's decisions (logged and counted), rather than blocking
 * sign-ins or growing memory while Redis is away.
 */
export class DecisionRecorder implements DecisionSink {
  private buffer: SignInDecision[] = [];
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;

  /** `also` gets every decision as it is recorded (the Prometheus counter). */
  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
    private readonly metrics: Metrics,
    private readonly also: DecisionSink,
  ) {
    metrics.counter('dashboard_decisions_dropped_total', 'Sign-in decisions not recorded for the dashboard: the buffer was full (Redis away)');
    metrics.counter('dashboard_decision_flush_errors_total', 'Failed writes of buffered sign-in decisions to Redis');
    this.timer = setInterval(() => void this.flush(), DECISION_FLUSH_MS);
    this.timer.unref();
  }

  record(d: SignInDecision): void {
    this.also.record(d);
    if (this.buffer.length >= MAX_BUFFERED) {
      this.metrics.inc('dashboard_decisions_dropped_total');
      return;
    }
    this.buffer.push(d);
  }

  /** Writes what is buffered; one flush at a time (a slow one lets the next tick's decisions wait for the one after). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.buffer.length === 0) return Promise.resolve();
    const batch = this.buffer;
    this.buffer = [];
    this.flushing = this.write(batch).finally(() => { this.flushing = null; });
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }

  private async write(batch: SignInDecision[]): Promise<void> {
    const byTenant = new Map<string, SignInDecision[]>();
    for (const d of batch) {
      const list = byTenant.get(d.tenantId);
      if (list) list.push(d);
      else byTenant.set(d.tenantId, [d]);
    }
    await Promise.all([...byTenant].map(async ([tenantId, list]) => {
      try {
        await this.writeTenant(tenantId, list);
      } catch (err) {
        this.metrics.inc('dashboard_decision_flush_errors_total');
        this.log.warn({ tenant: tenantId, lost: list.length, err: (err as Error).message }, 'could not record sign-in decisions for the dashboard');
      }
    }));
  }

  /**
   * One script call per run of decisions in one 10-second step (a flush
   * spans one step, at a step's edge two): the list, the events and the
   * counts appear together, and the client encodes one command per step
   * rather than two stream writes per decision.
   */
  private async writeTenant(tenantId: string, list: SignInDecision[]): Promise<void> {
    // Runs of consecutive decisions in one step, so the list and the events keep the order decisions were made in.
    const runs: [step: number, decisions: SignInDecision[]][] = [];
    for (const d of list) {
      const step = stepOf(d.at);
      const last = runs[runs.length - 1];
      if (last && last[0] === step) last[1].push(d);
      else runs.push([step, [d]]);
    }
    for (const [step, decisions] of runs) {
      const args: (string | number)[] = [];
      for (const d of decisions) {
        // A NAS asking again about a device counts per method and reason, not as a login (isSignIn).
        const flags = !isSignIn(d.method) ? '' : d.outcome === 'reject' && SERVER_SIDE.has(d.reason) ? 'se' : 's';
        args.push(d.at, d.outcome, d.method, d.reason, d.hotspotId, decisionSource(d), flags);
      }
      const [minute, hour] = activityBuckets(tenantId, decisions[0]!.at);
      await this.redis.recordDecisionsV1(
        keys.decisions(tenantId), keys.events(tenantId), minute, hour, keys.decisionStep(tenantId, step),
        DECISIONS_MAXLEN, EVENTS_MAXLEN, ACTIVITY_TTL.minute, ACTIVITY_TTL.hour, ACTIVITY_TTL.step,
        ACTIVITY.accepts, ACTIVITY.rejects, ACTIVITY.errors, ...args);
    }
  }
}

/**
 * The catalogue's codes with a 5xx status, read once at start-up by making
 * each error with placeholder arguments (a code and its status never depend
 * on them; test/unit/docs.test.ts reads the codes the same way). A maker
 * that cannot run with them is skipped.
 */
function serverSideCodes(): Set<string> {
  const out = new Set<string>();
  for (const make of Object.values(Errors) as ((...a: unknown[]) => AppError)[]) {
    try {
      const e = make('x', [], 0, 0);
      if (e instanceof AppError && e.status >= 500) out.add(e.code);
    } catch {
      // needs its arguments: not a status we can read this way
    }
  }
  return out;
}
