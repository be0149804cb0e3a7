import type { RedisClient as Redis } from '../redis/redis-client.js';
import { activityBuckets, stepOf } from '../events/activity-keys.js';
import { DECISIONS_MAXLEN } from '../events/types.js';
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
/** Re-check groups held at most between flushes (one per tenant, step, hotspot, method, outcome, reason). */
const MAX_GROUPS = 10_000;
/**
 * Entries per script call: a flush after a burst (or after Redis was away)
 * holds tens of thousands, and one call with all of them would spread
 * hundreds of thousands of arguments through ioredis (a RangeError there
 * leaves its auto-pipeline a reply short, which crashed the process).
 */
export const ENTRIES_PER_CALL = 500;

/** The error codes whose catalogue status is 5xx: a reject for one of them is our failure (ACTIVITY.errors), not the guest's. */
const SERVER_SIDE = serverSideCodes();

/** Alike re-checks of one flush, folded into one entry: the newest one, and how many. */
interface Folded { d: SignInDecision; count: number }

/**
 * The dashboard's DecisionSink: every decision (portal, OTP, RADIUS)
 * counted into the tenant's activity buckets and 10-second steps and listed
 * in its decisions stream; every sign-in also emitted as auth.success /
 * auth.failure on its event stream (docs/events.md).
 *
 * A NAS asking again about a device (mac_auth, uam_login: isSignIn) is most
 * of a MAC-auth venue's RADIUS traffic, tens of thousands a second at a
 * stadium. Those are folded in memory: one entry per flush, tenant, step,
 * hotspot, method, outcome and reason, with its count, and no event. A row
 * and an event per packet had halved the Access-Request rate.
 *
 * record() is on the guest's path (a portal verify, an Access-Request): it
 * only pushes onto an in-memory buffer (or bumps a count), never awaits and
 * never throws. A timer writes every DECISION_FLUSH_MS, one script call per
 * tenant and step (record-decisions-5.lua: counts summed in Redis, one XADD
 * per entry to the list and one per sign-in to the events), at most
 * ENTRIES_PER_CALL entries a call. Every engine process has its own
 * recorder: the counts add up across processes. A failed write loses that
 * flush's decisions (logged and counted), rather than blocking sign-ins or
 * growing memory while Redis is away.
 */
export class DecisionRecorder implements DecisionSink {
  private buffer: SignInDecision[] = [];
  private folded = new Map<string, Folded>();
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
    if (!isSignIn(d.method)) {
      const key = `${d.tenantId}\n${stepOf(d.at)}\n${d.hotspotId}\n${d.method}\n${d.outcome}\n${d.reason}\n${d.source ?? ''}`;
      const f = this.folded.get(key);
      if (f) {
        f.d = d;
        f.count++;
        return;
      }
      if (this.folded.size < MAX_GROUPS) {
        this.folded.set(key, { d, count: 1 });
        return;
      }
      this.metrics.inc('dashboard_decisions_dropped_total');
      return;
    }
    if (this.buffer.length >= MAX_BUFFERED) {
      this.metrics.inc('dashboard_decisions_dropped_total');
      return;
    }
    this.buffer.push(d);
  }

  /** Writes what is buffered; one flush at a time (a slow one lets the next tick's decisions wait for the one after). */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.buffer.length === 0 && this.folded.size === 0) return Promise.resolve();
    const batch: Folded[] = this.buffer.map((d) => ({ d, count: 1 }));
    for (const f of this.folded.values()) batch.push(f);
    this.buffer = [];
    this.folded = new Map();
    this.flushing = this.write(batch).finally(() => { this.flushing = null; });
    return this.flushing;
  }

  /** Stops the timer and writes what is left. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }

  private async write(batch: Folded[]): Promise<void> {
    const byTenant = new Map<string, Folded[]>();
    for (const f of batch) {
      const list = byTenant.get(f.d.tenantId);
      if (list) list.push(f);
      else byTenant.set(f.d.tenantId, [f]);
    }
    await Promise.all([...byTenant].map(async ([tenantId, list]) => {
      try {
        await this.writeTenant(tenantId, list);
      } catch (err) {
        this.metrics.inc('dashboard_decision_flush_errors_total');
        this.log.warn({ tenant: tenantId, lost: list.reduce((n, f) => n + f.count, 0), err: (err as Error).message }, 'could not record sign-in decisions for the dashboard');
      }
    }));
  }

  /**
   * One script call per run of entries in one 10-second step (a flush spans
   * one step, at a step's edge two), cut at ENTRIES_PER_CALL: the list, the
   * events and the counts appear together, and the client encodes one
   * command per run rather than two stream writes per decision.
   */
  private async writeTenant(tenantId: string, list: Folded[]): Promise<void> {
    // Runs of consecutive entries in one step, so the list and the events keep the order decisions were made in.
    const runs: [step: number, entries: Folded[]][] = [];
    for (const f of list) {
      const step = stepOf(f.d.at);
      const last = runs[runs.length - 1];
      if (last && last[0] === step && last[1].length < ENTRIES_PER_CALL) last[1].push(f);
      else runs.push([step, [f]]);
    }
    for (const [step, entries] of runs) {
      const args: (string | number)[] = [];
      for (const { d, count } of entries) {
        // A NAS asking again about a device counts per method and reason, not as a login (isSignIn).
        const flags = !isSignIn(d.method) ? '' : d.outcome === 'reject' && SERVER_SIDE.has(d.reason) ? 'se' : 's';
        args.push(d.at, d.outcome, d.method, d.reason, d.hotspotId, decisionSource(d), flags, count, d.mac ?? '');
      }
      const [minute, hour] = activityBuckets(tenantId, entries[0]!.d.at);
      await this.redis.recordDecisionsV3(
        keys.decisions(tenantId), keys.events(tenantId), minute, hour, keys.decisionStep(tenantId, step),
        DECISIONS_MAXLEN, 0, ACTIVITY_TTL.minute, ACTIVITY_TTL.hour, ACTIVITY_TTL.step,
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
