import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';

/**
 * A client process of bench/sse-fanout.ts: COUNT raw TCP connections, each an
 * EventSource-like GET of PATH on HOST:PORT that stays open, reading
 * everything. Raw sockets, not http.request, each reading into one shared
 * buffer: 5,000 of them must cost the client as little as possible, since
 * the client shares the 2 cores with the server it measures (in a venue the
 * clients are browsers on other machines).
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

/**
 * Every socket reads into this one buffer (net's `onread`): no Buffer per
 * read, no stream machinery per chunk. The callback handles the bytes at
 * once, so one buffer serves them all.
 */
const READ_BUFFER = Buffer.alloc(64 * 1024);
const NL = 0x0a;
const ID_PREFIX = Buffer.from('id: ');

/** Opens one stream; resolves when its status line arrived (200 or not) or it failed. */
function open(): Promise<void> {
  return new Promise((resolve) => {
    let status = false;
    /** The start of a line that the last read cut off (rare: a frame is one write). */
    let tail = '';
    const fail = (why: string): void => {
      if (status) return;
      status = true;
      failed++;
      firstError ??= why;
      resolve();
    };
    const onBytes = (n: number, buf: Buffer): boolean => {
      const at = now();
      if (!status) {
        status = true;
        if (buf.toString('latin1', 0, 12) === 'HTTP/1.1 200') connected++;
        else { failed++; firstError ??= buf.toString('latin1', 0, Math.min(n, 120)); }
        resolve();
      }
      // Lines starting "id: " name a frame; everything else (headers, chunk sizes, data, comments) is skipped.
      let line = 0;
      for (let i = 0; i < n; i++) {
        if (buf[i] !== NL) continue;
        if (tail !== '') {
          const whole = tail + buf.toString('latin1', 0, i);
          tail = '';
          if (whole.startsWith('id: ')) record(whole.slice(4), at);
        } else if (i - line > 4 && buf.compare(ID_PREFIX, 0, 4, line, line + 4) === 0) {
          record(buf.toString('latin1', line + 4, i), at);
        }
        line = i + 1;
      }
      if (line < n) tail += buf.toString('latin1', line, n);
      return true;
    };
    const sock = connect({ host, port: PORT, onread: { buffer: READ_BUFFER, callback: onBytes } });
    sockets.push(sock);
    sock.setNoDelay(true);
    sock.on('connect', () => { sock.write(request); });
    sock.on('error', (err) => fail(err.message));
    sock.on('close', () => fail('closed before answering'));
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
