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
 */

export interface RawAnswer { status: number; body: Buffer }

interface Job { head: Buffer; body: Buffer | undefined; resolve: (a: RawAnswer) => void; reject: (e: Error) => void; timer?: NodeJS.Timeout }

class Conn {
  private buf: Buffer = Buffer.alloc(0);
  job: Job | undefined;
  dead = false;
  constructor(readonly socket: Socket, private readonly onIdle: (c: Conn) => void, private readonly onDead: (c: Conn) => void) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', (err) => this.die(err));
    socket.on('close', () => this.die(Object.assign(new Error('socket closed'), { code: 'ECONNRESET' })));
  }

  run(job: Job, timeoutMs: number): void {
    this.job = job;
    job.timer = setTimeout(() => this.socket.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })), timeoutMs);
    this.socket.write(job.body ? Buffer.concat([job.head, job.body]) : job.head);
  }

  private die(err: Error): void {
    if (this.dead) return;
    this.dead = true;
    const job = this.job;
    this.job = undefined;
    if (job) { clearTimeout(job.timer); job.reject(err); }
    this.onDead(this);
  }

  private read(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const job = this.job;
    if (!job) return;
    const headEnd = this.buf.indexOf('\r\n\r\n');
    if (headEnd < 0) return;
    const head = this.buf.toString('latin1', 0, headEnd);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    let body: Buffer;
    let used: number;
    if (length) {
      const n = Number(length[1]);
      if (this.buf.length < headEnd + 4 + n) return;
      body = this.buf.subarray(headEnd + 4, headEnd + 4 + n);
      used = headEnd + 4 + n;
    } else if (/\r\ntransfer-encoding: *chunked/i.test(head)) {
      const parts: Buffer[] = [];
      let at = headEnd + 4;
      for (;;) {
        const eol = this.buf.indexOf('\r\n', at);
        if (eol < 0) return;
        const size = parseInt(this.buf.toString('latin1', at, eol), 16);
        if (this.buf.length < eol + 2 + size + 2) return;
        if (size === 0) { used = eol + 4; break; }
        parts.push(this.buf.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      // No framing: the body runs to the close; not what the service sends.
      this.socket.destroy(new Error('answer without Content-Length or chunked framing'));
      return;
    }
    this.buf = this.buf.subarray(used);
    this.job = undefined;
    clearTimeout(job.timer);
    job.resolve({ status, body: Buffer.from(body) });
    if (/\r\nconnection: *close/i.test(head)) { this.socket.destroy(); return; }
    this.onIdle(this);
  }
}

export class RawHttpClient {
  private readonly idle: Conn[] = [];
  private readonly queue: Job[] = [];
  private open = 0;
  private closed = false;

  /** `port` may change (a restarted service): new connections go there. */
  constructor(private readonly host: string, public port: number, private readonly maxSockets: number, private readonly timeoutMs = 10_000) {}

  post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
    return this.send('POST', path, body, headers);
  }

  async send(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: any }> {
    const data = Buffer.from(JSON.stringify(body));
    const a = await this.request(method, path, data, { 'content-type': 'application/json', ...headers });
    const text = a.body.toString();
    try { return { status: a.status, json: text ? JSON.parse(text) : null }; } catch { return { status: a.status, json: text }; }
  }

  /** A GET whose body is read and counted, not parsed: a page. */
  async page(path: string): Promise<{ status: number; bytes: number }> {
    const a = await this.request('GET', path, undefined, {});
    return { status: a.status, bytes: a.body.length };
  }

  /** Drops the idle connections; waiting requests fail. */
  close(): void {
    this.closed = true;
    for (const c of this.idle.splice(0)) c.socket.destroy();
    for (const j of this.queue.splice(0)) j.reject(new Error('client closed'));
  }

  private request(method: string, path: string, body: Buffer | undefined, headers: Record<string, string>): Promise<RawAnswer> {
    let head = `${method} ${path} HTTP/1.1\r\nhost: ${this.host}:${this.port}\r\n`;
    for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
    head += `content-length: ${body?.length ?? 0}\r\n\r\n`;
    return new Promise((resolve, reject) => {
      if (this.closed) { reject(new Error('client closed')); return; }
      this.queue.push({ head: Buffer.from(head, 'latin1'), body, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length) {
      const conn = this.idle.pop();
      if (conn) { conn.run(this.queue.shift()!, this.timeoutMs); continue; }
      if (this.open >= this.maxSockets) return;
      this.open++;
      const job = this.queue.shift()!;
      const socket = connect(this.port, this.host);
      const c = new Conn(socket, (idle) => { this.idle.push(idle); this.pump(); }, (dead) => {
        this.open--;
        const at = this.idle.indexOf(dead);
        if (at >= 0) this.idle.splice(at, 1);
        this.pump();
      });
      c.run(job, this.timeoutMs);
    }
  }
}
