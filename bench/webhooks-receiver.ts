import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

/**
 * The fast receiver of bench/webhooks.ts, in a process of its own: answers
 * every delivery 200 at once, counts them, notes each one's lag (receipt time
 * minus the event's `created_at`), counts repeated `X-Webhook-Id`s (a delivery
 * sent again after its 2xx), and checks `X-Signature-256` (HMAC-SHA256 of the
 * raw body, compared in constant time) on every SAMPLE-th delivery and on the
 * first of each path.
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

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      res.writeHead(200, { 'content-length': '0' }).end();
      const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      this.note(req, raw, now);
    });
  };

  private note(req: IncomingMessage, raw: Buffer, now: number): void {
    if (this.deliveries++ === 0) this.firstAt = now;
    this.lastAt = now;
    const id = req.headers['x-webhook-id'];
    const sig = req.headers['x-signature-256'];
    if (typeof id !== 'string' || typeof sig !== 'string') { this.malformed++; return; }
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
    const path = req.url ?? '';
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
  const server = createServer({ keepAliveTimeout: 30_000 }, receiver.handle);
  server.listen(0, '127.0.0.1', () => {
    const a = server.address();
    process.stdout.write(JSON.stringify({ ready: true, port: typeof a === 'object' && a ? a.port : 0 }) + '\n');
  });
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'reset') receiver.reset();
    if (line === 'report') process.stdout.write(JSON.stringify({ done: true, report: receiver.report() }) + '\n');
  });
  const stop = (): void => { server.close(); process.exit(0); };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
