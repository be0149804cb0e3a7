import type { OutboundHttp } from '../net/outbound-http.js';

/** What one attempt's POST brought back. */
export interface TransportAnswer {
  status: number;
  /** The Retry-After header ('' when none). */
  retryAfter: string;
}

/**
 * How a delivery is POSTed: the one seam between the dispatcher and an HTTP
 * client, so the client can be swapped  without touching the dispatcher. An
 * implementation must: connect only where the outbound policy allows, to the
 * very address it checked (no second resolution); follow no redirect (a 3xx
 * is an answer); and reject when no whole answer came within `timeoutMs`.
 */
export interface WebhookTransport {
  /** `headers`: lower-case names (as signedHeaders gives them). */
  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<TransportAnswer>;
  /** Closes idle keep-alive connections. */
  close(): void;
}

/**
 * Receivers' answer bodies are read and thrown away; past this much the answer is taken as it stands (a 2xx is a
 * delivery: success is the status, not the body) and the connection is closed.
 */
const MAX_ANSWER_BYTES = 64 * 1024;
const JSON_TYPE = { 'content-type': 'application/json', 'user-agent': 'guest-wifi-webhooks/1' } as const;

/**
 * The transport on the engine's outbound client (engine/net/outbound-http.ts, the
 * one the SMS and messaging-app providers use; the dispatcher's thread has an
 * instance of its own under the same policy): keep-alive per origin, the
 * policy's `lookup` on every new connection (resolved, checked, pinned), IP
 * literals judged before any connection, redirects never followed.
 */
export class OutboundWebhookTransport implements WebhookTransport {
  constructor(private readonly client: OutboundHttp) {}

  async post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<TransportAnswer> {
    // The dispatcher's headers (signedHeaders) are lower-case already: copied as they are, after the fixed two.
    const h: Record<string, string> = Object.assign({ 'content-type': JSON_TYPE['content-type'], 'user-agent': JSON_TYPE['user-agent'] }, headers);
    const a = await this.client.request({ url, method: 'POST', headers: h, body, timeoutMs, maxBodyBytes: MAX_ANSWER_BYTES, cutLongBody: true });
    return { status: a.status, retryAfter: a.headers['retry-after'] ?? '' };
  }

  /** The client is the engine's (closed with it); only idle connections are let go here. */
  close(): void {
    this.client.closeIdle();
  }
}
