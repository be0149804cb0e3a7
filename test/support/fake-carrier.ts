import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake carrier received. */
export interface CarrierRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  /** The JSON body, or null when it was not JSON. */
  json: any;
}

export interface CarrierAnswer {
  status: number;
  body: unknown;
  /** Milliseconds to wait before answering (a slow or hanging provider). */
  delayMs?: number;
  /** Keep answering this for every later request to the path (else it answers one request). */
  always?: boolean;
}

/** Netgsm's OTP SMS route (REST v2). */
export const SMS_PATH = '/sms/rest/v2/otp';
/** The messaging-app type C route. */
export const TYPE_C_PATH = '/v1/otp';

/**
 * A fake SMS / messaging-app carrier on 127.0.0.1: records every request and
 * answers per path what the test configured (default: Netgsm's success,
 * `{"code": "00", "jobid": <n>}`, on both the SMS and the type C route; 404
 * elsewhere). Tests point a tenant's `base_url` at `url`.
 */
export class FakeCarrier {
  readonly requests: CarrierRequest[] = [];
  private readonly answers = new Map<string, CarrierAnswer[]>();
  private jobs = 0;
  private constructor(private readonly server: Server, readonly url: string) {}

  static async start(): Promise<FakeCarrier> {
    let carrier: FakeCarrier | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => void carrier!.answer(req.method ?? '', req.url ?? '', req.headers, Buffer.concat(chunks).toString('utf8'))
        .then((a) => {
          res.writeHead(a.status, { 'content-type': 'application/json' });
          res.end(typeof a.body === 'string' ? a.body : JSON.stringify(a.body));
        }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    carrier = new FakeCarrier(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return carrier;
  }

  /** Answers the next request to `path` with `answer` (queued: one per call, unless `answer.always`). */
  answerNext(path: string, answer: CarrierAnswer): void {
    const q = this.answers.get(path) ?? [];
    q.push(answer);
    this.answers.set(path, q);
  }

  /** Forgets configured answers (back to the default success) and recorded requests; job ids count from 1 again. */
  reset(): void {
    this.answers.clear();
    this.requests.length = 0;
    this.jobs = 0;
  }

  /** Requests to `path` (query stripped). */
  to(path: string): CarrierRequest[] {
    return this.requests.filter((r) => r.path === path);
  }

  /** The last OTP sent to `phone`, from either route: six digits of the SMS text, or type C's `code`. */
  lastCode(phone: string): string | null {
    const domestic = phone.replace(/^\+90/, '');
    for (let i = this.requests.length - 1; i >= 0; i--) {
      const j = this.requests[i]!.json;
      if (!j) continue;
      if (j.to === phone && typeof j.code === 'string') return j.code;
      if (j.no === domestic && typeof j.msg === 'string') return /\b(\d{6})\b/.exec(j.msg)?.[1] ?? null;
    }
    return null;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async answer(method: string, url: string, headers: IncomingHttpHeaders, raw: string): Promise<CarrierAnswer> {
    const path = url.split('?')[0]!;
    let json: any = null;
    try { json = JSON.parse(raw); } catch { /* recorded as raw */ }
    this.requests.push({ method, path, headers, raw, json });
    const q = this.answers.get(path);
    const next = q?.[0];
    let a: CarrierAnswer;
    if (next) {
      if (!next.always) q!.shift();
      a = next;
    } else if (path === SMS_PATH || path === TYPE_C_PATH) {
      a = { status: 200, body: { code: '00', jobid: String(++this.jobs) } };
    } else {
      a = { status: 404, body: { error: 'no such route on the fake carrier' } };
    }
    if (a.delayMs) await new Promise((r) => setTimeout(r, a.delayMs));
    return a;
  }
}
