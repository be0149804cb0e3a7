import { labelValues } from '../engine/index.js';

/**
 * What the RADIUS layer needs from a metrics registry. The engine's `Metrics`
 * (Prometheus text registry) has this shape; it is not exported through
 * engine/index.ts, so radius/ states the shape instead of importing the class.
 */
export interface RadiusMetrics {
  counter(name: string, help: string, label?: string): void;
  inc(name: string, labelValue?: string, by?: number): void;
  gauge?(name: string, help: string, read: () => number): void;
  histogram?(name: string, help: string, label?: string): void;
  observe?(name: string, labelValue: string, value: number): void;
}

/** Metric names, registered once at construction. */
export const MetricName = {
  RECEIVED: 'radius_packets_received_total',
  REPLIES: 'radius_replies_total',
  DROPPED: 'radius_dropped_total',
  IN_FLIGHT: 'radius_requests_in_flight',
  DURATION: 'radius_request_duration_seconds',
  COA_REQUESTS: 'radius_coa_requests_total',
  COA_RESULTS: 'radius_coa_results_total',
  COA_DROPPED: 'radius_coa_responses_dropped_total',
} as const;

/** The latency histogram's label values (port, result), joined once. */
export const Timed = {
  ACCEPT: labelValues('auth', 'accept'),
  REJECT: labelValues('auth', 'reject'),
  AUTH_ERROR: labelValues('auth', 'error'),
  RESPONSE: labelValues('acct', 'response'),
  ACCT_ERROR: labelValues('acct', 'error'),
} as const;
