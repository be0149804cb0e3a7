import type { Socket } from 'node:net';

/**
 * One keep-alive HTTP/1.1 connection of OutboundHttp (outbound-http.ts) and
 * the answer it is reading. Bytes are kept until the answer is whole
 * (answers are small and bounded), then parsed in one go. It reads what a
 * far end may send: a Content-Length body, a chunked one, or one ended by
 * closing the connection; interim 1xx answers are skipped.
 */

/** An idle connection is closed after this; under the 5 s keep-alive of common servers (Apache's default). */
const IDLE_MS = 4_000;
/** An answer's status line and headers larger than this are not a provider's or a webhook receiver's. */
const MAX_HEAD_BYTES = 16 * 1024;
const CRLF = Buffer.from('\r\n');
const EMPTY = Buffer.alloc(0);
const HEAD_END = Buffer.from('\r\n\r\n');
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})/;

/** A whole answer: status, headers (lower-case names; repeated ones joined by ", "), the body. */
export interface Http1Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** One pending request: its bytes, its deadline and where the answer goes. */
export interface Exchange {
  resolve(a: Http1Answer): void;
  reject(err: Error): void;
  data: string | Buffer;
  maxBody: number;
  /** An answer body past maxBody: false fails the request; true ends it there (the status stands, the body cut, the connection closed). */
  cutBody: boolean;
  timer: NodeJS.Timeout | undefined;
  /** The connection carrying it, once it has one. */
  conn: Http1Connection | null;
  done: boolean;
}

/** What owns a connection: takes it back when its answer is read, and hears when it is gone. */
export interface ConnectionOwner {
  release(conn: Http1Connection): void;
  closed(conn: Http1Connection): void;
}

/** Settles an exchange once: its timer stopped, then the answer or the error. */
export function finish(ex: Exchange, err: Error | null, answer?: Http1Answer): void {
  if (ex.done) return;
  ex.done = true;
  clearTimeout(ex.timer);
  if (err) ex.reject(err);
  else ex.resolve(answer!);
}

export class Http1Connection {
  private ex: Exchange | null = null;
  private buf: Buffer = EMPTY;
  /** Where the body starts once the head is read, or -1. */
  private bodyAt = -1;
  private status = 0;
  private headers: Record<string, string> = {};
  private length = -1;
  private chunked = false;
  private keepAlive = true;
  private dead = false;

  constructor(private readonly socket: Socket, private readonly owner: ConnectionOwner) {
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
    const body = this.body(ex.maxBody, ex.cutBody);
    if (!body) return;
    this.ex = null;
    finish(ex, null, { status: this.status, headers: this.headers, body: body.data });
    if (this.keepAlive && body.rest === 0 && !this.dead) this.owner.release(this);
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
    const headers: Record<string, string> = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      if (colon <= 0) throw new Error('malformed answer header');
      const name = line.slice(0, colon).trim().toLowerCase();
      const raw = line.slice(colon + 1).trim();
      const prior = headers[name];
      headers[name] = prior === undefined ? raw : `${prior}, ${raw}`;
      // Only the three headers that frame the answer are read here; the others' values are kept as they came.
      if (name === 'content-length') {
        if (!/^\d+$/.test(raw) || (this.length >= 0 && this.length !== Number(raw))) throw new Error('bad content-length');
        this.length = Number(raw);
      } else if (name === 'transfer-encoding') {
        this.chunked = raw.toLowerCase().split(',').map((v) => v.trim()).includes('chunked');
      } else if (name === 'connection') {
        const tokens = raw.toLowerCase().split(',').map((v) => v.trim());
        if (tokens.includes('close')) this.keepAlive = false;
      }
    }
    this.headers = headers;
    if (this.chunked) this.length = -1;
  }

  /**
   * The whole body and how many bytes came after it, or null while more must arrive. A body past `max` fails,
   * or with `cut` ends the answer there (rest -1: the connection is closed, not reused).
   */
  private body(max: number, cut: boolean): { data: Buffer; rest: number } | null {
    const b = this.buf;
    const at = this.bodyAt;
    const over = (data: Buffer): { data: Buffer; rest: number } => {
      if (!cut) throw new Error(`answer larger than ${max} bytes`);
      return { data: data.subarray(0, max), rest: -1 };
    };
    if (this.status === 204 || this.status === 304) return { data: EMPTY, rest: b.length - at };
    if (this.chunked) return this.chunks(max, over);
    if (this.length >= 0) {
      if (this.length > max) return over(b.subarray(at));
      if (b.length - at < this.length) return null;
      return { data: b.subarray(at, at + this.length), rest: b.length - at - this.length };
    }
    // No length and not chunked: the body ends when the server closes (gone() completes it).
    this.keepAlive = false;
    if (b.length - at > max) return over(b.subarray(at));
    return null;
  }

  private chunks(max: number, over: (data: Buffer) => { data: Buffer; rest: number }): { data: Buffer; rest: number } | null {
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
      if (size > max) return over(Buffer.concat(parts));
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
      if (this.bodyAt >= 0 && !this.chunked && this.length < 0) finish(ex, null, { status: this.status, headers: this.headers, body: this.buf.subarray(this.bodyAt) });
      else finish(ex, new Error('connection closed before the answer was complete'));
    }
    this.owner.closed(this);
  }
}
