import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { OutboundPolicy } from '../engine/net/outbound-target.js';
import { OutboundHttp } from '../engine/net/outbound-http.js';
import { say, spawnReady, stopChild, Teardown } from './bench-kit.js';

/**
 * A/B of the two outbound HTTP clients issue 19 asks to compare: the
 * hand-written one (engine/net/outbound-http.ts, until f91c8ef
 * engine/signin/providers/http1-client.ts; named `http1-client` here) and
 * undici's `Pool`, each used as the service would (a webhook-sized JSON POST,
 * a whole-exchange deadline, a bounded answer body, connections through the
 * outbound policy's checked lookup), against one raw receiver in a child
 * process (outbound-receiver.ts). Each window of one client is set against a
 * yardstick measured just before it in the same round: raw keep-alive
 * sockets writing the same request bytes and waiting for the fixed answer,
 * i.e. the receiver and the loopback with no client code at all. Rounds
 * alternate the order (Y A B, Y B A, ...), so drift from the neighbours'
 * load falls on both clients alike. Besides req/s and p50/p99 latency, the
 * client process's CPU per request (process.cpuUsage), the figure that moves
 * least with the shared machine's load.
 *
 * Knobs: BENCH_WINDOW (s per window, default 5), BENCH_ROUNDS (pairs per
 * concurrency, 3), BENCH_CONC (default "1,16,100"), BENCH_BUSY=1 (a busy loop
 * `node -e 'for(;;){}'` beside for the whole run). Stops by itself: a hard cap
 * of the planned time plus a minute.
 */

const WINDOW_MS = Number(process.env.BENCH_WINDOW ?? 5) * 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONCS = (process.env.BENCH_CONC ?? '1,16,100').split(',').map(Number);
const BUSY = process.env.BENCH_BUSY === '1';
const WARMUP_MS = 500;
const TIMEOUT_MS = 5_000;
const MAX_BODY = 64 * 1024;

/** A webhook-sized body and the headers a signed delivery carries. */
const BODY = JSON.stringify({
  id: 'evt_01JD0000000000000000000000', type: 'session.start', created_at: '2026-11-28T12:00:00.000Z', tenant_id: 'ten_bench',
  data: { session_id: 'ses_01JD0000000000000000000000', hotspot_id: 'hs_bench', mac: 'AA:BB:CC:DD:EE:FF', method: 'voucher' },
});
const HEADERS: Record<string, string> = {
  'content-type': 'application/json', 'x-webhook-id': 'dlv_01JD0000000000000000000000', 'x-webhook-timestamp': '1795000000',
  'x-signature-256': 'sha256=' + 'ab'.repeat(32), 'user-agent': 'guest-wifi-engine-webhooks/1',
};
const ANSWER_BYTES = Buffer.byteLength('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok');

type Send = () => Promise<void>;
interface Client { name: string; open(): Promise<Send>; close(): Promise<void> }

/** Raw keep-alive sockets: one per worker, the request bytes built once, the answer counted by its fixed length. */
function yardstick(port: number): Client {
  const sockets: Socket[] = [];
  let head = `POST /hook HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`;
  for (const [k, v] of Object.entries(HEADERS)) head += `${k}: ${v}\r\n`;
  const request = Buffer.from(head + `content-length: ${Buffer.byteLength(BODY)}\r\n\r\n` + BODY);
  return {
    name: 'yardstick',
    async open() {
      const s = connect({ host: '127.0.0.1', port });
      s.setNoDelay(true);
      await new Promise<void>((r, j) => { s.once('connect', r); s.once('error', j); });
      sockets.push(s);
      let got = 0;
      let done: (() => void) | null = null;
      s.on('data', (c: Buffer) => {
        got += c.length;
        if (got >= ANSWER_BYTES && done) { got -= ANSWER_BYTES; const d = done; done = null; d(); }
      });
      return () => new Promise<void>((resolve) => { done = resolve; s.write(request); });
    },
    async close() { for (const s of sockets.splice(0)) s.destroy(); },
  };
}

function http1(port: number, policy: OutboundPolicy): Client {
  const client = new OutboundHttp({ outbound: policy });
  const url = `http://127.0.0.1:${port}/hook`;
  return {
    name: 'http1-client',
    async open() {
      return async () => {
        const a = await client.request({ url, headers: HEADERS, body: BODY, timeoutMs: TIMEOUT_MS, maxBodyBytes: MAX_BODY });
        if (a.status !== 200) throw new Error(`status ${a.status}`);
      };
    },
    async close() { client.close(); },
  };
}

/**
 * undici's Pool as the module would wrap it: the policy's checked lookup on
 * every connection (undici hands `connect` options to net.connect), no
 * redirects (Pool never follows them), a whole-exchange deadline through an
 * AbortSignal, the answer body read with a bound.
 */
function undiciPool(port: number, policy: OutboundPolicy): Client {
  const pool = new Pool(`http://127.0.0.1:${port}`, {
    connections: 64, pipelining: 1, keepAliveTimeout: 4_000, connect: { lookup: policy.lookup, noDelay: true },
  });
  return {
    name: 'undici-pool',
    async open() {
      return async () => {
        const abort = new AbortController();
        const timer = setTimeout(() => abort.abort(), TIMEOUT_MS);
        try {
          const a = await pool.request({ origin: `http://127.0.0.1:${port}`, path: '/hook', method: 'POST', headers: HEADERS, body: BODY, signal: abort.signal });
          let size = 0;
          const parts: Buffer[] = [];
          for await (const chunk of a.body as AsyncIterable<Buffer>) {
            size += chunk.length;
            if (size > MAX_BODY) throw new Error('answer too large');
            parts.push(chunk);
          }
          Buffer.concat(parts, size);
          if (a.statusCode !== 200) throw new Error(`status ${a.statusCode}`);
        } finally {
          clearTimeout(timer);
        }
      };
    },
    async close() { await pool.close(); },
  };
}

/**
 * undici at its leanest, to be sure the verdict is not about one API: the
 * phase time-outs undici has (headersTimeout, bodyTimeout) instead of a
 * whole-exchange AbortSignal, the body read by `dump()`-free text().
 */
function undiciLean(port: number, policy: OutboundPolicy): Client {
  const pool = new Pool(`http://127.0.0.1:${port}`, {
    connections: 64, pipelining: 1, keepAliveTimeout: 4_000, connect: { lookup: policy.lookup, noDelay: true },
  });
  return {
    name: 'undici-lean',
    async open() {
      return async () => {
        const a = await pool.request({ path: '/hook', method: 'POST', headers: HEADERS, body: BODY, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
        await a.body.text();
        if (a.statusCode !== 200) throw new Error(`status ${a.statusCode}`);
      };
    },
    async close() { await pool.close(); },
  };
}

/** undici's lowest level, Pool.dispatch with a handler (no stream, no promise per request inside undici). */
function undiciDispatch(port: number, policy: OutboundPolicy): Client {
  const pool = new Pool(`http://127.0.0.1:${port}`, {
    connections: 64, pipelining: 1, keepAliveTimeout: 4_000, connect: { lookup: policy.lookup, noDelay: true },
  });
  return {
    name: 'undici-dispatch',
    async open() {
      return () => new Promise<void>((resolve, reject) => {
        let status = 0;
        const parts: Buffer[] = [];
        pool.dispatch({ path: '/hook', method: 'POST', headers: HEADERS, body: BODY, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS }, {
          onRequestStart() { /* undici takes a handler with this as the new-style API */ },
          onResponseStart(_c, code) { status = code; },
          onResponseData(_c, chunk) { parts.push(chunk); },
          onResponseEnd() { Buffer.concat(parts); if (status === 200) resolve(); else reject(new Error(`status ${status}`)); },
          onResponseError(_c, err) { reject(err); },
        });
      });
    },
    async close() { await pool.close(); },
  };
}

const ALL: Record<string, (port: number, policy: OutboundPolicy) => Client> = {
  'http1-client': http1, 'undici-pool': undiciPool, 'undici-lean': undiciLean, 'undici-dispatch': undiciDispatch,
};
const CLIENT_NAMES = (process.env.BENCH_CLIENTS ?? 'http1-client,undici-pool').split(',');
const CLIENTS = CLIENT_NAMES.map((n) => { const f = ALL[n]; if (!f) throw new Error(`BENCH_CLIENTS: no client ${n}`); return f; });

interface Window { client: string; conc: number; rps: number; p50: number; p99: number; cpuUs: number; errors: number }

const lat = new Float64Array(4_000_000);

async function measure(c: Client, conc: number): Promise<Window> {
  const sends = await Promise.all(Array.from({ length: conc }, () => c.open()));
  let n = 0;
  let errors = 0;
  let recording = false;
  let stop = false;
  const worker = async (send: Send): Promise<void> => {
    while (!stop) {
      const t0 = performance.now();
      try { await send(); } catch (err) {
        // A failing client must not spin the microtask queue (timers would never fire): yield, and say why once.
        if (errors++ === 0) say(`  ${c.name}: ${(err as Error).message}`);
        await new Promise((r) => setImmediate(r));
        continue;
      }
      if (recording && n < lat.length) lat[n++] = performance.now() - t0;
    }
  };
  const running = sends.map(worker);
  await new Promise((r) => setTimeout(r, WARMUP_MS));
  n = 0;
  errors = 0;
  recording = true;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, WINDOW_MS));
  recording = false;
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const count = n;
  stop = true;
  await Promise.all(running);
  await c.close();
  const sorted = lat.subarray(0, count).sort();
  const pct = (p: number): number => sorted[Math.min(count - 1, Math.floor((p / 100) * count))] ?? NaN;
  return { client: c.name, conc, rps: count / secs, p50: pct(50), p99: pct(99), cpuUs: (cpu.user + cpu.system) / Math.max(1, count), errors };
}

async function main(): Promise<void> {
  const teardown = new Teardown();
  const planned = CONCS.length * ROUNDS * (1 + CLIENTS.length) * (WINDOW_MS + WARMUP_MS + 300);
  teardown.guard('outbound-client', planned + 60_000);
  const receiver = await spawnReady(teardown, 'receiver', ['dist/bench/outbound-receiver.js'], { PATH: process.env.PATH });
  const port = Number(receiver.ready.port);
  if (BUSY) {
    const busy = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' });
    teardown.push(() => stopChild(busy));
  }
  const policy = new OutboundPolicy({ allowPrivate: true });
  const results: (Window & { ratio: number })[] = [];
  try {
    for (const conc of CONCS) {
      for (let round = 0; round < ROUNDS; round++) {
        const y = await measure(yardstick(port), conc);
        say(`c=${conc} round ${round + 1}: yardstick ${y.rps.toFixed(0)}/s p50 ${y.p50.toFixed(3)} p99 ${y.p99.toFixed(3)} ms, ${y.cpuUs.toFixed(1)} us/req`);
        const order = round % 2 === 0 ? CLIENTS : [...CLIENTS].reverse();
        for (const make of order) {
          const w = await measure(make(port, policy), conc);
          const r = { ...w, ratio: w.rps / y.rps };
          results.push(r);
          say(`c=${conc} round ${round + 1}: ${w.client} ${w.rps.toFixed(0)}/s (${r.ratio.toFixed(2)} of yardstick) p50 ${w.p50.toFixed(3)} p99 ${w.p99.toFixed(3)} ms, ${w.cpuUs.toFixed(1)} us/req, errors ${w.errors}`);
        }
      }
    }
  } finally {
    await teardown.run();
  }
  const summary: Record<string, Record<string, { ratio: number; rps: number; p50: number; p99: number; cpuUs: number; errors: number }>> = {};
  const med = (xs: number[]): number => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]!; };
  for (const conc of CONCS) {
    for (const name of CLIENT_NAMES) {
      const ws = results.filter((r) => r.conc === conc && r.client === name);
      (summary[`c${conc}`] ??= {})[name] = {
        ratio: +med(ws.map((w) => w.ratio)).toFixed(3), rps: Math.round(med(ws.map((w) => w.rps))), p50: +med(ws.map((w) => w.p50)).toFixed(3),
        p99: +med(ws.map((w) => w.p99)).toFixed(3), cpuUs: +med(ws.map((w) => w.cpuUs)).toFixed(1), errors: ws.reduce((a, w) => a + w.errors, 0),
      };
    }
  }
  process.stdout.write(JSON.stringify({ bench: 'outbound-client', busy: BUSY, window_s: WINDOW_MS / 1000, rounds: ROUNDS, medians: summary }) + '\n');
  process.exit(0);
}

void main().catch((err: Error) => { say(`outbound-client: ${err.stack ?? err.message}`); process.exit(1); });
