import type { Logger } from '../../logger.js';
import { labelValues, type Metrics } from '../../metrics.js';
import type { OtpChannelName, OtpMessage, SendResult } from './types.js';

export const PROVIDER_ERRORS_METRIC = 'otp_provider_errors_total';

/**
 * What went wrong, from a fixed set: the only words of a failure that reach
 * a metric label (`otp_provider_errors_total{provider,code}`) or an incident.
 * A provider's own code or text never does: it is whatever the far end
 * chose to send (unbounded label values, text in the operator's incident
 * list), and the far end may be a URL a tenant chose.
 */
export const FAILURE_KINDS = [
  'timeout', 'connect_refused', 'dns', 'tls', 'network', 'target_not_allowed', 'redirect',
  'credentials_unset', 'credentials_rejected', 'recipient_refused', 'rate_limited', 'refused', 'provider_error',
  'http_4xx', 'http_5xx', 'bad_answer', 'smtp_4xx', 'smtp_5xx',
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** A failure the adapter recognised: its kind, the provider's own code (for the log) and what it means. */
export interface Failure {
  kind: FailureKind;
  /** The provider's code as it answered (cut to 32 safe characters by report()); logs only. */
  code: string;
  meaning: string;
  retryable: boolean;
}

/**
 * Turns a provider's refusal into one warn line (naming the provider, the
 * kind, the provider's code and its meaning, never the recipient or a
 * credential), one increment of `otp_provider_errors_total{provider,code}`
 * with the kind as `code`, and the SendResult the OTP
 * flow maps to `otp_send_failed`. The guest hears nothing of the code: it
 * may say our credentials were rejected.
 */
export class ProviderFailures {
  /** `observe` hears of each failure too (the dashboard's otp_provider_failing incident); it must not throw. */
  constructor(private readonly log: Logger, private readonly metrics: Metrics,
    private readonly observe: (tenantId: string, provider: string, code: string) => void = () => undefined) {
    metrics.counter(PROVIDER_ERRORS_METRIC, 'OTP sends a provider refused or that failed on the way, by provider and failure kind (FAILURE_KINDS)', 'provider,code');
  }

  report(channel: OtpChannelName, provider: string, msg: OtpMessage, f: Failure): SendResult {
    const code = f.code.replace(/[^A-Za-z0-9_.:-]/g, '?').slice(0, 32);
    this.metrics.inc(PROVIDER_ERRORS_METRIC, labelValues(provider, f.kind));
    this.observe(msg.tenantId, provider, f.kind);
    this.log.warn({ channel, provider, kind: f.kind, code, meaning: f.meaning, tenant_id: msg.tenantId, otp_request_id: msg.requestId },
      `${channel} provider ${provider} refused the send: ${f.kind}, code ${code} (${f.meaning})`);
    return { ok: false, provider, kind: f.kind, code, retryable: f.retryable, detail: f.meaning };
  }
}

/** TLS failures by Node's error codes: certificate problems and handshake errors. */
const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** A send that never got an answer (refused connection or target, DNS, TLS, time-out): retryable unless the target is refused. */
export function networkFailure(err: unknown): Failure {
  const e = err instanceof Error ? (err as NodeJS.ErrnoException) : null;
  const name = e?.name ?? '';
  const code = e?.code ?? '';
  const meaning = `unreachable: ${e ? e.message : String(err)}`;
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'ETIMEDOUT') return { kind: 'timeout', code: 'timeout', meaning: 'no answer within the deadline', retryable: true };
  if (name === 'TargetNotAllowedError') return { kind: 'target_not_allowed', code, meaning: e!.message, retryable: false };
  const kind: FailureKind = code === 'ECONNREFUSED' ? 'connect_refused'
    : code === 'ENOTFOUND' || code === 'EAI_AGAIN' ? 'dns'
      : TLS_CODE.test(code) ? 'tls' : 'network';
  return { kind, code: code || 'network', meaning, retryable: true };
}

/** The kind of an HTTP answer that carried no provider code the adapter knows. */
export function httpKind(status: number): FailureKind {
  if (status >= 300 && status < 400) return 'redirect';
  if (status === 401 || status === 403) return 'credentials_rejected';
  if (status === 429) return 'rate_limited';
  if (status >= 400 && status < 500) return 'http_4xx';
  return status >= 500 ? 'http_5xx' : 'bad_answer';
}

/** A reference that resolves to nothing: the operator's configuration is wrong, not the guest's request. */
export function missingSecret(ref: string): Failure {
  return { kind: 'credentials_unset', code: 'credentials_unset', meaning: `the variable named by ${ref} is unset, empty or not of the expected form`, retryable: false };
}
