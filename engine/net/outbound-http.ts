import { isIP, connect as netConnect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { connect as tlsConnect } from 'node:tls';
import { finish, Http1Connection, type ConnectionOwner, type Exchange } from './http1-connection.js';
import { TargetNotAllowedError, type OutboundPolicy } from './outbound-target.js';

/**
 * The service's one outbound HTTP client: the SMS and messaging-app
 * providers' sends and the webhook deliveries go through it (one instance
 * on the main thread, one on the webhook dispatcher's thread). Keep-alive
 * connections pooled per origin (scheme, host, port; a TLS connection's SNI
 * and certificate check are the URL's name), one deadline per exchange
 * (waiting for a connection, connecting, sending, the answer), an answer
 * body bound, and no redirect ever followed: a 3xx is an answer like any
 * other, so a far end cannot send the request and its credentials or
 * signature elsewhere.
 *
 * Where a connection goes: every new connection resolves its host through the
 * OutboundPolicy's lookup, which checks each answer and hands the socket the
 * very address it checked (no second resolution a rebinding name could answer
 * differently); the Host header and SNI stay the URL's name. An IP literal is
 * judged before anything. Pooling per origin rather than per resolved address
 * is deliberate: the address is fixed per connection, which is what the pin
 * is for, and a name is not resolved again per request.
 *
 * Why hand-written rather than undici's Pool: bench/outbound-client.ts (A/B,
 * figures in bench/results/outbound-client.md) measured undici's Pool, used as
 * this module would use it, at 2-3 times the client CPU per request at
 * concurrency 1, 16 and 100, and its lowest-level dispatch still at about
 * 1.5 times. In bench/otp-signin's profile node:http's client took a quarter
 * of the service's busy time per phone sign-in and fetch a fifth: here a
 * request is one string and one socket write, and the answer is parsed from
 * the bytes that arrived (http1-connection.ts).
 */

/** Methods a call may use. No HEAD: its answer's length header describes a body that never comes. */
export type OutboundMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface OutboundRequest {
  url: string;
  /** Default POST. */
  method?: OutboundMethod;
  /** Lower-case names; no content-length (it is computed) and no host (the URL's). */
  headers?: Record<string, string>;
  /** Absent: no body and no content-length (a GET). */
  body?: string | Buffer;
  /** One deadline for the whole exchange; past it the request fails with an Error named TimeoutError. */
  timeoutMs: number;
  /** An answer body larger than this fails the request (default 64 KiB)... */
  maxBodyBytes?: number;
  /** ...unless this is set: the answer then ends there, its status standing and its body cut (the connection closed). */
  cutLongBody?: boolean;
}

export interface OutboundAnswer {
  status: number;
  /** Lower-case names; a repeated header's values joined by ", ". */
  headers: Record<string, string>;
  body: Buffer;
  /** From the call to the whole answer, connection and queueing included. */
  durationMs: number;
}

export interface OutboundHttpOptions {
  /** Where connections may go; absent: anywhere (tests of the client itself). */
  outbound?: OutboundPolicy;
  /** Certificates to trust instead of Node's bundled CAs (tests with a local HTTPS server); absent: the default. */
  ca?: string | Buffer;
  /** Connections one origin may hold open at once (default 64); more requests wait for one, within their deadline. */
  maxSocketsPerOrigin?: number;
}

const DEFAULT_MAX_BODY = 64 * 1024;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Header values are ASCII here (keys, tokens, base64, hex): no control character can split the request.
const BAD_VALUE = /[^\t\x20-\x7e]/;
/** URLs are a tenant's few provider and webhook addresses; the cache of split URLs is emptied past this. */
const MAX_TARGETS = 4096;

/** A method and URL split once into what a request needs. */
interface Target {
  origin: Origin;
  /** `<METHOD> <path> HTTP/1.1\r\nhost: ...\r\n`: the fixed start of every request to it. */
  start: string;
}

export class OutboundHttp {
  private readonly origins = new Map<string, Origin>();
  private readonly targets = new Map<string, Target>();
  private closed = false;

  constructor(private readonly options: OutboundHttpOptions = {}) {
    const max = options.maxSocketsPerOrigin ?? 64;
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxSocketsPerOrigin must be a positive integer, not ${max}`);
  }

  /**
   * Sends one request; resolves with the answer whatever its status (3xx
   * included), rejects on a refused target (TargetNotAllowedError), a network
   * failure, a malformed answer, a body over the bound, or the deadline.
   */
  request(r: OutboundRequest): Promise<OutboundAnswer> {
    const t0 = performance.now();
    let target: Target;
    let data: string | Buffer;
    try {
      if (this.closed) throw new Error('outbound HTTP client closed');
      target = this.target(r.method ?? 'POST', r.url);
      data = requestBytes(target.start, r.headers, r.body);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise<OutboundAnswer>((resolve, reject) => {
      const ex: Exchange = {
        resolve: (a) => resolve({ status: a.status, headers: a.headers, body: a.body, durationMs: performance.now() - t0 }),
        reject, data, maxBody: r.maxBodyBytes ?? DEFAULT_MAX_BODY, cutBody: r.cutLongBody === true, done: false, conn: null, timer: undefined,
      };
      ex.timer = setTimeout(() => {
        target.origin.forget(ex);
        const conn = ex.conn;
        finish(ex, Object.assign(new Error(`no answer within ${r.timeoutMs} ms`), { name: 'TimeoutError' }));
        conn?.destroy();
      }, r.timeoutMs);
      target.origin.run(ex);
    });
  }

  /** Closes every idle connection (tests; connections carrying a request finish first). */
  closeIdle(): void {
    for (const o of this.origins.values()) o.closeIdle();
  }

  /** Closes every connection and fails whatever is pending or waiting; later requests fail at once. */
  close(): void {
    this.closed = true;
    for (const o of this.origins.values()) o.close();
    this.origins.clear();
    this.targets.clear();
  }

  private target(method: OutboundMethod, url: string): Target {
    const key = `${method} ${url}`;
    let t = this.targets.get(key);
    if (t) return t;
    const u = new URL(url);
    const tls = u.protocol === 'https:';
    if (!tls && u.protocol !== 'http:') throw new Error(`not an http(s) URL: ${u.protocol}`);
    const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    const port = Number(u.port) || (tls ? 443 : 80);
    // A literal address never reaches a lookup: it is judged here, before the URL is cached (the policy does not change).
    const refused = this.options.outbound && isIP(host) ? this.options.outbound.refusal(host) : null;
    if (refused) throw new TargetNotAllowedError(host, `it is ${refused}`);
    const originKey = `${u.protocol}//${u.host}`;
    let origin = this.origins.get(originKey);
    if (!origin) {
      origin = new Origin(tls, host, port, this.options);
      this.origins.set(originKey, origin);
    }
    t = { origin, start: `${method} ${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\n` };
    // A bound keeps a misbehaving caller from growing this without end; origins with nothing open go too.
    if (this.targets.size >= MAX_TARGETS) {
      this.targets.clear();
      for (const [k, o] of this.origins) if (o !== origin && o.unused()) this.origins.delete(k);
    }
    this.targets.set(key, t);
    return t;
  }
}

function requestBytes(start: string, headers: Record<string, string> | undefined, body: string | Buffer | undefined): string | Buffer {
  let s = start;
  for (const name in headers) {
    const value = headers[name]!;
    if (!TOKEN.test(name)) throw new Error(`invalid header name ${JSON.stringify(name)}`);
    if (BAD_VALUE.test(value)) throw new Error(`invalid character in the value of header ${name}`);
    s += `${name}: ${value}\r\n`;
  }
  if (body === undefined) return s + '\r\n';
  if (typeof body === 'string') return s + `content-length: ${Buffer.byteLength(body)}\r\n\r\n` + body;
  return Buffer.concat([Buffer.from(s + `content-length: ${body.length}\r\n\r\n`, 'latin1'), body]);
}

/** The connections to one scheme, host and port. */
class Origin implements ConnectionOwner {
  private readonly idle: Http1Connection[] = [];
  private readonly waiting: Exchange[] = [];
  private readonly all = new Set<Http1Connection>();
  private readonly maxSockets: number;

  constructor(readonly tls: boolean, readonly host: string, readonly port: number, private readonly options: OutboundHttpOptions) {
    this.maxSockets = options.maxSocketsPerOrigin ?? 64;
  }

  run(ex: Exchange): void {
    let conn = this.idle.pop();
    // One the server has just ended (its close not yet seen) would fail the request: skip it.
    while (conn && !conn.usable()) {
      conn.destroy();
      conn = this.idle.pop();
    }
    if (conn) conn.start(ex);
    else if (this.all.size < this.maxSockets) this.connect().start(ex);
    else this.waiting.push(ex);
  }

  /** Drops a request that is still waiting for a connection (its deadline passed). */
  forget(ex: Exchange): void {
    const i = this.waiting.indexOf(ex);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  release(conn: Http1Connection): void {
    const next = this.waiting.shift();
    if (next) conn.start(next);
    else this.idle.push(conn);
  }

  closed(conn: Http1Connection): void {
    this.all.delete(conn);
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
    const next = this.waiting.shift();
    if (next) this.connect().start(next);
  }

  closeIdle(): void {
    for (const c of this.idle.splice(0)) c.destroy();
  }

  /** No connection open and no request waiting: may be dropped and made again when next needed. */
  unused(): boolean {
    return this.all.size === 0 && this.waiting.length === 0;
  }

  close(): void {
    for (const ex of this.waiting.splice(0)) finish(ex, new Error('outbound HTTP client closed'));
    for (const c of [...this.all]) c.destroy();
  }

  private connect(): Http1Connection {
    // The policy's lookup resolves and checks the name for this connection, and the socket connects to
    // the answer it checked (no second resolution a rebinding name could answer differently).
    const lookup = this.options.outbound?.lookup;
    const socket = this.tls
      ? tlsConnect({
        host: this.host, port: this.port, servername: isIP(this.host) ? undefined : this.host, ALPNProtocols: ['http/1.1'], ca: this.options.ca, lookup,
      })
      : netConnect({ host: this.host, port: this.port, lookup });
    socket.setNoDelay(true);
    const conn = new Http1Connection(socket, this);
    this.all.add(conn);
    return conn;
  }
}
