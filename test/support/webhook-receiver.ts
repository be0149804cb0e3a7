import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got: what it saw, when, and what it answered. */
export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** ms (Date.now) when the request's body was whole. */
  at: number;
  /** The status it answered; 0 while it has not (or the connection went before it could). */
  answered: number;
}

/** How a receiver answers a request: a status (and headers), after `delayMs` if given, or once `heldUntil` resolves. */
export interface Reply {
  status: number;
  headers?: Record<string, string>;
  /** The answer's body (default 'ok'). */
  body?: string;
  delayMs?: number;
  /** The test lets the answer go: a sender kept busy exactly as long as the test needs, not for a guessed time. */
  heldUntil?: Promise<void>;
}

/**
 * A webhook receiver on loopback for tests: records every request and
 * answers through `reply` (default 200). Waits are event-driven: `next(n)`
 * resolves when the n-th request (1-based) has arrived, `answered(pred)`
 * when the requests answered satisfy pred. A reply with `delayMs` is the
 * receiver being slow, not the test waiting.
 */
export class WebhookReceiver {
  readonly requests: Received[] = [];
  reply: (r: Received, index: number) => Reply = () => ({ status: 200 });
  private waiters: { check: () => boolean; resolve: () => void }[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(path = '/hook'): Promise<WebhookReceiver> {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const rx = new WebhookReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`);
    server.on('request', (req, res) => rx.handle(req, res));
    return rx;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: Received = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now(), answered: 0 };
      const index = this.requests.push(r) - 1;
      const reply = this.reply(r, index);
      const answer = (): void => {
        // A sender that gave up (its deadline, or its process killed) is gone: nothing was answered to it.
        if (res.destroyed || req.socket.destroyed) { this.notify(); return; }
        res.writeHead(reply.status, reply.headers ?? {});
        res.end(reply.body ?? 'ok', () => { r.answered = reply.status; this.notify(); });
      };
      this.notify();
      if (reply.heldUntil) {
        void reply.heldUntil.then(answer);
      } else if (reply.delayMs) {
        const t = setTimeout(() => { this.timers.delete(t); answer(); }, reply.delayMs);
        this.timers.add(t);
      } else answer();
    });
  }

  private notify(): void {
    this.waiters = this.waiters.filter((w) => {
      if (!w.check()) return true;
      w.resolve();
      return false;
    });
  }

  /** Resolves when `check` holds (checked at every request and answer), or rejects after `timeoutMs`. */
  when(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`receiver: ${what} not seen in ${timeoutMs} ms; got ${this.requests.length} requests`)), timeoutMs);
      this.waiters.push({ check, resolve: () => { clearTimeout(t); resolve(); } });
    });
  }

  /** Resolves when at least `n` requests have arrived. */
  next(n: number, timeoutMs?: number): Promise<void> {
    return this.when(() => this.requests.length >= n, `${n} requests`, timeoutMs);
  }

  /** Requests answered 2xx, per X-Webhook-Id. */
  deliveredPerId(): Map<string, number> {
    const m = new Map<string, number>();
    for (const r of this.requests) {
      if (r.answered >= 200 && r.answered < 300) {
        const id = String(r.headers['x-webhook-id']);
        m.set(id, (m.get(id) ?? 0) + 1);
      }
    }
    return m;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
