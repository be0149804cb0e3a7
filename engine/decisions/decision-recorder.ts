import { randomBytes } from 'node:crypto';
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
/** Decisions held at most between flushes, failed calls kept for a retry included: past it new ones are dropped and counted, never queued without limit. */
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
/** How long a failed call is tried again, at every flush, before its decisions are given up: about a Redis failover. */
export const RETRY_FOR_MS = 60_000;
/** How long Redis remembers a recorder's last call applied to a tenant (record-decisions-6.lua): past the last retry of a call. */
export const DECISION_CALLS_TTL_MS = 10 * 60_000;

/** The error codes whose catalogue status is 5xx: a reject for one of them is our failure (ACTIVITY.errors), not the guest's. */
const SERVER_SIDE = serverSideCodes();

/** Alike re-checks of one flush, folded into one entry: the newest one, and how many. */
interface Folded { d: SignInDecision; count: number }

/** One script call: a run of one tenant's entries in one 10-second step, with the number that makes a retry harmless. */
interface Call {
  tenantId: string;
  step: number;
  entries: Folded[];
  /** This recorder's calls are numbered 1, 2, ...; a tenant's reach Redis in that order. */
  seq: number;
  /** When a write of it first failed (ms); 0 until then. */
  failedAt: number;
}

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
 * tenant and step (record-decisions-6.lua: counts summed in Redis, one XADD
 * per entry to the list and one per sign-in to the events), at most
 * ENTRIES_PER_CALL entries a call. Every engine process has its own
 * recorder: the counts add up across processes.
 *
 * A call that fails (Redis away, a failover) is kept and sent again at the
 * next flushes, before anything newer of its tenant, for RETRY_FOR_MS; then
 * its decisions are given up (logged and counted). Calls are numbered, and
 * the script applies a call only when its number is past the tenant's last
 * applied one from this recorder: a call that reached Redis but whose
 * answer was lost, sent again by us or resent by ioredis on reconnecting,
 * counts and emits nothing twice. What a process that dies
 * holds (the last flush's worth, and calls waiting for a retry) is lost.
 */
export class DecisionRecorder implements DecisionSink {
  private buffer: SignInDecision[] = [];
  /** This flush's re-check groups, in the order they began. */
  private folded: Folded[] = [];
  /**
   * The same groups by hotspot, method and reason (outcome, source and step tell the few under one apart): lookups
   * by strings the caller holds, whose hashes V8 keeps, where one joined key per packet had to be built and hashed.
   */
  private foldIndex = new Map<string, Map<string, Map<string, Folded[]>>>();
  /** Failed calls, oldest first, to be sent again at the next flush. */
  private retrying: Call[] = [];
  private retryingEntries = 0;
  private flushing: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  /** This recorder's id in the tenants' applied-calls hashes, and the number of its last call. */
  private readonly id = randomBytes(6).toString('hex');
  private calls = 0;

  /** `also` gets every decision as it is recorded (the Prometheus counter). */
  constructor(
    private readonly redis: Redis,
    private readonly log: Logger,
    private readonly metrics: Metrics,
    private readonly also: DecisionSink,
    private readonly now: () => number = Date.now,
  ) {
    metrics.counter('dashboard_decisions_dropped_total', 'Sign-in decisions not recorded for the dashboard: the buffer was full, or Redis stayed away past the retry window');
    metrics.counter('dashboard_decision_flush_errors_total', 'Failed writes of buffered sign-in decisions to Redis (each is tried again)');
    this.timer = setInterval(() => void this.flushOnce(), DECISION_FLUSH_MS);
    this.timer.unref();
  }

  record(d: SignInDecision, count = 1): void {
    this.also.record(d, count);
    if (!isSignIn(d.method)) {
      const groups = this.groupsOf(d);
      const step = stepOf(d.at);
      for (const f of groups) {
        if (f.d.outcome === d.outcome && f.d.source === d.source && f.d.tenantId === d.tenantId && stepOf(f.d.at) === step) {
          f.d = d;
          f.count += count;
          return;
        }
      }
      if (this.folded.length < MAX_GROUPS) {
        const f = { d, count };
        groups.push(f);
        this.folded.push(f);
        return;
      }
      this.metrics.inc('dashboard_decisions_dropped_total');
      return;
    }
    if (this.buffer.length + this.retryingEntries >= MAX_BUFFERED) {
      this.metrics.inc('dashboard_decisions_dropped_total');
      return;
    }
    this.buffer.push(d);
  }

  /**
   * Writes everything recorded before the call (or holds it for a retry, as a flush does). A flush already on its
   * way holds only what was buffered when it began, so this one waits for it and then flushes the rest.
   */
  async flush(): Promise<void> {
    await this.flushing;
    await this.flushOnce();
  }

  /** Writes what is buffered and what failed before; one flush at a time (a slow one lets the next tick's decisions wait for the one after). */
  private flushOnce(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.buffer.length === 0 && this.folded.length === 0 && this.retrying.length === 0) return Promise.resolve();
    const batch: Folded[] = this.buffer.map((d) => ({ d, count: 1 }));
    for (const f of this.folded) batch.push(f);
    this.buffer = [];
    this.folded = [];
    this.foldIndex = new Map();
    const calls = this.retrying.concat(this.cut(batch));
    this.retrying = [];
    this.retryingEntries = 0;
    this.flushing = this.write(calls).finally(() => { this.flushing = null; });
    return this.flushing;
  }

  /** The re-check groups of d's hotspot, method and reason in this flush (made empty on first use). */
  private groupsOf(d: SignInDecision): Folded[] {
    let byMethod = this.foldIndex.get(d.hotspotId);
    if (byMethod === undefined) this.foldIndex.set(d.hotspotId, byMethod = new Map());
    let byReason = byMethod.get(d.method);
    if (byReason === undefined) byMethod.set(d.method, byReason = new Map());
    let groups = byReason.get(d.reason);
    if (groups === undefined) byReason.set(d.reason, groups = []);
    return groups;
  }

  /** Stops the timer and writes what is left; a call that fails now is given up. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
    this.giveUp(this.retrying);
    this.retrying = [];
    this.retryingEntries = 0;
  }

  /**
   * A flush's entries as script calls: per tenant, runs of consecutive entries in one 10-second step (a flush spans
   * one step, at a step's edge two), cut at ENTRIES_PER_CALL, so the list and the events keep the order decisions
   * were made in, and the client encodes one command per run rather than two stream writes per decision.
   */
  private cut(batch: Folded[]): Call[] {
    const calls: Call[] = [];
    const last = new Map<string, Call>();
    for (const f of batch) {
      const step = stepOf(f.d.at);
      const tail = last.get(f.d.tenantId);
      if (tail && tail.step === step && tail.entries.length < ENTRIES_PER_CALL) {
        tail.entries.push(f);
        continue;
      }
      const call: Call = { tenantId: f.d.tenantId, step, entries: [f], seq: ++this.calls, failedAt: 0 };
      calls.push(call);
      last.set(f.d.tenantId, call);
    }
    return calls;
  }

  /** Each tenant's calls in order, tenants side by side; from a tenant's first failure on, its calls wait for the next flush. */
  private async write(calls: Call[]): Promise<void> {
    const byTenant = new Map<string, Call[]>();
    for (const c of calls) {
      const list = byTenant.get(c.tenantId);
      if (list) list.push(c);
      else byTenant.set(c.tenantId, [c]);
    }
    const now = this.now();
    await Promise.all([...byTenant].map(async ([tenantId, list]) => {
      for (let i = 0; i < list.length; i++) {
        try {
          await this.writeCall(list[i]!);
        } catch (err) {
          this.metrics.inc('dashboard_decision_flush_errors_total');
          this.keep(list.slice(i), now, tenantId, err as Error);
          return;
        }
      }
    }));
  }

  private writeCall(c: Call): Promise<number> {
    const args: (string | number)[] = [];
    for (const { d, count } of c.entries) {
      // A NAS asking again about a device counts per method and reason, not as a login (isSignIn).
      const flags = !isSignIn(d.method) ? '' : d.outcome === 'reject' && SERVER_SIDE.has(d.reason) ? 'se' : 's';
      args.push(d.at, d.outcome, d.method, d.reason, d.hotspotId, decisionSource(d), flags, count, d.mac ?? '');
    }
    const [minute, hour] = activityBuckets(c.tenantId, c.entries[0]!.d.at);
    return this.redis.recordDecisionsV4(
      keys.decisions(c.tenantId), keys.events(c.tenantId), minute, hour, keys.decisionStep(c.tenantId, c.step),
      keys.decisionCalls(c.tenantId), DECISIONS_MAXLEN, DECISION_CALLS_TTL_MS, ACTIVITY_TTL.minute, ACTIVITY_TTL.hour, ACTIVITY_TTL.step,
      ACTIVITY.accepts, ACTIVITY.rejects, ACTIVITY.errors, this.id, c.seq, ...args);
  }

  /** Failed calls kept for the next flush, unless they have been failing for RETRY_FOR_MS. */
  private keep(calls: Call[], now: number, tenantId: string, err: Error): void {
    const kept: Call[] = [];
    const expired: Call[] = [];
    let fresh = false;
    for (const c of calls) {
      if (c.failedAt === 0) {
        c.failedAt = now;
        fresh = true;
      }
      (now - c.failedAt >= RETRY_FOR_MS ? expired : kept).push(c);
    }
    this.retrying.push(...kept);
    for (const c of kept) this.retryingEntries += c.entries.length;
    // Once per call that starts failing, not at every flush while Redis is away.
    if (fresh) {
      const waiting = kept.reduce((n, c) => n + decisionsIn(c), 0);
      this.log.warn({ tenant: tenantId, waiting, err: err.message }, 'could not record sign-in decisions for the dashboard: trying again');
    }
    this.giveUp(expired);
  }

  private giveUp(calls: Call[]): void {
    if (calls.length === 0) return;
    const lost = calls.reduce((n, c) => n + decisionsIn(c), 0);
    this.metrics.inc('dashboard_decisions_dropped_total', '', lost);
    this.log.warn({ tenants: [...new Set(calls.map((c) => c.tenantId))], lost }, 'sign-in decisions given up: Redis did not take them');
  }
}

function decisionsIn(c: Call): number {
  return c.entries.reduce((n, f) => n + f.count, 0);
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
