import { labelValues, type Metrics } from '../metrics.js';
import type { AuthMethod } from './method.js';

/** Where a decision was made: the portal's voucher form, an OTP code, or a NAS's Access-Request. */
export type DecisionSource = 'portal' | 'otp' | 'radius';

/**
 * How the guest tried to get in: a sign-in method, or for an Access-Request
 * that is no sign-in of its own, `mac_auth` (a device the NAS asks about by
 * its MAC: allowed while it has a live session) or `uam_login` (the one-time
 * login a portal handed a UAM gateway).
 */
export type DecisionMethod = AuthMethod | 'mac_auth' | 'uam_login';

/**
 * Whether a decision was a guest signing in (a method of their own) rather
 * than a NAS checking a device again (`mac_auth`, `uam_login`). Only sign-ins
 * feed the login and failure tiles and the failure-surge incident: in a
 * MAC-auth venue every device that joins the network is refused until its
 * guest signs in, and a stadium's gates opening would read as thousands of
 * failed logins.
 */
export function isSignIn(method: DecisionMethod): method is AuthMethod {
  return method !== 'mac_auth' && method !== 'uam_login';
}

/** One sign-in decision, as the dashboard counts them. */
export interface SignInDecision {
  tenantId: string;
  hotspotId: string;
  method: DecisionMethod;
  outcome: 'accept' | 'reject';
  /** '' for an accept; the error code for a reject (voucher_exhausted, device_blocked, otp_rate_limited, ...). */
  reason: string;
  /** ms */
  at: number;
  /** Unset: `otp` for a phone or e-mail code, `portal` for the portal's other forms (decisionSource). */
  source?: DecisionSource;
  /**
   * The device (canonical MAC) when the decision knows it: carried by the auth.* event for the
   * tenant's own integrations (webhooks), never by the dashboard's decisions list.
   */
  mac?: string;
}

const CODE_METHODS: ReadonlySet<DecisionMethod> = new Set(['sms_otp', 'msgapp_otp', 'email']);

/** A decision's source, its default filled in. */
export function decisionSource(d: SignInDecision): DecisionSource {
  return d.source ?? (CODE_METHODS.has(d.method) ? 'otp' : 'portal');
}

/**
 * Where the pipeline records each decision it reached for a known hotspot.
 * Called on the sign-in's path, so an implementation must not make the guest
 * wait: it buffers or counts, and never throws.
 */
export interface DecisionSink {
  /** `count`: that many of the same decision, the last at `d.at` (a RADIUS thread's re-checks, reported in batches); only re-checks (not isSignIn) come more than one at a time. */
  record(d: SignInDecision, count?: number): void;
}

/**
 * Passes on only the rejects: for the OTP service when its sessions start
 * through the sign-in pipeline, which records the accept itself (the
 * service's own accept would count every OTP sign-in twice).
 */
export function rejectsOnly(sink: DecisionSink): DecisionSink {
  return { record: (d, count) => { if (d.outcome === 'reject') sink.record(d, count); } };
}

/**
 * Counts decisions by method, outcome and reason, one label each:
 * `guestwifi_signin_decisions_total{method="voucher",outcome="accept",reason=""}`
 * (it was one packed label, `decision="voucher accept "`, which no query could take apart).
 */
export class MetricsDecisionSink implements DecisionSink {
  static readonly METRIC = 'signin_decisions_total';

  constructor(private readonly metrics: Metrics) {
    metrics.counter(MetricsDecisionSink.METRIC, 'Sign-in decisions by method, outcome and reason (empty for an accept)', 'method,outcome,reason');
  }

  /** method -> outcome -> reason -> the joined label value, made once: a decision is counted per RADIUS packet. */
  private readonly labels = new Map<string, Map<string, Map<string, string>>>();

  record(d: SignInDecision, count = 1): void {
    this.metrics.inc(MetricsDecisionSink.METRIC, this.labelOf(d), count);
  }

  private labelOf(d: SignInDecision): string {
    let byOutcome = this.labels.get(d.method);
    if (byOutcome === undefined) this.labels.set(d.method, byOutcome = new Map());
    let byReason = byOutcome.get(d.outcome);
    if (byReason === undefined) byOutcome.set(d.outcome, byReason = new Map());
    let label = byReason.get(d.reason);
    if (label === undefined) byReason.set(d.reason, label = labelValues(d.method, d.outcome, d.reason));
    return label;
  }
}
