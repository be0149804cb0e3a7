import { createHmac, timingSafeEqual } from 'node:crypto';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { loadUws, type HttpRequest, type HttpResponse } from '../http/uws.js';

/**
 * The fast receiver of bench/webhooks.ts, in a process of its own: answers
 * every delivery 200 at once, counts them, notes each one's lag (receipt time
 * minus the event's `created_at`), counts repeated `X-Webhook-Id`s (a delivery
 * sent again after its 2xx), and checks `X-Signature-256` (HMAC-SHA256 of the
 * raw body, compared in constant time) on every SAMPLE-th delivery and on the
 * first of each path.
 *
 * It serves HTTP with uWebSockets.js, not node:http: it shares the machine's two
 * cores with the service it measures, and node:http took about 110 µs of CPU
 * a delivery, as much as the service's dispatcher thread (a receiver elsewhere
 * costs the service nothing).
 *
 * Driven over stdin, one word a line: `reset` (forget what was counted),
 * `report` (print `{"done":true,"report":{...}}` on stdout). Started with the
 * subscriptions' shared secret in WEBHOOK_SECRET; prints `{"ready":true,"port":N}`.
 */
const SAMPLE = 50;

export interface ReceiverReport {
  deliveries: number;
  firstAt: number;
  lastAt: number;
  /** Repeated X-Webhook-Id values (the same delivery received twice). */
  repeats: number;
  signaturesChecked: number;
  signaturesBad: number;
  /** Deliveries without the headers or body the contract names. */
  malformed: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
}

export class Receiver {
  private deliveries = 0;
  private firstAt = 0;
  private lastAt = 0;
  private repeats = 0;
  private checked = 0;
  private bad = 0;
  private malformed = 0;
  private readonly seen = new Set<string>();
  private readonly paths = new Set<string>();
  private lags: number[] = [];

  constructor(private readonly secret: string) {}

  readonly handle = (res: HttpResponse, req: HttpRequest): void => {
    // The request's headers are readable only during this call.
    const id = req.getHeader('x-webhook-id');
    const sig = req.getHeader('x-signature-256');
    const path = req.getUrl();
    const chunks: Buffer[] = [];
    res.onAborted(() => { chunks.length = 0; });
    res.onData((chunk, last) => {
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!last) return;
      const now = Date.now();
      res.cork(() => res.end());
      this.note(id, sig, path, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), now);
    });
  };

  private note(id: string, sig: string, path: string, raw: Buffer, now: number): void {
    if (this.deliveries++ === 0) this.firstAt = now;
    this.lastAt = now;
    if (!id || !sig) { this.malformed++; return; }
    if (this.seen.has(id)) this.repeats++;
    else this.seen.add(id);
    let created = NaN;
    try {
      const body = JSON.parse(raw.toString('utf8')) as { id?: unknown; created_at?: unknown };
      if (typeof body.id !== 'string' || !body.id.startsWith('evt_') || typeof body.created_at !== 'string') this.malformed++;
      else created = Date.parse(body.created_at);
    } catch {
      this.malformed++;
    }
    if (!Number.isNaN(created)) this.lags.push(now - created);
    if (this.deliveries % SAMPLE === 0 || !this.paths.has(path)) {
      this.paths.add(path);
      this.checked++;
      const want = Buffer.from('sha256=' + createHmac('sha256', this.secret).update(raw).digest('hex'));
      const got = Buffer.from(sig);
      if (got.length !== want.length || !timingSafeEqual(got, want)) this.bad++;
    }
  }

  reset(): void {
    this.deliveries = this.repeats = this.checked = this.bad = this.malformed = this.firstAt = this.lastAt = 0;
    this.seen.clear();
    this.paths.clear();
    this.lags = [];
  }

  report(): ReceiverReport {
    const lags = this.lags.slice().sort((a, b) => a - b);
    const pct = (p: number): number => lags[Math.min(lags.length - 1, Math.floor((p / 100) * lags.length))] ?? NaN;
    return {
      deliveries: this.deliveries, firstAt: this.firstAt, lastAt: this.lastAt, repeats: this.repeats, signaturesChecked: this.checked,
      signaturesBad: this.bad, malformed: this.malformed, lagP50Ms: pct(50), lagP99Ms: pct(99), lagMaxMs: lags[lags.length - 1] ?? NaN,
    };
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const receiver = new Receiver(process.env.WEBHOOK_SECRET ?? '');
  const uws = loadUws();
  uws.App().any('/*', receiver.handle).listen('127.0.0.1', 0, (socket) => {
    if (!socket) {
      process.stderr.write('webhooks-receiver: could not listen on 127.0.0.1\n');
      process.exit(1);
    }
    process.stdout.write(JSON.stringify({ ready: true, port: uws.us_socket_local_port(socket) }) + '\n');
  });
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'reset') receiver.reset();
    if (line === 'report') process.stdout.write(JSON.stringify({ done: true, report: receiver.report() }) + '\n');
  });
  const stop = (): void => process.exit(0);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
