/**
 * The one HTTP client of the providers: a JSON POST with a deadline. A guest
 * waits on the portal page for the answer, so a provider that hangs costs at
 * most `timeoutMs`, then counts as a retryable failure.
 */
export interface ProviderAnswer {
  status: number;
  /** The parsed JSON body, or null when the body was not JSON. */
  json: unknown;
}

export const PROVIDER_TIMEOUT_MS = 10_000;

/** POSTs `body` as JSON; throws on network failure or time-out (the caller maps that to a SendResult). */
export async function postJson(url: string, headers: Record<string, string>, body: unknown, timeoutMs = PROVIDER_TIMEOUT_MS): Promise<ProviderAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let json: unknown = null;
  try { json = JSON.parse(text); } catch { /* not JSON: the caller reports the status */ }
  return { status: res.status, json };
}

/** A field of a JSON object answer as a string ('' when absent). */
export function field(json: unknown, name: string): string {
  if (json === null || typeof json !== 'object') return '';
  const v = (json as Record<string, unknown>)[name];
  return typeof v === 'string' || typeof v === 'number' ? String(v) : '';
}

/** Joins a base URL and a path without doubling or dropping the slash. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + path;
}
