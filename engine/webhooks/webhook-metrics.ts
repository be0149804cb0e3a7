/**
 * The webhook counters' names and help: the dispatcher thread counts them
 * (webhook-dispatcher.ts), the main thread publishes what the thread reports
 * (dispatcher-worker.ts).
 */
export const DELIVERIES_METRIC = 'webhook_deliveries_total';
export const DEAD_LETTERS_METRIC = 'webhook_dead_letters_total';
/** The values of DELIVERIES_METRIC's `outcome` label. */
export const DELIVERY_OUTCOMES = ['delivered', 'failed', 'dead'] as const;
/** The counters' help, for the thread's registry and the main thread's. */
export const WEBHOOK_METRICS_HELP = {
  [DELIVERIES_METRIC]: 'Webhook delivery attempts by outcome (delivered, failed, dead)',
  [DEAD_LETTERS_METRIC]: 'Webhook deliveries dead-lettered after their last attempt (or a 410)',
  inFlight: 'Webhook attempts this process is sending now',
} as const;
