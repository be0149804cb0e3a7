import { AppError, Errors, isPostgresUnreachable, type Logger } from '../engine/index.js';
import type { HttpResponse } from './uws.js';

const STATUS_LINES: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 204: '204 No Content', 303: '303 See Other', 400: '400 Bad Request', 401: '401 Unauthorized', 408: '408 Request Timeout',
  403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed', 409: '409 Conflict', 410: '410 Gone',
  413: '413 Payload Too Large', 415: '415 Unsupported Media Type', 423: '423 Locked', 429: '429 Too Many Requests',
  500: '500 Internal Server Error', 502: '502 Bad Gateway', 503: '503 Service Unavailable',
};

/** A response a handler returns; the router writes it. */
export interface Reply {
  status: number;
  body: unknown;
  /** Raw body (e.g. /metrics, a compressed page); `body` is ignored when set. */
  text?: string | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /**
   * A body streamed in chunks (e.g. an evidence pack): `status`, `contentType`
   * and `headers` are sent with the first chunk, `body` is ignored. A failure
   * before the first chunk is an ordinary error reply; after it, the
   * connection is closed so the client sees a broken download, never a
   * complete-looking truncated one. Ending the iteration early (return) is
   * how the producer learns the client went away.
   */
  stream?: AsyncIterable<Buffer>;
}

/** The request-scoped state the writer needs: has the client gone away? */
export interface Exchange {
  res: HttpResponse;
  aborted: boolean;
  /** Called once when a response that outlives its handler (a stream) is over: frees the peer's place (Traffic.leave). */
  release?: () => void;
  /** Sent as X-Request-Id with the answer (http/request-log.ts). */
  requestId?: string;
}

/** Writes a reply inside cork; a no-op when the client has gone. */
export function send(ex: Exchange, reply: Reply, closeConnection = false): void {
  if (ex.aborted) return;
  const payload = reply.text ?? (reply.status === 204 ? '' : JSON.stringify(reply.body));
  ex.res.cork(() => {
    ex.res.writeStatus(STATUS_LINES[reply.status] ?? `${reply.status} Status`);
    ex.res.writeHeader('content-type', reply.contentType ?? 'application/json');
    if (ex.requestId !== undefined) ex.res.writeHeader('x-request-id', ex.requestId);
    if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) ex.res.writeHeader(k, v);
    ex.res.end(payload, closeConnection);
  });
  ex.aborted = true; // the response is finished; nothing more may be written
}

/**
 * Writes a streamed reply with uWS back-pressure: each chunk inside cork,
 * and after a write that reports back-pressure, nothing more until
 * onWritable. The next chunk is pulled only once the last one is accepted,
 * so a slow client slows the producer. Throws only before anything is sent.
 */
export async function sendStream(ex: Exchange, reply: Reply, log: Logger): Promise<void> {
  const it = reply.stream![Symbol.asyncIterator]();
  let next = await it.next();
  let drained: (() => void) | null = null;
  // Replaces the router's handler (uWS keeps one): also wake a writer waiting for onWritable.
  ex.res.onAborted(() => {
    ex.aborted = true;
    drained?.();
  });
  if (ex.aborted) {
    await it.return?.();
    return;
  }
  ex.res.onWritable(() => {
    drained?.();
    return true;
  });
  ex.res.cork(() => {
    ex.res.writeStatus(STATUS_LINES[reply.status] ?? `${reply.status} Status`);
    ex.res.writeHeader('content-type', reply.contentType ?? 'application/octet-stream');
    if (ex.requestId !== undefined) ex.res.writeHeader('x-request-id', ex.requestId);
    if (reply.headers) for (const [k, v] of Object.entries(reply.headers)) ex.res.writeHeader(k, v);
  });
  try {
    while (!next.done) {
      const chunk = next.value;
      let ok = true;
      ex.res.cork(() => { ok = ex.res.write(chunk); });
      if (!ok) await new Promise<void>((resolve) => { drained = resolve; });
      drained = null;
      if (ex.aborted) break;
      next = await it.next();
      if (ex.aborted) break;
    }
    if (ex.aborted) {
      await it.return?.();
      return;
    }
    ex.res.cork(() => ex.res.end());
    ex.aborted = true;
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'streamed reply failed after its headers; closing the connection');
    if (!ex.aborted) ex.res.close();
    ex.aborted = true;
    await it.return?.().catch(() => undefined);
  }
}

/** Maps any throw onto a reply: AppErrors as themselves, Postgres out of reach as 503, everything else as a logged 500. `log` may be a function that makes the logger (the request's child, made only when a line is written). */
export function errorReply(err: unknown, logger: Logger | (() => Logger)): Reply {
  const log = (): Logger => (typeof logger === 'function' ? logger() : logger);
  if (err instanceof AppError) {
    if (err.status >= 500) log().warn({ err: err.message, cause: err.cause instanceof Error ? err.cause.message : undefined }, 'request failed');
    // A limit's wait goes in the header too (RFC 9110 §10.2.3), for clients that read only that.
    const wait = err.fields?.retry_after;
    if (typeof wait === 'number') return { status: err.status, body: err.toBody(), headers: { 'retry-after': String(wait) } };
    return { status: err.status, body: err.toBody() };
  }
  if (isPostgresUnreachable(err)) {
    log().warn({ err: (err as Error).message }, 'request failed: postgres unreachable');
    const e = Errors.SERVICE_UNAVAILABLE('The database');
    return { status: e.status, body: e.toBody() };
  }
  log().error({ err }, 'unhandled error in request');
  const e = Errors.INTERNAL();
  return { status: e.status, body: e.toBody() };
}
