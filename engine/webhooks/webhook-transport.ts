import type { OutboundPolicy } from '../net/outbound-target.js';
import { Http1Client } from '../signin/providers/http1-client.js';

/** What one attempt's POST brought back. */
export interface TransportAnswer {
  status: number;
  /** The Retry-After header ('' when none). */
  retryAfter: string;
}

/**
 * How a delivery is POSTed: the one seam between the dispatcher and an HTTP
 * client, so the client can be swapped (issue 19 compares the hand-written
 * http1-client with undici's Pool) without touching the dispatcher. An
 * implementation must: connect only where the outbound policy allows, to the
 * very address it checked (no second resolution); follow no redirect (a 3xx
 * is an answer); and reject when no whole answer came within `timeoutMs`.
 */
export interface WebhookTransport {
  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<TransportAnswer>;
  /** Closes idle keep-alive connections. */
  close(): void;
}

/** Receivers' answer bodies are read and thrown away; one larger than this ends the connection. */
const MAX_ANSWER_BYTES = 64 * 1024;
const JSON_TYPE = { 'content-type': 'application/json', 'user-agent': 'guest-wifi-webhooks/1' } as const;

/**
 * The transport on engine/signin/providers/http1-client.ts: keep-alive per
 * origin, the policy's `lookup` on every new connection (resolved, checked,
 * pinned), IP literals judged before any connection, redirects never followed.
 */
export class Http1WebhookTransport implements WebhookTransport {
  private readonly client: Http1Client;

  constructor(outbound: OutboundPolicy, ca?: string | Buffer) {
    this.client = new Http1Client({ outbound, ...(ca ? { ca } : {}) });
  }

  async post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<TransportAnswer> {
    const a = await this.client.post(url, Object.assign({}, headers, JSON_TYPE), body, timeoutMs, MAX_ANSWER_BYTES);
    return { status: a.status, retryAfter: a.retryAfter };
  }

  close(): void {
    this.client.closeIdle();
  }
}
