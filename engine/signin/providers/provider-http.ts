import type { OutboundPolicy } from '../../net/outbound-target.js';
import { Http1Client } from './http1-client.js';

/** Answers larger than this are not providers' JSON: cut off rather than buffered. */
const MAX_ANSWER_BYTES = 64 * 1024;
export interface ProviderAnswer {
  status: number;
  /** The parsed JSON body, or null when the body was not JSON. */
  json: unknown;
}

export const PROVIDER_TIMEOUT_MS = 10_000;

/**
 * The one HTTP client of the providers: a JSON POST with a deadline. A guest
 * waits on the portal page for the answer, so a provider that hangs costs at
 * most `timeoutMs`, then counts as a retryable failure.
 *
 * Http1Client rather than fetch or node:http: in bench/otp-signin's profile
 * fetch (undici, web streams, its AbortSignal) took about a fifth of the
 * service's CPU per phone sign-in, and node:http's client, which replaced it,
 * still about a quarter of the busy time (http1-client.ts says why). The
 * client holds the process's keep-alive connections to the providers; every
 * new one goes only where the outbound policy allows, and no redirect is followed.
 */
export class ProviderHttp {
  private readonly client: Http1Client;

  constructor(outbound: OutboundPolicy) {
    this.client = new Http1Client({ outbound });
  }

  /** POSTs `body` as JSON; throws on network failure, a refused target or time-out (the caller maps that to a SendResult). */
  async postJson(url: string, headers: Record<string, string>, body: unknown, timeoutMs = PROVIDER_TIMEOUT_MS): Promise<ProviderAnswer> {
    // Object.assign, not `{ ...headers, ...JSON_HEADERS }`: Node 20 copies a second spread source
    // through the runtime (2.4 us per send against 0.08 us, measured).
    const a = await this.client.post(url, Object.assign({}, headers, JSON_HEADERS), JSON.stringify(body), timeoutMs, MAX_ANSWER_BYTES);
    let json: unknown = null;
    try { json = JSON.parse(a.body.toString('utf8')); } catch { /* not JSON: the caller reports the status */ }
    return { status: a.status, json };
  }

  /** Closes idle keep-alive connections (tests). */
  closeIdle(): void {
    this.client.closeIdle();
  }
}

const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' } as const;

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
