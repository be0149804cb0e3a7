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

/** A Retry-After further out than this cannot be honoured within the budget: the delivery is dead-lettered. */
const MAX_RETRY_AFTER_MS = 3_600_000;

/** What an attempt's end means: delivered, retried at `dueMs`, or dead (`gone`: a 410, the subscription is disabled). */
export interface AttemptOutcome { kind: 'delivered' | 'retry' | 'dead'; code: string; error: string; dueMs: number; gone: boolean }

/** The `n`th attempt of `maxAttempts`, the first retry's back-off, and the time it ended. */
export interface AttemptRules { n: number; maxAttempts: number; retryBaseMs: number; now: number }

/** What an answer means for the delivery: its `n`th attempt answered `status`. */
export function judge(r: AttemptRules, status: number, retryAfter: string): AttemptOutcome {
  const code = String(status);
  if (status >= 200 && status < 300) return { kind: 'delivered', code, error: '', dueMs: 0, gone: false };
  if (status === 410) return { kind: 'dead', code, error: 'gone: the subscription is disabled', dueMs: 0, gone: true };
  if (status >= 300 && status < 400) return failed(r, code, 'redirect (not followed)');
  if ((status === 429 || status === 503) && retryAfter !== '') {
    const wait = retryAfterMs(retryAfter, r.now);
    if (wait !== null) {
      if (wait > MAX_RETRY_AFTER_MS) return { kind: 'dead', code, error: `retry-after beyond ${MAX_RETRY_AFTER_MS / 1000} s`, dueMs: 0, gone: false };
      const o = failed(r, code, `status ${status}, retry-after ${Math.ceil(wait / 1000)} s`);
      if (o.kind === 'retry') o.dueMs = Math.max(o.dueMs, r.now + wait);
      return o;
    }
  }
  return failed(r, code, `status ${status}`);
}

/** A failed `n`th attempt: retried after an exponential back-off with jitter, or dead after the last. */
export function failed(r: AttemptRules, code: string, error: string): AttemptOutcome {
  if (r.n >= r.maxAttempts) return { kind: 'dead', code, error, dueMs: 0, gone: false };
  // Equal jitter: half the back-off fixed, half random, so retries of many deliveries spread out.
  const backoff = r.retryBaseMs * 2 ** (r.n - 1);
  return { kind: 'retry', code, error, dueMs: r.now + backoff / 2 + Math.random() * (backoff / 2), gone: false };
}
