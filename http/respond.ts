import { AppError, Errors, type Logger } from '../engine/index.js';
import type { HttpResponse } from './uws.js';

const STATUS_LINES: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 204: '204 No Content', 400: '400 Bad Request', 401: '401 Unauthorized',
  403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed', 409: '409 Conflict', 410: '410 Gone',
  413: '413 Payload Too Large', 415: '415 Unsupported Media Type', 429: '429 Too Many Requests',
  500: '500 Internal Server Error', 503: '503 Service Unavailable',
};

/** A response a handler returns; the router writes it. */
export interface Reply {
  status: number;
  body: unknown;
  /** Raw text body (e.g. /metrics); `body` is ignored when set. */
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

/** The request-scoped state the writer needs: has the client gone away? */
export interface Exchange {
  res: HttpResponse;
  aborted: boolean;
}

/** Writes a reply inside cork; a no-op when the client has gone. */
export function send(ex: Exchange, reply: Reply, closeConnection = false): void {
  if (ex.aborted) return;
  const payload = reply.text ?? (reply.status === 204 ? '' : JSON.stringify(reply.body));
  ex.res.cork(() => {
    ex.res.writeStatus(STATUS_LINES[reply.status] ?? `${reply.status} Status`);
    ex.res.writeHeader('content-type', reply.contentType ?? 'application/json');
    if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) ex.res.writeHeader(k, v);
    ex.res.end(payload, closeConnection);
  });
  ex.aborted = true; // the response is finished; nothing more may be written
}

/** Maps any throw onto a reply: AppErrors as themselves, everything else as a logged 500. */
export function errorReply(err: unknown, log: Logger): Reply {
  if (err instanceof AppError) {
    if (err.status >= 500) log.warn({ err: err.message, cause: (err as { cause?: Error }).cause?.message }, 'request failed');
    return { status: err.status, body: err.toBody() };
  }
  log.error({ err }, 'unhandled error in request');
  const e = Errors.INTERNAL();
  return { status: e.status, body: e.toBody() };
}
