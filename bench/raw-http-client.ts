import { connect, type Socket } from 'node:net';

/**
 * A lean HTTP/1.1 keep-alive client for load generators: raw sockets, one request
 * at a time per connection, up to `maxSockets` connections, requests beyond wait in
 * a FIFO (their wait counts in the caller's latency). It reads only the status
 * line, Content-Length or chunked framing, and the body. node:http's client cost
 * the stadium storm about a millisecond of its own CPU per guest (two to four
 * requests), which on two cores is load the service never sees; this is the same
 * idea as the fake carrier's raw server (fake-carrier.ts). Same methods as
 * JsonClient, so a bench can take either.
 *
 * What a request costs here, kept small because the storm sends thousands a
 * second from one thread (bench/results/stadium-storm.md, the generator's CPU):
 * one buffer per request, head and body written into it at once (one write);
 * no timer per request (one sweep a second finds the overdue); every connection
 * reads into one buffer through net's `onread` (no allocation and no stream
 * event per read); a page's body is counted as it arrives, never kept; only a
 * JSON answer's few bytes are copied out.
 */

export interface RawAnswer { status: number; body: Buffer; bytes: number }

interface Job {
  request: Buffer; keepBody: boolean; startedAt: number;
  resolve: (a: RawAnswer) => void; reject: (e: Error) => void;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

class Conn {
  job: Job | undefined;
  dead = false;
  /** The answer being read: its head's bytes until the head is complete, then its body's. */
  private pending: Buffer | undefined;
  private status = 0;
  /** Body bytes still to come (-1: the head is not read yet; -2: chunked, gathered in `pending`). */
  private left = -1;
  private bodyParts: Buffer[] = [];
  private bytes = 0;
  private closeAfter = false;

  constructor(readonly socket: Socket, private readonly onIdle: (c: Conn) => void, private readonly onDead: (c: Conn) => void) {
    socket.setNoDelay(true);
    socket.on('error', (err) => this.die(err));
    socket.on('close', () => this.die(Object.assign(new Error('socket closed'), { code: 'ECONNRESET' })));
  }

  run(job: Job): void {
    this.job = job;
    this.left = -1;
    this.bytes = 0;
    this.socket.write(job.request);
  }

  private die(err: Error): void {
    if (this.dead) return;
    this.dead = true;
    const job = this.job;
    this.job = undefined;
    if (job) job.reject(err);
    this.onDead(this);
  }

  /**
   * Bytes read from the socket, in the client's one read buffer (net's `onread`: no buffer and no
   * stream event per read): valid during this call only, so whatever is kept past it is copied.
   */
  read(chunk: Buffer): void {
    const job = this.job;
    if (!job) return;
    let buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    if (this.left === -1) {
      const headEnd = buf.indexOf(CRLFCRLF);
      if (headEnd < 0) { this.pending = Buffer.from(buf); return; }
      const head = buf.toString('latin1', 0, headEnd);
      this.status = Number(head.slice(9, 12));
      this.closeAfter = /\r\nconnection: *close/i.test(head);
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      buf = buf.subarray(headEnd + 4);
      if (length) {
        this.left = Number(length[1]);
      } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
        this.left = -2;
      } else {
        // No framing: the body runs to the close; not what the service sends.
        this.socket.destroy(new Error('answer without Content-Length or chunked framing'));
        return;
      }
    }
    if (this.left === -2) { this.chunked(buf); return; }
    const take = Math.min(this.left, buf.length);
    if (job.keepBody && take > 0) this.bodyParts.push(Buffer.from(buf.subarray(0, take)));
    this.bytes += take;
    this.left -= take;
    if (this.left > 0) return;
    // Anything after the body would be an answer to no request: one request at a time per connection.
    const parts = this.bodyParts;
    this.bodyParts = [];
    const body = parts.length === 1 ? parts[0]! : parts.length === 0 ? EMPTY : Buffer.concat(parts);
    this.done(job, body, this.bytes);
  }

  /** Chunked framing (not what the service sends for these answers, so not the fast path): gathered, then decoded. */
  private chunked(buf: Buffer): void {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = buf.indexOf('\r\n', at);
      if (eol < 0) { this.pending = Buffer.from(buf); return; }
      const size = parseInt(buf.toString('latin1', at, eol), 16);
      if (buf.length < eol + 2 + size + 2) { this.pending = Buffer.from(buf); return; }
      if (size === 0) break;
      parts.push(buf.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    const body = Buffer.concat(parts); // a copy: the read buffer is reused
    this.done(this.job!, body, body.length);
  }

  private done(job: Job, body: Buffer, bytes: number): void {
    this.job = undefined;
    this.left = -1;
    job.resolve({ status: this.status, body, bytes });
    if (this.closeAfter) { this.socket.destroy(); return; }
    this.onIdle(this);
  }
}

const EMPTY = Buffer.alloc(0);

export class RawHttpClient {
  private readonly idle: Conn[] = [];
  private readonly busy = new Set<Conn>();
  /** Requests waiting for a connection, oldest first (`head` is the next one: no O(n) shift). */
  private queue: Job[] = [];
  private head = 0;
  private open = 0;
  private closed = false;
  private readonly sweep: NodeJS.Timeout;
  private readonly hostLine: string;
  /** Every connection reads into this one buffer (one thread: a read is handled before the next). */
  private readonly readBuffer = Buffer.allocUnsafe(64 * 1024);

  /** `port` may change (a restarted service): new connections go there. */
  constructor(private readonly host: string, public port: number, private readonly maxSockets: number, private readonly timeoutMs = 10_000) {
    this.hostLine = `host: ${host}\r\n`;
    // One timer for every request in flight, not one each: a request past its time-out has its connection destroyed.
    this.sweep = setInterval(() => this.expire(), Math.min(1000, timeoutMs / 4));
    this.sweep.unref();
  }

  post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
    return this.send('POST', path, body, headers);
  }

  async send(method: string, path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any }> {
    const a = await this.request(method, path, JSON.stringify(body), headers, true);
    const text = a.body.toString();
    try { return { status: a.status, json: text ? JSON.parse(text) : null }; } catch { return { status: a.status, json: text }; }
  }

  /** A GET whose body is counted as it arrives, neither kept nor parsed: a page. */
  async page(path: string, headers?: Record<string, string>): Promise<{ status: number; bytes: number }> {
    const a = await this.request('GET', path, '', headers, false);
    return { status: a.status, bytes: a.bytes };
  }

  /** Drops the idle connections; waiting requests fail. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweep);
    for (const c of this.idle.splice(0)) c.socket.destroy();
    for (let i = this.head; i < this.queue.length; i++) this.queue[i]!.reject(new Error('client closed'));
    this.queue = [];
    this.head = 0;
  }

  private request(method: string, path: string, body: string, headers: Record<string, string> | undefined, keepBody: boolean): Promise<RawAnswer> {
    let head = `${method} ${path} HTTP/1.1\r\n${this.hostLine}`;
    if (headers) for (const k in headers) head += `${k}: ${headers[k]}\r\n`;
    const bodyBytes = body ? Buffer.byteLength(body) : 0;
    head += body ? `content-type: application/json\r\ncontent-length: ${bodyBytes}\r\n\r\n` : 'content-length: 0\r\n\r\n';
    // Head (ASCII) and body in one buffer: one write, one segment.
    const request = Buffer.allocUnsafe(head.length + bodyBytes);
    request.write(head, 0, 'latin1');
    if (body) request.write(body, head.length, 'utf8');
    return new Promise((resolve, reject) => {
      if (this.closed) { reject(new Error('client closed')); return; }
      this.queue.push({ request, keepBody, startedAt: 0, resolve, reject });
      this.pump();
    });
  }

  private next(): Job | undefined {
    if (this.head >= this.queue.length) return undefined;
    const job = this.queue[this.head]!;
    this.queue[this.head++] = undefined as unknown as Job;
    if (this.head > 1024 && this.head * 2 > this.queue.length) { this.queue = this.queue.slice(this.head); this.head = 0; }
    return job;
  }

  private start(conn: Conn, job: Job): void {
    job.startedAt = performance.now();
    this.busy.add(conn);
    conn.run(job);
  }

  private pump(): void {
    while (this.head < this.queue.length) {
      const conn = this.idle.pop();
      if (conn) { this.start(conn, this.next()!); continue; }
      if (this.open >= this.maxSockets) return;
      this.open++;
      let c: Conn | undefined;
      const socket = connect({ port: this.port, host: this.host, onread: { buffer: this.readBuffer, callback: (n: number, buf: Uint8Array) => {
        c!.read(Buffer.from(buf.buffer, buf.byteOffset, n));
        return true;
      } } });
      c = new Conn(socket, (idle) => {
        this.busy.delete(idle);
        this.idle.push(idle);
        this.pump();
      }, (dead) => {
        this.open--;
        this.busy.delete(dead);
        const at = this.idle.indexOf(dead);
        if (at >= 0) this.idle.splice(at, 1);
        this.pump();
      });
      this.start(c, this.next()!);
    }
  }

  private expire(): void {
    const now = performance.now();
    for (const c of this.busy) {
      if (c.job && now - c.job.startedAt >= this.timeoutMs) c.socket.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' }));
    }
  }
}
