import type { Metrics } from '../metrics.js';
import type { AuthMethod } from './method.js';

/** One sign-in decision, as the dashboard counts them. */
export interface SignInDecision {
  tenantId: string;
  hotspotId: string;
  method: AuthMethod;
  outcome: 'accept' | 'reject';
  /** '' for an accept; the error code for a reject (voucher_exhausted, device_blocked, otp_rate_limited, ...). */
  reason: string;
  /** ms */
  at: number;
}

/**
 * Where the pipeline records each decision it reached for a known hotspot.
 * Called on the sign-in's path, so an implementation must not make the guest
 * wait: it buffers or counts, and never throws.
 */
export interface DecisionSink {
  record(d: SignInDecision): void;
}

/** Counts decisions by method, outcome and reason: `signin_decisions_total{decision="voucher accept "}`. */
export class MetricsDecisionSink implements DecisionSink {
  static readonly METRIC = 'signin_decisions_total';

  constructor(private readonly metrics: Metrics) {
    metrics.counter(MetricsDecisionSink.METRIC, 'Sign-in decisions by "method outcome reason"', 'decision');
  }

  record(d: SignInDecision): void {
    this.metrics.inc(MetricsDecisionSink.METRIC, `${d.method} ${d.outcome} ${d.reason}`);
  }
}
