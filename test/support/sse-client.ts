import { request, type IncomingMessage } from 'node:http';
import { arrivalsRead } from './poll.js';

/** One block of a server-sent-event stream: its fields, or a comment. */
export interface SseFrame {
  id?: string;
  data?: string;
  retry?: number;
  /** A comment line's text (`: hb` gives 'hb'). */
  comment?: string;
}

/** The parsed `data:` of an invalidation. */
export interface Invalidation {
  kind: string;
  ts: string;
  site_id?: string;
}

export interface SseConnection {
  status: number;
  headers: IncomingMessage['headers'];
  /** The body when the answer is no stream (an error). */
  body: string;
  /** Every frame so far, comments included, in order. */
  frames: SseFrame[];
  /** The data frames so far, parsed, with their ids. */
  events(): (Invalidation & { id?: string })[];
  /** Waits for a frame (seen or to come) matching `pred`; fails after `timeoutMs`. */
  waitFor(pred: (f: SseFrame) => boolean, timeoutMs?: number, what?: string): Promise<SseFrame>;
  /** Resolves when the server closes the stream. */
  ended: Promise<void>;
  close(): void;
}

/**
 * A raw HTTP client of one stream (node:http, no EventSource): resolves once
 * the status is in and, for a 200, the first frame (the retry hint) has
 * arrived, which the server sends only once events will reach the client.
 */
export async function openStream(base: string, path: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', headers: { accept: 'text/event-stream', ...headers }, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      const frames: SseFrame[] = [];
      const waiters: { pred: (f: SseFrame) => boolean; done: (f: SseFrame) => void }[] = [];
      let text = '';
      let endedResolve!: () => void;
      const ended = new Promise<void>((r) => { endedResolve = r; });
      const conn: SseConnection = {
        status: res.statusCode ?? 0, headers: res.headers, body: '', frames,
        events: () => frames.filter((f) => f.data !== undefined).map((f) => ({ ...(JSON.parse(f.data!) as Invalidation), id: f.id })),
        waitFor: (pred, timeoutMs = 5000, what = 'frame') => {
          const seen = frames.find(pred);
          if (seen) return Promise.resolve(seen);
          return new Promise((ok, fail) => {
            const t = setTimeout(() => void arrivalsRead().then(() => {
              const late = frames.find(pred);
              if (late) ok(late);
              else fail(new Error(`no ${what} within ${timeoutMs} ms; frames: ${JSON.stringify(frames.slice(-10))}`));
            }), timeoutMs);
            waiters.push({ pred, done: (f) => { clearTimeout(t); ok(f); } });
          });
        },
        ended,
        close: () => { req.destroy(); },
      };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        if (conn.status !== 200) {
          conn.body += chunk;
          return;
        }
        text += chunk;
        let cut: number;
        while ((cut = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, cut);
          text = text.slice(cut + 2);
          const frame = parse(block);
          if (!frame) continue;
          frames.push(frame);
          for (let i = waiters.length - 1; i >= 0; i--) {
            if (waiters[i]!.pred(frame)) waiters.splice(i, 1)[0]!.done(frame);
          }
        }
      });
      res.on('end', endedResolve);
      res.on('close', endedResolve);
      res.on('error', endedResolve);
      if (conn.status !== 200) {
        res.on('end', () => resolve(conn));
        return;
      }
      conn.waitFor((f) => f.retry !== undefined, 5000, 'retry hint').then(() => resolve(conn), reject);
    });
    req.end();
  });
}

function parse(block: string): SseFrame | null {
  const f: SseFrame = {};
  let any = false;
  for (const line of block.split('\n')) {
    if (line === '') continue;
    any = true;
    if (line.startsWith(':')) {
      f.comment = line.slice(1).trim();
      continue;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') f.id = value;
    else if (field === 'data') f.data = f.data === undefined ? value : `${f.data}\n${value}`;
    else if (field === 'retry') f.retry = Number(value);
  }
  return any ? f : null;
}
