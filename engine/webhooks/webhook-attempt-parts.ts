import { TargetNotAllowedError } from '../net/outbound-target.js';

/**
 * The pure parts of one webhook attempt (webhook-dispatcher.ts): the body it
 * sends, how it reads a Retry-After, and what it records of a failure.
 */

/**
 * The body of a delivery, `{id, type, created_at, tenant_id, data}`, the
 * same bytes on every attempt: the event's data is spliced in as the stream
 * holds it (JSON written by its producer), not parsed and written again.
 */
export function deliveryBody(tenantId: string, st: { e: string; t: string; ts: number }, data: string): string {
  let json = data;
  try {
    const v: unknown = JSON.parse(data);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) json = '{}';
  } catch {
    json = '{}';
  }
  return `{"id":${JSON.stringify(`evt_${st.e}`)},"type":${JSON.stringify(st.t)},"created_at":"${new Date(st.ts).toISOString()}",`
    + `"tenant_id":${JSON.stringify(tenantId)},"data":${json}}`;
}

/** Retry-After as ms from now: delta-seconds or an HTTP date; null when neither. */
export function retryAfterMs(value: string, now: number): number | null {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, at - now) : null;
}

/** An attempt's error for the deliveries list: what happened, never the request's headers or body. */
export function failureText(err: Error, deadlineMs: number): string {
  if (err.name === 'TimeoutError') return `timeout: no answer within ${deadlineMs / 1000} s`;
  if (err instanceof TargetNotAllowedError) return `target_not_allowed: ${err.why}`;
  const code = (err as NodeJS.ErrnoException).code;
  return (code ? `${code}: ` : '') + err.message.slice(0, 200);
}
