import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/**
 * The one HTTP client of the providers: a JSON POST with a deadline. A guest
 * waits on the portal page for the answer, so a provider that hangs costs at
 * most `timeoutMs`, then counts as a retryable failure.
 *
 * node:http with keep-alive rather than fetch: in bench/otp-signin's profile,
 * fetch (undici, web streams, its AbortSignal) took about a fifth of the
 * service's CPU per phone sign-in. The agents are the process's connection
 * pools to the providers, as fetch's global dispatcher was.
 */
const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: 64 }), https: new HttpsAgent({ keepAlive: true, maxSockets: 64 }) };
/** Answers larger than this are not providers' JSON: cut off rather than buffered. */
const MAX_ANSWER_BYTES = 64 * 1024;
export interface ProviderAnswer {
  status: number;
  /** The parsed JSON body, or null when the body was not JSON. */
  json: unknown;
}

export const PROVIDER_TIMEOUT_MS = 10_000;

/** POSTs `body` as JSON; throws on network failure or time-out (the caller maps that to a SendResult). */
export function postJson(url: string, headers: Record<string, string>, body: unknown, timeoutMs = PROVIDER_TIMEOUT_MS): Promise<ProviderAnswer> {
  const u = new URL(url);
  const tls = u.protocol === 'https:';
  if (!tls && u.protocol !== 'http:') return Promise.reject(new Error(`not an http(s) URL: ${u.protocol}`));
  const data = Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = (tls ? httpsRequest : httpRequest)(u, {
      method: 'POST', agent: tls ? agents.https : agents.http,
      headers: { 'content-type': 'application/json', accept: 'application/json', 'content-length': data.length, ...headers },
    }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) { req.destroy(new Error(`answer larger than ${MAX_ANSWER_BYTES} bytes`)); return; }
        chunks.push(c);
      });
      res.on('error', reject);
      res.on('end', () => {
        let json: unknown = null;
        try { json = JSON.parse(Buffer.concat(chunks).toString('utf8')); } catch { /* not JSON: the caller reports the status */ }
        resolve({ status: res.statusCode ?? 0, json });
      });
    });
    // One deadline for the whole exchange (connect, send, answer), like the AbortSignal it replaces.
    const timer = setTimeout(() => req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' })), timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(data);
  });
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
