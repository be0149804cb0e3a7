import type { Logger } from '../../logger.js';
import { labelValues, type Metrics } from '../../metrics.js';
import type { OtpChannelName, OtpMessage, SendResult } from './types.js';

export const PROVIDER_ERRORS_METRIC = 'otp_provider_errors_total';

/** A failure the adapter recognised: the provider's own code and what it means. */
export interface Failure {
  code: string;
  meaning: string;
  retryable: boolean;
}

/**
 * Turns a provider's refusal into one warn line (naming the provider, the
 * code and its meaning, never the recipient or a credential), one increment
 * of `otp_provider_errors_total{provider,code}`, and the SendResult the OTP
 * flow maps to `otp_send_failed`. The guest hears nothing of the code: it
 * may say our credentials were rejected.
 */
export class ProviderFailures {
  /** `observe` hears of each failure too (the dashboard's otp_provider_failing incident); it must not throw. */
  constructor(private readonly log: Logger, private readonly metrics: Metrics,
    private readonly observe: (tenantId: string, provider: string, code: string) => void = () => undefined) {
    metrics.counter(PROVIDER_ERRORS_METRIC, 'OTP sends a provider refused or that failed on the way, by provider and error code', 'provider,code');
  }

  report(channel: OtpChannelName, provider: string, msg: OtpMessage, f: Failure): SendResult {
    this.metrics.inc(PROVIDER_ERRORS_METRIC, labelValues(provider, f.code));
    this.observe(msg.tenantId, provider, f.code);
    this.log.warn({ channel, provider, code: f.code, meaning: f.meaning, tenant_id: msg.tenantId, request_id: msg.requestId },
      `${channel} provider ${provider} refused the send: code ${f.code} (${f.meaning})`);
    return { ok: false, provider, code: f.code, retryable: f.retryable, detail: f.meaning };
  }
}

/** A send that never got an answer (refused connection, DNS, time-out): retryable. */
export function networkFailure(err: unknown): Failure {
  const name = err instanceof Error ? err.name : '';
  return name === 'TimeoutError' || name === 'AbortError'
    ? { code: 'timeout', meaning: 'no answer within the deadline', retryable: true }
    : { code: 'network', meaning: `unreachable: ${err instanceof Error ? err.message : String(err)}`, retryable: true };
}

/** A reference that resolves to nothing: the operator's configuration is wrong, not the guest's request. */
export function missingSecret(ref: string): Failure {
  return { code: 'credentials_unset', meaning: `the variable named by ${ref} is unset, empty or not of the expected form`, retryable: false };
}
