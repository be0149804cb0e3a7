import { AppError, Errors } from '../errors.js';
import type { HotspotRef } from '../hotspots/hotspot-service.js';
import { normalizeMac } from '../ids.js';
import { keys } from '../redis/keys.js';
import type { SessionActors } from '../sessions/actor-ports.js';
import type { DecisionSink } from './decision-sink.js';
import type { SignInContext, SignInMethod, SignInRequest, StartedSession, StartOutcome } from './method.js';

/** The hotspot lookup the pipeline needs (HotspotService). */
export interface HotspotLookup {
  ref(id: string): Promise<HotspotRef | null>;
}

/**
 * Loads a tenant's vouchers and blocks into a Redis server and marks them
 * loaded with its run_id (VoucherService.loadIntoRedis).
 */
export interface TenantLoader {
  loadIntoRedis(tenantId: string, runId: string): Promise<number>;
}

/** Confirms a started session's writes are on Redis replicas before the guest hears of it (ReplicaBarrier). */
export interface DurabilityBarrier {
  /** `slotKey`: a key of the tenant's, so a cluster's barrier asks the master that took the writes. */
  confirm(slotKey: string): Promise<boolean>;
}

/** The part of the actor pool's port a sign-in uses: wake the hotspot's actor, tell it of a started session. */
export type SignInActors = Pick<SessionActors, 'wake' | 'request'>;

/**
 * The one sign-in path every method goes through: MAC normalisation, hotspot
 * and tenant lookup, the method's rate limits, its check and the session
 * start as one atomic step (with the block check, and a load of the tenant
 * into Redis when that step finds it missing), the decision recorded, the
 * answer.
 *
 * The MAC is checked before the hotspot is looked up, as the portal always
 * did: a malformed request is answered invalid_mac whatever the hotspot, and
 * the answers stay what they were (the hotspot is looked up after, only to
 * record the refusal). A hotspot the caller resolved already
 * (SignInRequest.hotspot: the portal sign-in) is not looked up again. A
 * decision is recorded only once the hotspot (and so the tenant) is known.
 *
 * The hotspot's actor is not told about each session: it finds the session
 * in Redis when the NAS first asks about the device (Access-Request or
 * accounting), and its sweep of the hotspot's live set ends the session on
 * time even if the NAS never does. The actor is only woken, once per hotspot
 * per process. That keeps a sign-in to one Redis script and no thread hop,
 * which is what a stadium at kick-off needs. Only a replaced session (the
 * device signed in again) is handed to the actor to end.
 */
export class SignInPipeline {
  private readonly loading = new Map<string, Promise<number>>();

  constructor(
    private readonly hotspots: HotspotLookup,
    private readonly loader: TenantLoader,
    private readonly actors: SignInActors,
    private readonly decisions: DecisionSink,
    private readonly now: () => number,
    /** REDIS_WAIT_REPLICAS: no answer until replicas hold the start record; absent: Redis's own fsync policy. */
    private readonly barrier?: DurabilityBarrier,
  ) {}

  /**
   * Signs a device in with `method`. `expectTenant`, when given, is the
   * tenant the caller already knows the guest by (an OTP identity): a
   * hotspot of another tenant is answered as unknown.
   */
  async run<In, S extends StartedSession, Out>(method: SignInMethod<In, S, Out>, req: SignInRequest, input: In, expectTenant?: string): Promise<Out> {
    const mac = normalizeMac(req.mac);
    if (!mac) throw await this.invalidMac(method.name, req);
    const hotspot = await this.resolve(req);
    if (!hotspot || (expectTenant !== undefined && hotspot.tenantId !== expectTenant)) throw Errors.HOTSPOT_NOT_FOUND();
    // A code a NAS sent as User-Name is a RADIUS decision; otherwise the method's own source (portal or OTP).
    const viaNas = req.viaNas === true;
    const ctx: SignInContext = {
      hotspot, tenantId: hotspot.tenantId, mac, ip: req.ip, ssid: req.ssid, source: req.source ?? '', viaNas, now: this.now(),
      device: req.device ?? 'other',
    };
    const decide = (outcome: 'accept' | 'reject', reason: string, name = method.name): void => this.decisions.record(viaNas
      ? { tenantId: ctx.tenantId, hotspotId: hotspot.id, method: name, outcome, reason, at: ctx.now, source: 'radius', mac }
      : { tenantId: ctx.tenantId, hotspotId: hotspot.id, method: name, outcome, reason, at: ctx.now, mac });

    let result: StartOutcome<S>;
    try {
      await method.limit?.(ctx, input);
      result = await method.start(ctx, input);
      if (result.kind === 'not_loaded') {
        await this.ensureLoaded(ctx.tenantId, result.runId);
        result = await method.start(ctx, input);
      }
    } catch (err) {
      if (err instanceof AppError && err.status < 500) decide('reject', err.code);
      throw err;
    }
    method.settled?.(result);
    switch (result.kind) {
      case 'refused':
        decide('reject', result.error.code);
        throw result.error;
      // Redis restarted or failed over again during the load: nothing was used; the guest retries.
      case 'not_loaded':
        throw Errors.SERVICE_UNAVAILABLE('Voucher store');
      case 'started':
        break;
    }
    const s = result.session;
    // REDIS_WAIT_REPLICAS: no word to the guest, nor a CoA (which lets the device in too), before
    // the replicas hold the start. The session is live on the primary either way, so its actor is
    // told of it now; the guest's retry gets it back (reused) and, on a MAC-authentication
    // gateway, the CoA then.
    const durable = !this.barrier || await this.barrier.confirm(keys.outbox(ctx.tenantId));
    // MAC authentication: the NAS may hold the device in a walled garden until it next asks; the actor's CoA opens it now.
    const coa = durable && hotspot.portal.gateway === 'mac_auth' && req.viaNas !== true;
    if (!s.reused) {
      this.actors.wake(ctx.tenantId, hotspot.id, hotspot.timezone);
      if (s.replaced || coa) this.started(ctx, s, coa);
    } else if (coa && this.barrier) {
      // The CoA of this session may have waited on replicas that did not answer.
      this.started(ctx, s, true);
    }
    if (!durable) throw Errors.SERVICE_UNAVAILABLE('Session store replica');
    decide('accept', '', s.method);
    return method.answer(ctx, s);
  }

  /**
   * A malformed MAC, answered invalid_mac as always (before any lookup decides the answer), and
   * recorded as a refusal when the hotspot is known, as every other refusal of a sign-in is (and as
   * the OTP service records its own): an auth.failure with no device. Malformed requests only.
   */
  /** The request's hotspot: the one the caller resolved already (the portal sign-in), else looked up. */
  private resolve(req: SignInRequest): Promise<HotspotRef | null> {
    return req.hotspot?.id === req.hotspotId ? Promise.resolve(req.hotspot) : this.hotspots.ref(req.hotspotId);
  }

  private async invalidMac(name: SignInMethod<unknown, StartedSession, unknown>['name'], req: SignInRequest): Promise<AppError> {
    const e = Errors.INVALID_MAC(req.mac);
    const hotspot = await this.resolve(req).catch(() => null);
    if (hotspot) {
      this.decisions.record({
        tenantId: hotspot.tenantId, hotspotId: hotspot.id, method: name, outcome: 'reject', reason: e.code, at: this.now(),
        ...(req.viaNas === true ? { source: 'radius' as const } : {}),
      });
    }
    return e;
  }

  /** Tells the hotspot's actor of a started session: the one it replaced to end, a CoA to send. */
  private started(ctx: SignInContext, s: StartedSession, coa: boolean): void {
    const { hotspot, tenantId: tenant, mac } = ctx;
    this.actors.request({ t: 'started', tenant, hs: hotspot.id, tz: hotspot.timezone, sid: s.sessionId, mac, replaced: s.replaced, ...(coa ? { coa } : {}) })
      .catch(() => undefined);
  }

  /**
   * One load per tenant and Redis server at a time, however many guests
   * arrive while it runs. A guest whose not_loaded came from another server
   * (one that restarted meanwhile) does not join a load that will mark the
   * tenant loaded into the old one: it starts its own.
   */
  private ensureLoaded(tenantId: string, runId: string): Promise<number> {
    const key = `${tenantId} ${runId}`;
    let p = this.loading.get(key);
    if (!p) {
      p = this.loader.loadIntoRedis(tenantId, runId).finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    return p;
  }
}
