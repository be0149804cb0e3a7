// Over 400 lines: a tenant's lane (route, claim, pump, attempt, release) is one state machine over the
// same private fields; split in two, each half would reach into the other's.
import { randomBytes } from 'node:crypto';
import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import { keys, WEBHOOK_GROUP } from '../redis/keys.js';
import { signedHeaders } from './webhook-signature.js';
import type { WebhookStore, WebhookTarget } from './webhook-store.js';
import type { WebhookTransport } from './webhook-transport.js';
import { WebhookSettler } from './webhook-settler.js';
import { deliveryBody, failed, failureText, judge, type AttemptOutcome, type AttemptRules } from './webhook-attempt-parts.js';
import { DEAD_LETTERS_METRIC, DELIVERIES_METRIC, WEBHOOK_METRICS_HELP } from './webhook-metrics.js';

/** The contract's webhook rules: "The receiver must answer 200 within 5 seconds ... retried, 3 attempts". */
export const ATTEMPT_DEADLINE_MS = 5_000;
export const MAX_ATTEMPTS = 3;
/** A claim lapses after this: past an attempt's deadline with room, so only a dead or stalled process loses one. */
const LEASE_MS = ATTEMPT_DEADLINE_MS * 2 + 5_000;
/** Events routed per script call; a tenant with more waiting is routed again in the same turn, up to ROUTE_ROUNDS. */
const ROUTE_COUNT = 500;
const ROUTE_ROUNDS = 8;
/**
 * A tenant whose events are flowing (its last route read some) is routed and
 * claimed again this soon after, on a timer of its own, until a whole
 * WEBHOOK_POLL_MS passes without a new event: an event then waits about
 * this long before it can be claimed, not up to a poll. Idle tenants cost
 * only the poll.
 */
const HOT_MS = 10;
/** Delivered deliveries are kept this long (the list, a redelivery); dead ones longer. */
const KEEP_DELIVERED_MS = 24 * 3_600_000;
const KEEP_DEAD_MS = 7 * 24 * 3_600_000;
/** Attempts kept per subscription (approximately) for GET /v1/webhooks/{id}/deliveries. */
export const WEBHOOK_ATTEMPTS_MAXLEN = 1_000;
/** How long a subscription's URL and secrets are cached per process (a rotation elsewhere is seen within this). */
const TARGET_TTL_MS = 5_000;
/** How often the list of tenants with subscriptions is read, and the Redis mirror reconciled. */
const TENANTS_EVERY_MS = 2_000;
const RECONCILE_EVERY_MS = 15_000;
const WARN_EVERY_MS = 10_000;

export interface DispatcherSettings {
  /** First retry's back-off, ms; doubles per attempt, with jitter (WEBHOOK_RETRY_BASE_MS). */
  retryBaseMs: number;
  /** Attempts in flight per tenant in this process (WEBHOOK_TENANT_CONCURRENCY). */
  tenantConcurrency: number;
  /** How often owed deliveries are looked for, ms (WEBHOOK_POLL_MS). */
  pollMs: number;
  /** The dispatcher thread's nice value (WEBHOOK_THREAD_NICE; dispatcher-thread.ts); absent or 0: as the process. */
  threadNice?: number;
}

/** The state a claim hands over (claim-webhook-deliveries-6.lua, or route-webhook-events-5.lua's claim). */
interface Claimed { s: string; e: string; t: string; ts: number; n: number }

/** A claimed delivery waiting for a free slot: `at` when it was claimed. */
interface Ready { id: string; st: Claimed; data: string; token: string; at: number }

/**
 * One tenant's deliveries in this process: claimed ones waiting for a slot,
 * attempts under way, whether a claim is being asked for, and whether the
 * last claim found fewer than it asked (nothing more is claimed until the
 * next turn has routed new events).
 */
interface Lane {
  ready: Ready[]; sending: number; claiming: boolean; dry: boolean;
  /** A route of this tenant is under way (the poll's turn or a hot one): one at a time. */
  routing: boolean;
  /** Until when the tenant is hot (routed every HOT_MS), and its timer. */
  hotUntil: number; hot: NodeJS.Timeout | undefined;
}


/**
 * A claimed delivery is sent only this soon after its claim; one older is
 * released (due again, its attempt not counted), so no attempt can outlive
 * its claim's lease and meet another process's claim of the same delivery.
 */
const SEND_WITHIN_MS = LEASE_MS - ATTEMPT_DEADLINE_MS - 3_000;

/**
 * Sends the tenants' owed webhook deliveries, in every engine process, on a
 * thread of its own (dispatcher-thread.ts; DispatcherWorker on the main side).
 * Each turn, per tenant with a subscription: new events are routed into
 * owed deliveries (route-webhook-events-5.lua: read, queue and advance the
 * group in one step, claiming the new deliveries the lane has room for when
 * nothing older is due), then deliveries left due are claimed
 * (claim-webhook-deliveries-6.lua), up to twice the tenant's concurrency in
 * this process: as many attempts as it allows are under way, and as many
 * claimed wait for the next free slot, so a slot freed by an answer is
 * refilled at once, not after a round trip to Redis. A slow receiver holds
 * at most its tenant's slots and delays no other tenant. A claim is atomic
 * across processes; outcomes are settled with their claim's token, in
 * batches per tenant (webhook-settler.ts), and a 2xx leaves the queue in the
 * same step as it is recorded. docs/webhooks.md has the whole.
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined;
  private turn: Promise<void> | null = null;
  private tenants: string[] = [];
  private tenantsAt = 0;
  private reconciledAt = 0;
  private readonly lanes = new Map<string, Lane>();
  private readonly refilling = new Set<string>();
  private readonly attempts = new Set<Promise<void>>();
  private readonly hotTurns = new Set<Promise<void>>();
  private readonly targets = new Map<string, { at: number; target: Promise<WebhookTarget | null | 'secret_unavailable'> }>();
  private readonly settler: WebhookSettler;
  private stopped = false;
  private warnedAt = 0;

  constructor(
    private readonly redis: Redis,
    private readonly store: WebhookStore,
    private readonly transport: WebhookTransport,
    private readonly settings: DispatcherSettings,
    private readonly metrics: Metrics,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.settler = new WebhookSettler(redis, { deliveredMs: KEEP_DELIVERED_MS, deadMs: KEEP_DEAD_MS, attemptsMaxlen: WEBHOOK_ATTEMPTS_MAXLEN }, now);
    metrics.counter(DELIVERIES_METRIC, WEBHOOK_METRICS_HELP[DELIVERIES_METRIC], 'outcome');
    metrics.counter(DEAD_LETTERS_METRIC, WEBHOOK_METRICS_HELP[DEAD_LETTERS_METRIC]);
  }

  /** Attempts being sent now. */
  get inFlight(): number {
    return this.attempts.size;
  }

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      this.turn = this.runTurn().catch((err: Error) => this.warn(err, 'webhook turn failed'))
        .finally(() => {
          this.turn = null;
          if (!this.stopped) this.timer = setTimeout(tick, this.settings.pollMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /** A subscription changed in this process: read the tenants again at the next turn, drop cached targets. */
  changed(): void {
    this.tenantsAt = 0;
    this.targets.clear();
  }

  /**
   * Stops claiming; gives back what was claimed and not sent (due again at
   * once, for any process), and lets attempts under way finish (each within
   * its deadline) so they are settled, not left to their lease.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.turn;
    for (const lane of this.lanes.values()) clearTimeout(lane.hot);
    await Promise.allSettled([...this.hotTurns]);
    for (const [tenantId, lane] of this.lanes) {
      for (const r of lane.ready.splice(0)) this.release(tenantId, r);
    }
    await Promise.allSettled([...this.attempts]);
    await this.settler.drained();
    this.transport.close();
  }

  /** One turn: route and claim for every tenant with a subscription. Exposed for tests. */
  async runTurn(): Promise<void> {
    const now = this.now();
    // Postgres away: the mirror and the tenant list wait, deliveries already owed in Redis go on.
    if (now - this.reconciledAt >= RECONCILE_EVERY_MS) {
      this.reconciledAt = now;
      await this.store.reconcile().catch((err: Error) => this.warn(err, 'webhook subscriptions not reconciled'));
    }
    if (now - this.tenantsAt >= TENANTS_EVERY_MS) {
      this.tenantsAt = now;
      this.tenants = await this.store.activeTenants().catch((err: Error) => {
        this.warn(err, 'webhook tenants not read');
        return this.tenants;
      });
    }
    // One tenant's failure (its script refused) does not hold up the others.
    for (const r of await Promise.allSettled(this.tenants.map((t) => this.tenantTurn(t)))) {
      if (r.status === 'rejected') this.warn(r.reason as Error, 'webhook tenant turn failed');
    }
  }

  /** A warning at most every WARN_EVERY_MS: a turn runs every WEBHOOK_POLL_MS, and an outage must not flood the log. */
  private warn(err: Error, msg: string): void {
    const now = Date.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = now;
    this.log.warn({ err: err.message }, msg);
  }

  private lane(tenantId: string): Lane {
    let lane = this.lanes.get(tenantId);
    if (!lane) this.lanes.set(tenantId, (lane = { ready: [], sending: 0, claiming: false, dry: false, routing: false, hotUntil: 0, hot: undefined }));
    return lane;
  }

  /**
   * Routes the tenant's new events, claiming in the same step as many of the
   * new deliveries as the lane has room for (route-webhook-events-5.lua),
   * then claims what the route left due. The poll's turn always claims after
   * (the claim script also forgets finished deliveries).
   */
  private async tenantTurn(tenantId: string, hot = false): Promise<void> {
    const lane = this.lane(tenantId);
    if (this.stopped) return;
    if (lane.routing) {
      // Another turn of this tenant is routing: the poll's turn still claims (retries come due), a hot one leaves it.
      if (!hot) {
        lane.dry = false;
        await this.claim(tenantId);
      }
      return;
    }
    lane.routing = true;
    // Claimed while routing only when no claim of this lane is under way: the lane's bound on claimed deliveries holds.
    const claiming = !lane.claiming;
    if (claiming) lane.claiming = true;
    let read = 0;
    let dueLeft = false;
    try {
      for (let round = 0; round < ROUTE_ROUNDS; round++) {
        const want = claiming && !this.stopped ? Math.max(0, this.room(lane)) : 0;
        const token = want > 0 ? randomBytes(9).toString('base64url') : '';
        const at = this.now();
        const [n, , due, ...claimed] = await this.redis.routeWebhookEventsV2(keys.events(tenantId), keys.webhookSubs(tenantId),
          keys.webhookQueue(tenantId), keys.webhookDeliveries(tenantId), keys.webhookBodies(tenantId), WEBHOOK_GROUP, ROUTE_COUNT, at,
          want, LEASE_MS, token);
        this.take(lane, claimed, token, at);
        read += n;
        dueLeft = due === 1;
        if (n < ROUTE_COUNT) break;
      }
    } finally {
      lane.routing = false;
      if (claiming) lane.claiming = false;
    }
    if (read > 0) lane.hotUntil = this.now() + this.settings.pollMs;
    this.heat(tenantId, lane);
    if (this.stopped) {
      for (const r of lane.ready.splice(0)) this.release(tenantId, r);
      return;
    }
    // Deliveries left due (or, at the poll's turn, retries that may have come due) are claimed after; else what the route made, it claimed.
    const more = !hot || dueLeft;
    if (more) lane.dry = false;
    else if (claiming) lane.dry = true;
    this.pump(tenantId);
    if (more) await this.claim(tenantId);
  }

  /** A hot tenant's next turn in HOT_MS (one timer per tenant), while it is hot. */
  private heat(tenantId: string, lane: Lane): void {
    if (this.stopped || lane.hot || this.now() >= lane.hotUntil) return;
    lane.hot = setTimeout(() => {
      lane.hot = undefined;
      if (this.stopped) return;
      const p: Promise<void> = this.tenantTurn(tenantId, true)
        .catch((err: Error) => this.warn(err, 'webhook tenant turn failed'))
        .finally(() => this.hotTurns.delete(p));
      this.hotTurns.add(p);
    }, HOT_MS);
  }

  /**
   * Claims due deliveries up to twice the tenant's concurrency, counting
   * those waiting and under way, and starts as many attempts as slots are
   * free. One claim per tenant at a time.
   */
  private async claim(tenantId: string): Promise<void> {
    const lane = this.lane(tenantId);
    const want = this.room(lane);
    if (this.stopped || lane.claiming || want <= 0) return;
    lane.claiming = true;
    try {
      const token = randomBytes(9).toString('base64url');
      const at = this.now();
      const claimed = await this.redis.claimWebhookDeliveriesV1(keys.webhookQueue(tenantId), keys.webhookDeliveries(tenantId),
        keys.webhookBodies(tenantId), keys.webhookDone(tenantId), keys.webhookDead(tenantId), keys.webhookSubs(tenantId),
        at, LEASE_MS, want, token, MAX_ATTEMPTS, KEEP_DEAD_MS);
      this.take(lane, claimed, token, at);
      lane.dry = claimed.length / 3 < want;
    } finally {
      lane.claiming = false;
    }
    if (this.stopped) {
      for (const r of lane.ready.splice(0)) this.release(tenantId, r);
      return;
    }
    this.pump(tenantId);
  }

  /** How many more deliveries the lane may hold claimed: twice the tenant's concurrency, counting those waiting and under way. */
  private room(lane: Lane): number {
    return 2 * this.settings.tenantConcurrency - lane.ready.length - lane.sending;
  }

  /** A claim's reply (id, state JSON, data, ...) into the lane's waiting deliveries. */
  private take(lane: Lane, claimed: string[], token: string, at: number): void {
    for (let i = 0; i + 2 < claimed.length; i += 3) {
      lane.ready.push({ id: claimed[i]!, st: JSON.parse(claimed[i + 1]!) as Claimed, data: claimed[i + 2]!, token, at });
    }
  }

  /** Starts attempts while the tenant has free slots and claimed deliveries; asks for more when few are left. */
  private pump(tenantId: string): void {
    const lane = this.lane(tenantId);
    while (!this.stopped && lane.sending < this.settings.tenantConcurrency && lane.ready.length > 0) {
      const r = lane.ready.shift()!;
      if (this.now() - r.at > SEND_WITHIN_MS) this.release(tenantId, r);
      else this.send(tenantId, r);
    }
    if (!lane.dry && lane.ready.length < this.settings.tenantConcurrency) this.refill(tenantId);
  }

  /** A claimed delivery not sent: due again at once, its attempt not counted. */
  private release(tenantId: string, r: Ready): void {
    this.settler.settle(tenantId, { id: r.id, token: r.token, webhookId: r.st.s, kind: 'released', dueMs: 0, code: '', durationMs: 0, error: '' })
      .catch((err: Error) => this.warn(err, 'webhook claim not given back (it lapses)'));
  }

  private send(tenantId: string, r: Ready): void {
    const lane = this.lane(tenantId);
    lane.sending++;
    let freed = false;
    const free = (): void => {
      if (freed) return;
      freed = true;
      lane.sending--;
      this.pump(tenantId);
    };
    const p: Promise<void> = this.attempt(tenantId, r, free)
      .catch((err: Error) => this.log.warn({ err: err.message, tenant_id: tenantId, delivery: r.id }, 'webhook attempt not settled (its claim lapses and it is sent again)'))
      .finally(() => {
        this.attempts.delete(p);
        free();
      });
    this.attempts.add(p);
  }

  /**
   * More claimed deliveries are wanted: claimed in the next turn of the
   * event loop, so slots freed together share one claim.
   */
  private refill(tenantId: string): void {
    if (this.stopped || this.refilling.has(tenantId)) return;
    this.refilling.add(tenantId);
    setImmediate(() => {
      this.refilling.delete(tenantId);
      this.claim(tenantId).catch((err: Error) => this.warn(err, 'webhook claim failed'));
    });
  }

  /** One attempt; `free` gives its slot back as soon as the receiver has answered (the record follows). */
  private async attempt(tenantId: string, r: Ready, free: () => void): Promise<void> {
    const { id, st, token } = r;
    const target = await this.target(tenantId, st.s);
    const settle = (o: AttemptOutcome, durationMs: number): Promise<boolean> => this.settler.settle(tenantId,
      { id, token, webhookId: st.s, kind: o.kind, dueMs: o.dueMs, code: o.code, durationMs, error: o.error });
    if (target === 'secret_unavailable') {
      // Nothing to sign with: dead-lettered (listed, counted, redeliverable once the key is back), not dropped.
      const o: AttemptOutcome = { kind: 'dead', code: '', error: 'secret_unavailable: the subscription\'s secret opens under no key given', dueMs: 0, gone: false };
      if (await settle(o, 0)) {
        this.metrics.inc(DELIVERIES_METRIC, 'dead');
        this.metrics.inc(DEAD_LETTERS_METRIC);
        this.warn(new Error(o.error), 'webhook delivery dead-lettered');
      }
      return;
    }
    if (!target) {
      // Deleted or disabled: nothing is owed to it any more.
      await this.settler.settle(tenantId, { id, token, webhookId: st.s, kind: 'dropped', dueMs: 0, code: '', durationMs: 0, error: '' });
      return;
    }
    const body = deliveryBody(tenantId, st, r.data);
    const headers = signedHeaders(id, Math.floor(this.now() / 1000), body, target.secrets);
    const started = performance.now();
    let outcome: AttemptOutcome;
    try {
      const a = await this.transport.post(target.url, headers, body, ATTEMPT_DEADLINE_MS);
      outcome = judge(this.rules(st.n), a.status, a.retryAfter);
    } catch (err) {
      outcome = failed(this.rules(st.n), '', failureText(err as Error, ATTEMPT_DEADLINE_MS));
    }
    const duration = Math.round(performance.now() - started);
    free();
    if (!(await settle(outcome, duration))) return;
    this.metrics.inc(DELIVERIES_METRIC, outcome.kind === 'retry' ? 'failed' : outcome.kind);
    if (outcome.kind === 'dead') {
      this.metrics.inc(DEAD_LETTERS_METRIC);
      this.log.warn({ tenant_id: tenantId, webhook_id: st.s, delivery: id, code: outcome.code, error: outcome.error }, 'webhook delivery dead-lettered');
    }
    if (outcome.gone) {
      await this.store.disable(tenantId, st.s, 'gone');
      this.targets.delete(`${tenantId}/${st.s}`);
      this.log.info({ tenant_id: tenantId, webhook_id: st.s }, 'webhook disabled: the receiver answered 410 Gone');
    }
  }

  /** What the judging of an `n`th attempt's answer needs. */
  private rules(n: number): AttemptRules {
    return { n, maxAttempts: MAX_ATTEMPTS, retryBaseMs: this.settings.retryBaseMs, now: this.now() };
  }

  private target(tenantId: string, id: string): Promise<WebhookTarget | null | 'secret_unavailable'> {
    const key = `${tenantId}/${id}`;
    const hit = this.targets.get(key);
    const now = this.now();
    if (hit && now - hit.at < TARGET_TTL_MS) return hit.target;
    const target = this.store.target(tenantId, id);
    target.catch(() => this.targets.delete(key));
    if (this.targets.size >= 10_000) this.targets.clear();
    this.targets.set(key, { at: now, target });
    return target;
  }
}
