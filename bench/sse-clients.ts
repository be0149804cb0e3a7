import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';

/**
 * A client process of bench/sse-fanout.ts: COUNT raw TCP connections, each an
 * EventSource-like GET of PATH on HOST:PORT that stays open, reading
 * everything. Raw sockets, not http.request: 5,000 of them must cost the
 * client as little as possible, since the client shares the 2 cores with the
 * server it measures.
 *
 * Per frame id it keeps how many connections got it and when the last one
 * did (wall clock in ms with fractions, comparable across processes), which
 * is the "reached all clients" time. Frames without an id (the retry hint,
 * heartbeats) are not counted.
 *
 * Protocol with the parent: argv host port path count; stdout
 * `{"ready":true,"connected":n,"failed":n,"firstError":...}` once every
 * connection answered 200 (or failed); on a stdin line `report`, a line
 * `{"done":true,"ids":{id:[count,lastMs,firstMs]},"open":n}` and the counts
 * start again; on `close` (or stdin's end) it closes everything and exits.
 */

const [host = '127.0.0.1', portArg = '0', path = '/', countArg = '0'] = process.argv.slice(2);
const PORT = Number(portArg);
const COUNT = Number(countArg);
/** Connections being opened at once: enough to be quick, few enough not to overflow the server's accept backlog. */
const WAVE = 250;

const now = (): number => performance.timeOrigin + performance.now();
const request = Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}:${PORT}\r\nAccept: text/event-stream\r\n\r\n`);

/** id -> [connections that got it, when the last did, when the first did] */
let seen = new Map<string, [number, number, number]>();
const sockets: Socket[] = [];
let connected = 0;
let failed = 0;
let firstError: string | undefined;

function record(id: string, at: number): void {
  const s = seen.get(id);
  if (s) {
    s[0]++;
    s[1] = at;
  } else {
    seen.set(id, [1, at, at]);
  }
}

/** Opens one stream; resolves when its status line arrived (200 or not) or it failed. */
function open(): Promise<void> {
  return new Promise((resolve) => {
    const sock = connect({ host, port: PORT });
    sockets.push(sock);
    let status = false;
    let tail = '';
    const fail = (why: string): void => {
      if (status) return;
      status = true;
      failed++;
      firstError ??= why;
      resolve();
    };
    sock.setNoDelay(true);
    sock.on('connect', () => { sock.write(request); });
    sock.on('error', (err) => fail(err.message));
    sock.on('close', () => fail('closed before answering'));
    sock.on('data', (chunk: Buffer) => {
      const at = now();
      // latin1: one char per byte, no decoder state; the frames are ASCII.
      const text = tail + chunk.toString('latin1');
      if (!status) {
        status = true;
        if (text.startsWith('HTTP/1.1 200')) connected++;
        else { failed++; firstError ??= text.slice(0, 120); }
        resolve();
      }
      const lines = text.split('\n');
      tail = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('id: ')) record(line.slice(4), at);
    });
  });
}

async function main(): Promise<void> {
  for (let i = 0; i < COUNT; i += WAVE) {
    const wave: Promise<void>[] = [];
    for (let j = i; j < Math.min(COUNT, i + WAVE); j++) wave.push(open());
    await Promise.all(wave);
  }
  process.stdout.write(JSON.stringify({ ready: true, connected, failed, firstError }) + '\n');
  const lines = createInterface({ input: process.stdin });
  const close = (): void => {
    for (const s of sockets) s.destroy();
    process.exit(0);
  };
  lines.on('line', (cmd) => {
    if (cmd === 'report') {
      const open = sockets.filter((s) => !s.destroyed).length;
      process.stdout.write(JSON.stringify({ done: true, ids: Object.fromEntries(seen), open }) + '\n');
      seen = new Map();
    } else if (cmd === 'close') {
      close();
    }
  });
  lines.on('close', close);
}

void main();
