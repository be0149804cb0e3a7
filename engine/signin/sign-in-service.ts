import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { Metrics } from '../metrics.js';
import type { SignInMethod, SignInRequest, StartedSession } from './method.js';
import type { DecisionSink } from './decision-sink.js';
import { OtpCodeMethod } from './otp/otp-code-method.js';
import { OtpStore } from './otp/otp-store.js';
import type { CodeClaim } from './otp/types.js';
import type { Started, TermsSource } from './identity-method.js';
import { SponsorMethod, type SponsorApproval } from './sponsor/sponsor-method.js';
import { SponsorStore } from './sponsor/sponsor-store.js';
import { SignInPipeline, type DurabilityBarrier, type HotspotLookup, type SignInActors, type TenantLoader } from './sign-in-pipeline.js';
import { VoucherMethod, type Authorized, type GuessingLimitsSource, type VerifyRequest } from './voucher-method.js';

export interface SignInDeps {
  redis: Redis;
  hotspots: HotspotLookup;
  loader: TenantLoader;
  actors: SignInActors;
  decisions: DecisionSink;
  metrics: Metrics;
  /** Per-method session terms from hotspot settings (HOTSPOT_DEFAULT_TERMS until those exist). */
  terms: TermsSource;
  /** The tenant's voucher guessing limits (its sign-in settings). */
  guessing: GuessingLimitsSource;
  defaults: { sessionMinutes: number; idleSec: number };
  now: () => number;
  /** When REDIS_WAIT_REPLICAS is set: replicas acknowledge each sign-in before its answer. */
  barrier?: DurabilityBarrier;
}

/**
 * Guest sign-in, whatever the surface (portal, RADIUS PAP) and the method:
 * every call runs the one pipeline (sign-in-pipeline.ts) with its method.
 */
export class SignInService {
  private readonly pipeline: SignInPipeline;
  private readonly vouchers: VoucherMethod;
  private readonly codes: Record<CodeClaim['kind'], OtpCodeMethod>;
  private readonly sponsors: SponsorMethod;

  constructor(deps: SignInDeps) {
    this.pipeline = new SignInPipeline(deps.hotspots, deps.loader, deps.actors, deps.decisions, deps.now, deps.barrier);
    this.vouchers = new VoucherMethod(deps.redis, deps.metrics, deps.defaults, deps.guessing);
    const store = new OtpStore(deps.redis);
    this.codes = {
      phone: new OtpCodeMethod(store, deps.terms, deps.defaults, 'phone'),
      email: new OtpCodeMethod(store, deps.terms, deps.defaults, 'email'),
    };
    this.sponsors = new SponsorMethod(new SponsorStore(deps.redis), deps.terms, deps.defaults);
  }

  /**
   * A one-time code presented for a phone or an e-mail address: the code
   * check and the session start as one atomic step (OtpCodeMethod).
   * Implements the OTP area's SessionStarter port.
   */
  code(c: CodeClaim): Promise<Started> {
    return this.pipeline.run(this.codes[c.kind], c, { identity: c.username, hash: c.codeHash }, c.tenantId);
  }

  /**
   * A sponsor's approval of a guest's request: the link used up and the
   * device's session started as one atomic step (SponsorMethod). `req`
   * names the device and hotspot the request was filed for; `tenantId` the
   * tenant the link belongs to.
   */
  sponsor(req: SignInRequest, approval: SponsorApproval, tenantId: string): Promise<Started> {
    return this.pipeline.run(this.sponsors, req, approval, tenantId);
  }

  /** A voucher code, from the portal or as a RADIUS PAP User-Name. */
  voucher(req: VerifyRequest): Promise<Authorized> {
    return this.pipeline.run(this.vouchers, req, { code: req.code });
  }

  /**
   * A method whose check belongs to another area (room sign-in against the
   * hotel's in-house list: engine/pms/pms-method.ts), through the same
   * pipeline: hotspot, MAC, the method's limits and start, the decision.
   */
  via<In, S extends StartedSession, Out>(method: SignInMethod<In, S, Out>, req: SignInRequest, input: In): Promise<Out> {
    return this.pipeline.run(method, req, input);
  }
}
