import { AppError, Errors, INTENT_REFRESH_MS, inRequest, type Config, type Engine, type Logger, type OperatorEvent, type PendingChange, type PlatformPrincipal, type Principal } from '../engine/index.js';
import { errorReply, send, sendStream, type Exchange, type Reply } from './respond.js';
import { BodyStream } from './body-stream.js';
import { redactor } from './audit-redaction.js';
import { ClientAddress, formatAddress } from './client-address.js';
import { refuseLoneSurrogates, refuseNul } from './request-text.js';
import { parseBody, readBody } from './request-body.js';
import { Traffic } from './traffic.js';
import { RequestObserver, requestIdOf, unroutedRequestId } from './request-log.js';
import type { RequestSchema, ResponseSchema, Validators } from './schemas.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

/** Where a route is served: each surface can have its own port. */
export type Surface = 'public' | 'console' | 'portal' | 'dashboard' | 'ops';
export type Method = 'get' | 'post' | 'put' | 'del';

/** What a handler receives; B and Q are what the route's body and query schemas let through. */
export interface RouteContext<B = unknown, Q = unknown> {
  params: string[];
  query: URLSearchParams;
  /** The parsed body, validated by the route's bodySchema. */
  body: B;
  /** The query string, validated by the route's querySchema and coerced to its types. */
  q: Q;
  principal: Principal;
  /**
   * The source address, a fact (http/client-address.ts): the socket's peer,
   * or behind a trusted proxy (TRUSTED_PROXIES) the right-most untrusted
   * X-Forwarded-For hop. Every per-address limit keys on this, never on a body field.
   */
  sourceAddress: string;
  /** The platform administrator on `platform` routes; null elsewhere. */
  platform: PlatformPrincipal | null;
  /** The headers a route asked for (`headers`), by lower-case name; '' when absent. */
  headers: Record<string, string>;
  /** The body's bytes as received, for routes that check a signature over them. */
  raw: Buffer | null;
  /** Portal surface only (empty elsewhere): what the page needs to answer a browser (language, compression, form posts). */
  browser: PortalHeaders;
  /** A `streamBody` route's body, read as it arrives (http/body-stream.ts); null elsewhere. */
  bodyStream: BodyStream | null;
  /** The request's Content-Type ('' when absent or the method has no body). */
  contentType: string;
}

export interface PortalHeaders {
  accept: string;
  acceptLanguage: string;
  acceptEncoding: string;
  contentType: string;
  /** Host and X-Forwarded-Proto: the captive API's absolute portal URL. */
  host: string;
  forwardedProto: string;
}

const NO_HEADERS: PortalHeaders = { accept: '', acceptLanguage: '', acceptEncoding: '', contentType: '', host: '', forwardedProto: '' };

/**
 * A route. Build one with route(), which infers B and Q from the schemas and
 * R from what the handler answers, so that the handler and audit are typed.
 * handler and audit are methods (not function-typed fields) so that any
 * Route<B, Q, R> is a Route: the router validates before it calls them.
 */
export interface Route<B = unknown, Q = unknown, R = unknown> {
  method: Method;
  /** A uWS pattern: `/v1/vouchers/:id`. */
  path: string;
  surface: Surface;
  /** Operator credentials (a JWT or an API key) required; the portal and ops routes have none. */
  auth: boolean;
  /** A platform administration route (/admin/): a platform token required, tenant credentials refused. Set auth false. */
  platform?: boolean;
  /** Request headers the handler reads (lower-case names), copied synchronously as uWS requires. */
  headers?: string[];
  /** Takes a stream-only token in `?token=` when no credential header is sent (EventSource cannot send headers); auth must be true. */
  streamToken?: boolean;
  /** A POST that changes nothing (minting a stream token): any role may call it, not only admin. */
  readOnly?: boolean;
  /** Roles the caller must hold one of, else 403 forbidden (reads of guests' identities in clear: IDENTITY_READER_ROLES). */
  roles?: readonly string[];
  /** A licensed module the tenant must have, else 403; a list: any one of them (a package that includes the feature). */
  module?: string | readonly string[];
  bodySchema?: RequestSchema<B>;
  querySchema?: RequestSchema<Q>;
  /**
   * The body is not read whole: the handler gets it as `bodyStream`, at most
   * `limit(config)` bytes (413 beyond, found while streaming). No bodySchema then.
   */
  streamBody?: { limit(config: Config): number };
  /** The request body's media types, for the OpenAPI document, when it is not JSON (a file upload). */
  requestTypes?: Record<string, unknown>;
  /** The success body's shape, for the OpenAPI document only. */
  responseSchema?: ResponseSchema;
  /** The success body's media type when it is not JSON (a streamed file), for the OpenAPI document. */
  responseType?: string;
  status?: number;
  summary: string;
  /** Extra error responses to document: status -> description. */
  errors?: Record<number, string>;
  handler(ctx: RouteContext<B, Q>): Promise<Answer<R>> | Answer<R>;
  /** For operator changes: the audit-chain event a successful call records (administrator actions are audited); `out` is the success body. */
  audit?(ctx: RouteContext<B, Q>, out: R): AuditNote | null;
  /**
   * For a change that can fail part-way with some of it made (an import): the audit note of what was made,
   * read from the error's fields; null (or absent) withdraws the intent as for any failure.
   */
  auditOnError?(ctx: RouteContext<B, Q>, err: AppError): AuditNote | null;
}

/**
 * A reply whose JSON body is an R. With `takeover` the route answers
 * itself, for a response that outlives the handler (a server-sent-event
 * stream): the router has checked credentials, module and query and writes
 * nothing; `takeover` gets the exchange at once (in the same turn as the
 * handler's return) and owns it from then on (onAborted, writes, end).
 */
export type Answer<R> = Reply & { body: R; takeover?: (ex: Exchange) => void };

/** A route, typed from its own schemas and handler (see Route). */
export function route<B = undefined, Q = undefined, R = unknown>(r: Route<B, Q, R>): Route {
  return r;
}

export interface AuditNote {
  event: OperatorEvent;
  details: Record<string, unknown>;
  subject?: { hotspot_id?: string; mac?: string };
}

/**
 * The audit note of a route's successful call, with every write-only field of
 * its body schema redacted (http/audit-redaction.ts): the one way the router
 * reads a note, so no route's audit function can leak a secret into the chain.
 * Built once per route at mount.
 */
export function auditNoteOf(route: Route, onError = false): (ctx: RouteContext, out: unknown) => AuditNote | null {
  const audit = onError
    ? route.auditOnError && ((ctx: RouteContext, err: unknown) => (err instanceof AppError ? route.auditOnError!(ctx, err) : null))
    : route.audit?.bind(route);
  if (!audit) return () => null;
  const redact = redactor(route.bodySchema?.schema);
  return (ctx, out) => {
    const note = audit(ctx, out);
    return note && { ...note, details: redact(note.details, ctx.body) };
  };
}

const NO_PRINCIPAL = null as unknown as Principal;

/**
 * Registers routes on a uWS app. Per uWS rules: onAborted first, everything
 * read from `req` synchronously before any await, writes inside cork (send()).
 * Adds 405 for known paths with another method and a JSON 404 for the rest.
 */
export function mount(app: TemplatedApp, routes: Route[], engine: Engine, validators: Validators, log: Logger, traffic = new Traffic()): void {
  const limit = engine.config.bodyLimitBytes;
  const clientAddress = new ClientAddress(engine.config.trustedProxies);
  const bodyTimeoutMs = engine.config.http.bodyTimeoutMs;
  const maxPerAddress = engine.config.http.maxConnectionsPerAddress;
  const byPath = new Map<string, Route[]>();
  for (const r of routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  const observer = new RequestObserver(engine, log);

  for (const route of routes) {
    const paramNames = (route.path.match(/:[^/]+/g) ?? []).map((p) => p.slice(1));
    const paramCount = paramNames.length;
    const validateBody = route.bodySchema ? validators.body(route.bodySchema) : undefined;
    const validateQuery = route.querySchema ? validators.query(route.querySchema) : undefined;
    const hasBody = route.method === 'post' || route.method === 'put';
    const auditRoute = `${route.method === 'del' ? 'DELETE' : route.method.toUpperCase()} ${route.path}`;
    const modules = route.module === undefined ? null : typeof route.module === 'string' ? [route.module] : route.module;
    const auditNote = auditNoteOf(route);
    const auditErrorNote = auditNoteOf(route, true);
    const streamLimit = route.streamBody?.limit(engine.config);
    const timing = observer.timing(auditRoute.slice(0, auditRoute.indexOf(' ')), route.path);

    app[route.method](route.path, (res: HttpResponse, req) => {
      const startMs = performance.now();
      const ex: Exchange = { res, aborted: false };
      // A client gone mid-upload: the body reader is told, so the request ends (and `traffic` with it).
      let bodyAborted: (() => void) | null = null;
      res.onAborted(() => {
        ex.aborted = true;
        bodyAborted?.();
      });
      const params: string[] = [];
      // Every index below paramCount is a parameter of this route's pattern, so
      // uWS always has it; its types say `undefined` for an index it lacks.
      for (let i = 0; i < paramCount; i++) params.push(decodeParam(req.getParameter(i) ?? ''));
      const query = new URLSearchParams(req.getQuery() ?? '');
      const credentialed = route.auth || route.platform === true;
      const authorization = credentialed ? req.getHeader('authorization') : '';
      const apiKey = credentialed ? req.getHeader('x-api-key') : '';
      const streamToken = route.streamToken ? query.get('token') ?? '' : '';
      const headers: Record<string, string> = {};
      if (route.headers) for (const h of route.headers) headers[h] = req.getHeader(h);
      const contentType = hasBody ? req.getHeader('content-type') : '';
      const declaredLength = hasBody ? Number(req.getHeader('content-length') || 0) : 0;
      const peer = formatAddress(new Uint8Array(res.getRemoteAddress()));
      const viaProxy = clientAddress.trusts(peer);
      const sourceAddress = viaProxy ? clientAddress.resolve(peer, forwardedFor(req)) : peer;
      const requestId = requestIdOf(viaProxy ? req.getHeader('x-request-id') : '', viaProxy);
      ex.requestId = requestId;
      const browser: PortalHeaders = route.surface === 'portal'
        ? {
            accept: req.getHeader('accept'), acceptLanguage: req.getHeader('accept-language'), acceptEncoding: req.getHeader('accept-encoding'),
            contentType, host: req.getHeader('host'), forwardedProto: req.getHeader('x-forwarded-proto'),
          }
        : NO_HEADERS;
      if (traffic.closing) {
        if (hasBody) ex.res.onData(() => undefined);
        const e = Errors.SHUTTING_DOWN();
        send(ex, { status: e.status, body: e.toBody() }, true);
        observer.done(timing, e.status, startMs, requestId);
        return;
      }

      if (!traffic.enter(sourceAddress)) {
        if (hasBody) ex.res.onData(() => undefined);
        const e = Errors.TOO_MANY_CONNECTIONS(maxPerAddress);
        send(ex, { status: e.status, body: e.toBody() }, true);
        observer.done(timing, e.status, startMs, requestId);
        return;
      }
      let released = false;
      const release = (): void => {
        if (released) return;
        released = true;
        traffic.leave(sourceAddress);
      };
      traffic.begin();
      // A streamed body is read by the handler, from now: uWS takes onData only in this turn.
      let bodyStream: BodyStream | null = null;
      if (streamLimit !== undefined) {
        if (declaredLength > streamLimit) ex.res.onData(() => undefined);
        else {
          const stream = new BodyStream(ex, streamLimit, bodyTimeoutMs);
          bodyAborted = () => stream.gone();
          bodyStream = stream;
        }
      }
      const bodyPromise = hasBody && streamLimit === undefined
        ? readBody(ex, limit, declaredLength, bodyTimeoutMs, (cancel) => { bodyAborted = cancel; })
        : Promise.resolve(null);
      // What the request was answered with, for its latency and access line.
      let answered = 0;
      // Served inside the request's scope: every line logged while it is, the engine's too, carries its id (engine/logger.ts).
      void inRequest(requestId, async (): Promise<void> => {
        let reply: Reply;
        let closeConnection = false;
        try {
          // A declared length past the limit is refused before anything is read.
          if (streamLimit !== undefined && bodyStream === null) throw Errors.PAYLOAD_TOO_LARGE(streamLimit);
          const raw = await bodyPromise;
          const principal = route.auth ? await engine.credentials.authenticate({ authorization, apiKey, streamToken }) : NO_PRINCIPAL;
          const platform = route.platform ? await engine.credentials.authenticatePlatform({ authorization, apiKey }) : null;
          if (modules && !modules.some((m) => principal.tenant.modules.includes(m))) throw Errors.MODULE_NOT_LICENSED(modules.join(' or '));
          // Roles (the JWT `roles` claim): admin may change anything; a token with other roles only reads. API keys act as admin.
          if (route.auth && route.method !== 'get' && !route.readOnly && !principal.roles.includes('admin')) throw Errors.FORBIDDEN('This change needs the admin role');
          if (route.roles && !route.roles.some((r) => principal.roles.includes(r))) throw Errors.FORBIDDEN(`This needs the ${route.roles.join(' or ')} role`);
          let q: unknown = undefined;
          if (validateQuery) {
            q = Object.fromEntries(query);
            validateQuery(q);
          }
          let body: unknown = undefined;
          if (raw) body = parseBody(raw, contentType);
          refuseNul(paramNames, params, query, raw, body);
          refuseLoneSurrogates(raw, body);
          if (raw) {
            if (validateBody) validateBody(body);
          } else if (validateBody) {
            validateBody(undefined);
          }
          const ctx = { params, query, body, q, principal, sourceAddress, platform, headers, raw, browser, bodyStream, contentType };
          // Audited, or not made: the change's intent is in Redis before the change (docs/audit-chain.md).
          const pending = route.audit ? await beginChange(engine, principal, auditRoute, params) : null;
          let answer: Answer<unknown>;
          // A streamed body may take longer than an intent stays fresh: it is refreshed while the handler runs.
          const alive = pending && bodyStream ? setInterval(() => void pending.refresh().catch(() => undefined), INTENT_REFRESH_MS) : null;
          alive?.unref();
          try {
            answer = await route.handler(ctx);
          } catch (err) {
            // Part of the change made before the failure (auditOnError): it is recorded, not withdrawn.
            const made = pending ? auditErrorNote(ctx, err) : null;
            if (made) {
              await pending!.commit(made.event, made.details, made.subject)
                .catch((e: unknown) => log.warn({ err: (e as Error).message, route: auditRoute }, 'audit record not committed; its intent stands for it'));
            } else {
              await pending?.withdraw().catch((e: unknown) => log.warn({ err: (e as Error).message }, 'audit intent not withdrawn; it will be recorded as unconfirmed'));
            }
            throw err;
          } finally {
            if (alive) clearInterval(alive);
          }
          // Not counted in `traffic` from here: a stream ends when its client goes, not with a request's work.
          // Its peer's place is held until then (the stream calls ex.release).
          if (answer.takeover) {
            ex.release = release;
            answered = answer.status;
            return answer.takeover(ex);
          }
          reply = answer;
          if (reply.stream) {
            answered = reply.status;
            return await sendStream(ex, reply, log);
          }
          if (pending) {
            const note = reply.status < 300 ? auditNote(ctx, reply.body) : null;
            try {
              // The change is in the audit chain's queue before the operator hears it succeeded.
              if (note) await pending.commit(note.event, note.details, note.subject);
              else await pending.withdraw();
            } catch (err) {
              // The change is made and its intent stays in Redis: it becomes an operator_change_unconfirmed
              // record (AuditLog.recoverStale). The operator hears the change succeeded, which it did.
              log.warn({ err: (err as Error).message, route: auditRoute }, 'audit record not committed; its intent stands for it');
            }
          }
        } catch (err) {
          reply = errorReply(err, log);
          // A body refused part-way (too large, too slow) is not read to its end: the connection goes with the reply.
          closeConnection = reply.status === 413 || reply.status === 408;
        }
        // A streamed body the handler did not read to its end (refused part-way): the connection goes with the reply.
        if (bodyStream && !bodyStream.complete) {
          closeConnection = true;
          bodyStream.destroy();
        }
        send(ex, reply, closeConnection || traffic.closing);
        answered = reply.status;
      }).finally(() => {
        // A stream is timed to its headers (its end is the client's choice); a request that threw past send() as 500.
        observer.done(timing, answered || 500, startMs, requestId);
        traffic.end();
        if (ex.release !== release) release();
      });
    });
  }

  for (const [path, list] of byPath) {
    const allow = list.map((r) => (r.method === 'del' ? 'DELETE' : r.method.toUpperCase())).join(', ');
    const timing = observer.timing('other', path);
    app.any(path, (res, req) => {
      const startMs = performance.now();
      const ex: Exchange = { res, aborted: false, requestId: unroutedRequestId(clientAddress, res, req) };
      res.onAborted(() => { ex.aborted = true; });
      const e = Errors.METHOD_NOT_ALLOWED(req.getMethod().toUpperCase());
      send(ex, { status: e.status, body: e.toBody(), headers: { allow } });
      observer.done(timing, e.status, startMs, ex.requestId!);
    });
  }
  // An unknown path is labelled as such, never by itself: a scanner's paths would each be a series.
  const unmatched = observer.timing('other', '(unmatched)');
  app.any('/*', (res, req) => {
    const startMs = performance.now();
    const ex: Exchange = { res, aborted: false, requestId: unroutedRequestId(clientAddress, res, req) };
    res.onAborted(() => { ex.aborted = true; });
    const e = Errors.NOT_FOUND();
    send(ex, { status: e.status, body: e.toBody() });
    observer.done(unmatched, e.status, startMs, ex.requestId!);
  });
}

/** Writes a change's intent; a failure is a 503 and the change is not made. */
async function beginChange(engine: Engine, principal: Principal, route: string, params: string[]): Promise<PendingChange> {
  try {
    return await engine.auditLog.begin(principal.tenant.id, { by: `${principal.via}:${principal.subject}`, route, params });
  } catch (err) {
    throw Errors.SERVICE_UNAVAILABLE('The audit log').withCause(err);
  }
}

/**
 * Every X-Forwarded-For line, joined in order: getHeader gives only the
 * first, and a client's own line ahead of the proxy's would then be read as
 * the proxy's word. Read only for a trusted peer.
 */
function forwardedFor(req: HttpRequest): string {
  let all = '';
  req.forEach((k, v) => {
    if (k === 'x-forwarded-for') all = all === '' ? v : `${all},${v}`;
  });
  return all;
}

/**
 * A path parameter, percent-decoded. A malformed escape (`%zz`) is kept as
 * sent: it names no resource, so the route answers 404 as for any unknown id.
 * decodeURIComponent throws here, outside the request's try, and an uncaught
 * throw in a uWS handler takes the whole process down.
 */
function decodeParam(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
