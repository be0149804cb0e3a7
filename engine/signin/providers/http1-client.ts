import { isIP, connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { TargetNotAllowedError, type OutboundPolicy } from '../../net/outbound-target.js';

/**
 * A small HTTP/1.1 client for the providers' one kind of call: a POST with a
 * body, on keep-alive connections pooled per origin, answered with a status
 * and a bounded body.
 *
 * Why not node:http: in bench/otp-signin's profile the http module's client
 * (ClientRequest, the agent's socket hand-over, its parser and stream
 * plumbing) took about a quarter of the service's busy time per phone
 * sign-in, more than the request's own Redis script. Here a request is one
 * string and one socket write, the answer is parsed from the bytes that
 * arrived. It reads what a provider may send: a Content-Length body, a
 * chunked one, or one ended by closing the connection; interim 1xx answers
 * are skipped. Certificates are checked as tls.connect does by default.
 * Redirects are never followed: a 3xx is an answer like any other, so a
 * provider cannot send the request (and its credentials) somewhere else.
 * With an OutboundPolicy, every new connection resolves its host through the
 * policy and connects to the address checked (IP literals are checked before).
 */

/** Sockets one origin may hold open at once (node's agent had the same bound); more requests wait for one. */
const MAX_SOCKETS = 64;
/**
 * An idle connection is closed after this. Under the 5 s keep-alive of common
 * servers (Apache's default), so a request is rarely written onto a
 * connection the server is closing at that moment.
 */
const IDLE_MS = 4_000;
/** An answer's status line and headers larger than this are not a provider's. */
const MAX_HEAD_BYTES = 16 * 1024;
const CRLF = Buffer.from('\r\n');
const EMPTY = Buffer.alloc(0);
const HEAD_END = Buffer.from('\r\n\r\n');
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Header values are ASCII here (keys, tokens, base64): no control character can split the request.
const BAD_VALUE = /[^\t\x20-\x7e]/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})/;

export interface HttpAnswer {
  status: number;
  body: Buffer;
  /** The Retry-After header as sent ('' when none): webhook deliveries honour it on 429 and 503. */
  retryAfter: string;
}

/** A URL split once into what a request needs (kept per URL, see Http1Client.target). */
interface Target {
  origin: Origin;
  /** `POST <path> HTTP/1.1\r\nHost: ...\r\n`: the fixed start of every request to this URL. */
  start: string;
}

/** One pending request: its bytes, its deadline and where the answer goes. */
interface Exchange {
  resolve(a: HttpAnswer): void;
  reject(err: Error): void;
  data: string;
  maxBody: number;
  timer: NodeJS.Timeout | undefined;
  /** The connection carrying it, once it has one. */
  conn: Conn | null;
  done: boolean;
}

export interface Http1ClientOptions {
  /** Certificates to trust instead of Node's bundled CAs (tests with a local HTTPS server); absent: the default. */
  ca?: string | Buffer;
  /** Where connections may go (engine/net/outbound-target.ts); absent: anywhere (tests of the client itself). */
  outbound?: OutboundPolicy;
}

export class Http1Client {
  private readonly origins = new Map<string, Origin>();
  private readonly targets = new Map<string, Target>();

  constructor(private readonly options: Http1ClientOptions = {}) {}

  /**
   * POSTs `body` to `url` with `headers` (lower-case names, no content-length);
   * resolves with the status and body, rejects on a network failure, a
   * malformed answer, an answer body over `maxBody` bytes, or no complete answer
   * within `timeoutMs` (an Error named TimeoutError).
   */
  post(url: string, headers: Record<string, string>, body: string, timeoutMs: number, maxBody: number): Promise<HttpAnswer> {
    let target: Target;
    let data: string;
    try {
      target = this.target(url);
      data = target.start + headerLines(headers) + `content-length: ${Buffer.byteLength(body)}\r\n\r\n` + body;
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise((resolve, reject) => {
      const ex: Exchange = { resolve, reject, data, maxBody, done: false, conn: null, timer: undefined };
      // One deadline for the whole exchange: waiting for a socket, connecting, sending, the answer.
      ex.timer = setTimeout(() => {
        target.origin.forget(ex);
        const conn = ex.conn;
        finish(ex, Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' }));
        conn?.destroy();
      }, timeoutMs);
      target.origin.run(ex);
    });
  }

  /** Closes every idle connection (tests; a process exit closes the rest). */
  closeIdle(): void {
    for (const o of this.origins.values()) o.closeIdle();
  }

  private target(url: string): Target {
    let t = this.targets.get(url);
    if (t) return t;
    const u = new URL(url);
    const tls = u.protocol === 'https:';
    if (!tls && u.protocol !== 'http:') throw new Error(`not an http(s) URL: ${u.protocol}`);
    const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    const port = Number(u.port) || (tls ? 443 : 80);
    // A literal address never reaches a lookup: it is judged here, before the URL is cached (the policy does not change).
    const refused = this.options.outbound && isIP(host) ? this.options.outbound.refusal(host) : null;
    if (refused) throw new TargetNotAllowedError(host, `it is ${refused}`);
    const key = `${u.protocol}//${u.host}`;
    let origin = this.origins.get(key);
    if (!origin) {
      origin = new Origin(tls, host, port, this.options.ca, this.options.outbound);
      this.origins.set(key, origin);
    }
    t = { origin, start: `POST ${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\n` };
    // URLs are a tenant's few provider addresses; a bound keeps a misbehaving caller from growing this without end.
    if (this.targets.size >= 1024) this.targets.clear();
    this.targets.set(url, t);
    return t;
  }
}

function headerLines(headers: Record<string, string>): string {
  let s = '';
  for (const name in headers) {
    const value = headers[name]!;
    if (!TOKEN.test(name)) throw new Error(`invalid header name ${JSON.stringify(name)}`);
    if (BAD_VALUE.test(value)) throw new Error(`invalid character in the value of header ${name}`);
    s += `${name}: ${value}\r\n`;
  }
  return s;
}

function finish(ex: Exchange, err: Error | null, answer?: HttpAnswer): void {
  if (ex.done) return;
  ex.done = true;
  clearTimeout(ex.timer);
  if (err) ex.reject(err);
  else ex.resolve(answer!);
}

/** The connections to one scheme, host and port. */
class Origin {
  private readonly idle: Conn[] = [];
  private readonly waiting: Exchange[] = [];
  private open = 0;

  constructor(readonly tls: boolean, readonly host: string, readonly port: number, private readonly ca: string | Buffer | undefined,
    private readonly outbound: OutboundPolicy | undefined) {}

  run(ex: Exchange): void {
    let conn = this.idle.pop();
    // One the server has just ended (its close not yet seen) would fail the request: skip it.
    while (conn && !conn.usable()) {
      conn.destroy();
      conn = this.idle.pop();
    }
    if (conn) conn.start(ex);
    else if (this.open < MAX_SOCKETS) this.connect().start(ex);
    else this.waiting.push(ex);
  }

  /** Drops a request that is still waiting for a socket (its deadline passed). */
  forget(ex: Exchange): void {
    const i = this.waiting.indexOf(ex);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  /** A connection finished its answer and may be used again. */
  release(conn: Conn): void {
    const next = this.waiting.shift();
    if (next) conn.start(next);
    else this.idle.push(conn);
  }

  /** A connection is gone; a waiting request gets a new one. */
  closed(conn: Conn): void {
    this.open--;
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
    const next = this.waiting.shift();
    if (next) this.connect().start(next);
  }

  closeIdle(): void {
    for (const c of this.idle.splice(0)) c.destroy();
  }

  private connect(): Conn {
    this.open++;
    // The policy's lookup resolves and checks the name for this connection, and the socket connects to
    // the answer it checked (no second resolution a rebinding name could answer differently).
    const lookup = this.outbound?.lookup;
    const socket = this.tls
      ? tlsConnect({
        host: this.host, port: this.port, servername: isIP(this.host) ? undefined : this.host, ALPNProtocols: ['http/1.1'], ca: this.ca, lookup,
      })
      : netConnect({ host: this.host, port: this.port, lookup });
    socket.setNoDelay(true);
    return new Conn(socket, this);
  }
}

/**
 * One connection and the answer it is reading. Bytes are kept until the
 * answer is whole (answers are small and bounded), then parsed in one go.
 */
class Conn {
  private ex: Exchange | null = null;
  private buf: Buffer = EMPTY;
  /** Where the body starts once the head is read, or -1. */
  private bodyAt = -1;
  private status = 0;
  private length = -1;
  private chunked = false;
  private retryAfter = '';
  private keepAlive = true;
  private dead = false;

  constructor(private readonly socket: Socket, private readonly origin: Origin) {
    socket.on('data', (c: Buffer) => this.data(c));
    socket.on('error', (err: Error) => this.fail(err));
    socket.on('close', () => this.gone());
    // Inactivity: an idle connection is closed (IDLE_MS); one carrying a request is left to its deadline.
    socket.setTimeout(IDLE_MS);
    socket.on('timeout', () => { if (!this.ex) this.destroy(); });
  }

  start(ex: Exchange): void {
    ex.conn = this;
    this.ex = ex;
    this.buf = EMPTY;
    this.bodyAt = -1;
    this.socket.write(ex.data);
  }

  usable(): boolean {
    return !this.dead && this.socket.writable;
  }

  destroy(): void {
    if (this.dead) return;
    this.dead = true;
    this.socket.destroy();
  }

  private data(chunk: Buffer): void {
    const ex = this.ex;
    // Bytes nobody asked for: the connection is out of step; close it.
    if (!ex) { this.destroy(); return; }
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    try {
      this.parse(ex);
    } catch (err) {
      this.destroy();
      finish(ex, err as Error);
      this.ex = null;
    }
  }

  private parse(ex: Exchange): void {
    while (this.bodyAt < 0) {
      const end = this.buf.indexOf(HEAD_END);
      if (end < 0) {
        if (this.buf.length > MAX_HEAD_BYTES) throw new Error('answer head too large');
        return;
      }
      this.head(this.buf.toString('latin1', 0, end));
      // An interim answer (100 Continue and the like) precedes the real one.
      if (this.status >= 100 && this.status < 200) {
        this.buf = this.buf.subarray(end + 4);
        continue;
      }
      this.bodyAt = end + 4;
    }
    const body = this.body(ex.maxBody);
    if (!body) return;
    this.ex = null;
    finish(ex, null, { status: this.status, body: body.data, retryAfter: this.retryAfter });
    if (this.keepAlive && body.rest === 0 && !this.dead) this.origin.release(this);
    else this.destroy();
  }

  private head(text: string): void {
    const lines = text.split('\r\n');
    const m = STATUS_LINE.exec(lines[0] ?? '');
    if (!m) throw new Error('not an HTTP/1.x answer');
    this.status = Number(m[2]);
    this.keepAlive = m[1] === '1';
    this.length = -1;
    this.chunked = false;
    this.retryAfter = '';
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0) throw new Error('malformed answer header');
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim().toLowerCase();
      if (name === 'content-length') {
        if (!/^\d+$/.test(value) || (this.length >= 0 && this.length !== Number(value))) throw new Error('bad content-length');
        this.length = Number(value);
      } else if (name === 'transfer-encoding') {
        this.chunked = value.split(',').map((v) => v.trim()).includes('chunked');
      } else if (name === 'retry-after') {
        this.retryAfter = value;
      } else if (name === 'connection') {
        const tokens = value.split(',').map((v) => v.trim());
        if (tokens.includes('close')) this.keepAlive = false;
      }
    }
    if (this.chunked) this.length = -1;
  }

  /** The whole body and how many bytes came after it, or null while more must arrive. */
  private body(max: number): { data: Buffer; rest: number } | null {
    const b = this.buf;
    const at = this.bodyAt;
    if (this.status === 204 || this.status === 304) return { data: EMPTY, rest: b.length - at };
    if (this.chunked) return this.chunks(max);
    if (this.length >= 0) {
      if (this.length > max) throw new Error(`answer larger than ${max} bytes`);
      if (b.length - at < this.length) return null;
      return { data: b.subarray(at, at + this.length), rest: b.length - at - this.length };
    }
    // No length and not chunked: the body ends when the server closes (gone() completes it).
    this.keepAlive = false;
    if (b.length - at > max) throw new Error(`answer larger than ${max} bytes`);
    return null;
  }

  private chunks(max: number): { data: Buffer; rest: number } | null {
    const b = this.buf;
    const parts: Buffer[] = [];
    let size = 0;
    let pos = this.bodyAt;
    for (;;) {
      const eol = b.indexOf(CRLF, pos);
      if (eol < 0) return null;
      const sizeText = b.toString('latin1', pos, eol).split(';')[0]!.trim();
      if (!/^[0-9a-fA-F]{1,8}$/.test(sizeText)) throw new Error('bad chunk size');
      const n = parseInt(sizeText, 16);
      pos = eol + 2;
      if (n === 0) {
        // Trailers (usually none) end with an empty line.
        if (b.length - pos >= 2 && b[pos] === 13 && b[pos + 1] === 10) return { data: Buffer.concat(parts, size), rest: b.length - pos - 2 };
        const end = b.indexOf(HEAD_END, pos - 2);
        return end < 0 ? null : { data: Buffer.concat(parts, size), rest: b.length - end - 4 };
      }
      size += n;
      if (size > max) throw new Error(`answer larger than ${max} bytes`);
      if (b.length < pos + n + 2) return null;
      parts.push(b.subarray(pos, pos + n));
      pos += n + 2;
    }
  }

  private fail(err: Error): void {
    const ex = this.ex;
    this.ex = null;
    this.destroy();
    if (ex) finish(ex, err);
  }

  private gone(): void {
    this.dead = true;
    const ex = this.ex;
    this.ex = null;
    if (ex) {
      // A body that runs to the end of the connection is whole now; anything else was cut off.
      if (this.bodyAt >= 0 && !this.chunked && this.length < 0) finish(ex, null, { status: this.status, body: this.buf.subarray(this.bodyAt), retryAfter: this.retryAfter });
      else finish(ex, new Error('connection closed before the answer was complete'));
    }
    this.origin.closed(this);
  }
}
