import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, destination, type Logger } from 'pino';

export type { Logger };

/**
 * The id of the HTTP request being served, for every line logged while it is
 * (docs/observability.md, "Request ids"). One per process, as the log's
 * destination is: the HTTP layer enters it (inRequest), every logger of this
 * thread reads it in its mixin, and nothing else writes it.
 */
const requestScope = new AsyncLocalStorage<string>();

/**
 * Runs `fn` as the serving of request `requestId`: every line logged by it,
 * and by whatever it starts (awaits, timers, callbacks), carries
 * `request_id`. The id stays with the work, not with the turn of the event
 * loop, so two requests served at once never swap ids.
 */
export function inRequest<T>(requestId: string, fn: () => T): T {
  return requestScope.run(requestId, fn);
}

/**
 * Runs `fn` outside any request: for long-lived work that a request only
 * happens to start first (a reader loop started by the first subscriber),
 * whose lines and timers must not carry that request's id for ever after.
 */
export function outsideRequest<T>(fn: () => T): T {
  return requestScope.exit(fn);
}

/**
 * pino's mixin: called only for a line that is written (its level enabled),
 * never per request. A field of the line itself wins over it (pino's default
 * merge), so a line that names a request explicitly (the access line) keeps it.
 */
export function requestIdOfLine(): Record<string, unknown> {
  const id = requestScope.getStore();
  return id === undefined ? {} : { request_id: id };
}

/** The service's one logger; children carry the component name. `fd` 2 keeps stdout clean for CLI output. */
export function createLogger(level: string, fd: 1 | 2 = 1): Logger {
  return pino({ level, base: { service: 'guest-wifi' }, timestamp: pino.stdTimeFunctions.isoTime, mixin: requestIdOfLine },
    destination({ fd, sync: fd === 2 }));
}
