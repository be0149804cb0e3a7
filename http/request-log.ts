import { randomUUID } from 'node:crypto';
import { labelValues, type Engine, type Logger } from '../engine/index.js';
import { formatAddress, type ClientAddress } from './client-address.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/** The HTTP latency histogram: by route pattern (never the raw path), method and status class. */
export const HTTP_DURATION_METRIC = 'http_request_duration_seconds';

/** A request id a trusted proxy may hand on: short, printable, no spaces or quotes (it goes into a header and log lines). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/**
 * The request id of a request: the `X-Request-Id` a trusted proxy sent
 * (TRUSTED_PROXIES; the proxy's id then ties its log to ours), else a new
 * one. A client's own header is ignored: it could forge another request's id
 * into our logs.
 */
export function requestIdOf(incoming: string, fromTrustedProxy: boolean): string {
  return fromTrustedProxy && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/** The request id of an answer no route gives (404, 405): read synchronously, as uWS requires; a trusted proxy's kept there too. */
export function unroutedRequestId(clientAddress: ClientAddress, res: HttpResponse, req: HttpRequest): string {
  const trusted = clientAddress.trusts(formatAddress(new Uint8Array(res.getRemoteAddress())));
  return requestIdOf(trusted ? req.getHeader('x-request-id') : '', trusted);
}

/** What a route's requests are timed and logged as, built once per route at mount. */
export interface RouteTiming {
  /** labelValues(route, method, class) per status class, 1xx..5xx: nothing is joined per request. */
  readonly labels: readonly string[];
  readonly method: string;
  readonly route: string;
}

/**
 * Observes every HTTP request once it is answered: its latency in the
 * histogram and, with ACCESS_LOG, one pino line (method, route pattern,
 * status, duration, request id). The line names the route's pattern
 * (`/v1/vouchers/:id`), never the path or the query, so no token or code a
 * URL carries reaches the log; nor the client's address (a guest's, personal data).
 */
export class RequestObserver {
  private readonly access: Logger | null;

  constructor(private readonly engine: Engine, log: Logger) {
    engine.metrics.histogram(HTTP_DURATION_METRIC, 'HTTP request latency, from the request\'s arrival to its answer written (a stream: its headers), by route pattern, method and status class', 'route,method,status_class');
    this.access = engine.config.accessLog ? log.child({ component: 'access' }) : null;
  }

  timing(method: string, route: string): RouteTiming {
    return { method, route, labels: ['1xx', '2xx', '3xx', '4xx', '5xx'].map((c) => labelValues(route, method, c)) };
  }

  /** The request was answered with `status`; `startMs` is performance.now() at its arrival. */
  done(t: RouteTiming, status: number, startMs: number, requestId: string): void {
    const ms = performance.now() - startMs;
    const cls = Math.min(Math.max(Math.floor(status / 100), 1), 5) - 1;
    this.engine.metrics.observe(HTTP_DURATION_METRIC, t.labels[cls]!, ms / 1000);
    this.access?.info({ request_id: requestId, method: t.method, route: t.route, status, duration_ms: Math.round(ms * 1000) / 1000 }, 'request');
  }
}
