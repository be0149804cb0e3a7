/**
 * RADIUS load generator: Access-Requests (PAP, signed with
 * Message-Authenticator) for a set of MACs, optionally mixed with Accounting
 * Interim-Updates, at a target rate with a bounded number outstanding. Prints
 * one summary line: throughput and latency percentiles. Options: HELP below
 * (`--help` prints it).
 *
 * Each request gets a fresh random Request Authenticator; replies are matched
 * by socket and Identifier and their Response Authenticator is verified
 * (failures count as "bad"). Latency is send to receive, in the generator's
 * event loop: at high rates it includes the generator's own queueing, so run
 * it on other cores than the server (taskset) for server figures.
 */
import { createSocket, type Socket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import type { AccessDecision, NasRecord, RadiusHandler } from '../engine/index.js';
import {
  AcctStatusType, Code, HEADER_LENGTH, PacketWriter, RadiusCrypto, RadiusServer, checkFraming,
} from '../radius/index.js';
import { JsonLines, SecondCounters, SecondSeries } from './json-lines.js';
import { accessRequest, accountingRequest, Authenticators, isLoopback, refuseTarget } from './radius-client.js';

const HELP = `radius-load: Access-Requests (PAP, Message-Authenticator) for a set of MACs, optionally mixed with
Accounting Interim-Updates, at a rate with a bounded number outstanding; one summary line on stdout.

  node dist/bench/radius-load.js --port 1812 --acct-port 1813 --secret testing123 \\
    --rate 20000 --concurrency 512 --duration 10 --macs 5000 --acct-ratio 0.2
  node dist/bench/radius-load.js --self     against an in-process RadiusServer with a stub engine

Options (all optional):
  --target 127.0.0.1   the server's address (--host is the same); loopback (127.0.0.0/8 or ::1)
                       unless --allow-remote: only then does it load a deployment elsewhere
  --json-lines path    one JSON line per second of the run there (sent, answered, lost, latency
                       n/p50/p90/p99/max in ms), then one {"summary": true, ...} line with the
                       summary line's figures
  --port 1812          authentication port      --acct-port 1813   accounting port
  --secret testing123  shared secret             --password guest   User-Password sent
  --rate 0             requests/s; 0 = as fast as the outstanding window allows
  --concurrency 64     requests outstanding at most (one socket per 256)
  --sources N          send from N UDP sockets (source ports), requests spread over them in turn;
                       source k is an AP behind the NAS: NAS-Port-Id "bench<k>" and its own share
                       of the MACs (MAC i always from source i mod N). Unset: one socket per 256
                       outstanding and the old packets (NAS-Port-Id "bench0", none in accounting)
  --duration 10        seconds (at most 300)   --requests 1000000  requests at most (at most 5,000,000)
  --macs 1000          MACs 02:00:00:xx:xx:xx   --mac-file path   one MAC per line instead
  --acct-ratio 0       share of Accounting Interim-Update (0..1)
  --timeout 2000       ms before a request counts as lost (no retransmission)
  --self               start a RadiusServer on free loopback ports with an accept-all engine stub
  --help               this text
`;

interface Options {
  host: string; port: number; acctPort: number; secret: string; password: string;
  rate: number; concurrency: number; durationSec: number; maxRequests: number;
  macs: string[]; acctRatio: number; timeoutMs: number; self: boolean; jsonLines: string | undefined;
  /** Source ports asked for with --sources; undefined: as many as the window needs (256 each). */
  sources: number | undefined;
}

function parseArgs(argv: string[]): Options {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) fail(`unexpected argument ${a}`);
    if (a === '--self' || a === '--allow-remote') { args.set(a.slice(2), '1'); continue; }
    const v = argv[++i];
    if (v === undefined) fail(`${a} needs a value`);
    args.set(a.slice(2), v);
  }
  const num = (k: string, d: number, min: number, max: number): number => {
    const raw = args.get(k);
    if (raw === undefined) return d;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) fail(`--${k} must be a number in ${min}..${max}`);
    return n;
  };
  if (args.has('host') && args.has('target')) fail('--host and --target are the same option: give one');
  const host = args.get('target') ?? args.get('host') ?? '127.0.0.1';
  const refused = refuseTarget(host, args.has('allow-remote'));
  if (refused) fail(refused);
  let macs: string[];
  const file = args.get('mac-file');
  if (file) {
    macs = readFileSync(file, 'utf8').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
    if (macs.length === 0) fail(`${file} holds no MACs`);
  } else {
    const n = num('macs', 1000, 1, 16_777_216);
    macs = Array.from({ length: n }, (_, i) => `02-00-00-${hex2(i >> 16)}-${hex2(i >> 8)}-${hex2(i)}`);
  }
  const known = new Set(['host', 'port', 'acct-port', 'secret', 'password', 'rate', 'concurrency', 'duration', 'requests', 'macs', 'mac-file', 'acct-ratio', 'timeout', 'self', 'target', 'allow-remote', 'json-lines', 'sources']);
  for (const k of args.keys()) if (!known.has(k)) fail(`unknown option --${k}`);
  return {
    host,
    port: num('port', 1812, 1, 65535),
    acctPort: num('acct-port', 1813, 1, 65535),
    secret: args.get('secret') ?? 'testing123',
    password: args.get('password') ?? 'guest',
    rate: num('rate', 0, 0, 1_000_000),
    concurrency: Math.floor(num('concurrency', 64, 1, 65_536)),
    durationSec: num('duration', 10, 0.1, 300),
    maxRequests: Math.floor(num('requests', 1_000_000, 1, 5_000_000)),
    macs,
    acctRatio: num('acct-ratio', 0, 0, 1),
    timeoutMs: num('timeout', 2000, 10, 60_000),
    self: args.has('self'),
    jsonLines: args.get('json-lines'),
    sources: args.has('sources') ? Math.floor(num('sources', 1, 1, 1024)) : undefined,
  };
}

function fail(msg: string): never {
  process.stderr.write(`radius-load: ${msg}\n`);
  process.exit(2);
}

function hex2(n: number): string {
  return (n & 255).toString(16).padStart(2, '0').toUpperCase();
}

interface Outstanding { sentAt: number; authenticator: Buffer }

/**
 * One UDP socket (one source port: with --sources, one AP behind the NAS) and its
 * 256 Identifiers; `sent` walks the MACs that belong to this source.
 */
class Lane {
  readonly slots: (Outstanding | undefined)[] = new Array(256);
  readonly free: number[] = Array.from({ length: 256 }, (_, i) => i);
  sent = 0;
  /** `nasIp`: the address the lane sends from when known (IPv4 loopback), named in accounting as NAS-IP-Address. */
  constructor(readonly socket: Socket, readonly index: number, readonly nasPortId: string | undefined, readonly nasIp: string | undefined) {}

  /** The n-th MAC of this lane: the MACs i with i mod lanes = index, in turn (fewer MACs than lanes: shared). */
  macIndex(n: number, lanes: number, macs: number): number {
    if (this.index >= macs) return this.index % macs;
    const own = Math.floor((macs - this.index - 1) / lanes) + 1;
    return this.index + lanes * (n % own);
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  let server: RadiusServer | null = null;
  if (o.self) {
    const nas: NasRecord = {
      id: 'nas_bench', tenantId: 'tn_bench', hotspotId: 'hs_bench', ip: o.host, secret: o.secret,
      coaPort: 3799, requireMessageAuthenticator: true,
    };
    const decision: AccessDecision = {
      accept: true, sessionId: 'ses_bench', sessionTimeout: 3600, idleTimeout: 600, downKbps: 10_000, upKbps: 2_000, quotaBytes: 5e9,
    };
    const handler: RadiusHandler = {
      nasByIp: (ip) => (ip === o.host ? nas : null),
      authorize: () => Promise.resolve(decision),
      account: () => Promise.resolve(),
    };
    server = new RadiusServer({ handler, authPort: 0, acctPort: 0, host: o.host, logger: pino({ level: 'silent' }) });
    const ports = await server.start();
    o.port = ports.auth;
    o.acctPort = ports.acct;
  }

  const crypto = new RadiusCrypto();
  const writer = new PacketWriter(crypto);
  const authenticators = new Authenticators();
  // Per second, only when asked for: the summary's Float64Array stays the hot path's only store.
  const lines = new JsonLines(o.jsonLines);
  const perSecond = o.jsonLines ? { latency: new SecondSeries(), counts: new SecondCounters() } : undefined;

  const latencies = new Float64Array(o.maxRequests);
  let sent = 0, answered = 0, accepts = 0, rejects = 0, acctResponses = 0, lost = 0, bad = 0, outstanding = 0;

  const lanes: Lane[] = [];
  // Each lane holds at most 256 outstanding (its Identifiers): --sources below that need is raised to it.
  const laneCount = Math.max(o.sources ?? 1, Math.ceil(o.concurrency / 256));
  for (let i = 0; i < laneCount; i++) {
    const s = createSocket(isIP(o.host) === 6 ? 'udp6' : 'udp4');
    // The loopback address for a local target; the wildcard when --allow-remote aims elsewhere.
    const local = isLoopback(o.host) ? (isIP(o.host) === 6 ? '::1' : '127.0.0.1') : undefined;
    await new Promise<void>((resolve) => s.bind(0, local, resolve));
    try { s.setRecvBufferSize(4 * 1024 * 1024); s.setSendBufferSize(4 * 1024 * 1024); } catch { /* kernel cap */ }
    const lane = new Lane(s, i, o.sources === undefined ? undefined : `bench${i}`, local === '127.0.0.1' ? local : undefined);
    s.on('message', (msg) => {
      const len = checkFraming(msg);
      const id = msg.length > 1 ? msg[1]! : -1;
      const out = id >= 0 ? lane.slots[id] : undefined;
      if (len < 0 || !out) { bad++; return; }
      if (!crypto.verifyResponseAuthenticator(msg, len, out.authenticator, o.secret)) { bad++; return; }
      lane.slots[id] = undefined;
      lane.free.push(id);
      outstanding--;
      const ms = performance.now() - out.sentAt;
      if (answered < latencies.length) latencies[answered] = ms;
      answered++;
      perSecond?.latency.add(ms);
      if (msg[0] === Code.ACCESS_ACCEPT) accepts++;
      else if (msg[0] === Code.ACCESS_REJECT) rejects++;
      else if (msg[0] === Code.ACCOUNTING_RESPONSE) acctResponses++;
      perSecond?.counts.add(msg[0] === Code.ACCESS_ACCEPT ? 'accept' : msg[0] === Code.ACCESS_REJECT ? 'reject' : 'acct');
      pump();
    });
    lanes.push(lane);
  }
  const perLane = Math.min(256, Math.ceil(o.concurrency / laneCount));

  const started = performance.now();
  const deadline = started + o.durationSec * 1000;
  let laneCursor = 0;
  let finished = false;

  function sendOne(): boolean {
    // The window is global; the per-lane cap only spreads it (perLane x lanes may exceed it).
    if (outstanding >= o.concurrency) return false;
    for (let tries = 0; tries < lanes.length; tries++) {
      const lane = lanes[laneCursor]!;
      laneCursor = (laneCursor + 1) % lanes.length;
      if (256 - lane.free.length >= perLane) continue;
      const id = lane.free.pop()!;
      // With --sources, MAC i is always sent from source i mod N, as a guest stays behind one AP.
      const mac = o.sources === undefined ? o.macs[sent % o.macs.length]! : o.macs[lane.macIndex(lane.sent, laneCount, o.macs.length)]!;
      lane.sent++;
      const isAcct = o.acctRatio > 0 && Math.random() < o.acctRatio;
      let packet: Buffer;
      let authenticator: Buffer;
      if (isAcct) {
        packet = accountingRequest(writer, id, {
          status: AcctStatusType.INTERIM_UPDATE, mac, sessionId: `bench-${mac}`,
          inOctets: sent & 0xffffff, outOctets: (sent * 7) & 0xffffff, sessionTime: 60, nasPortId: lane.nasPortId, nasIp: lane.nasIp,
        }, o.secret);
      } else {
        packet = accessRequest(writer, id, authenticators.next(), mac, o.password, o.secret, lane.nasPortId);
      }
      authenticator = packet.subarray(4, HEADER_LENGTH);
      lane.slots[id] = { sentAt: performance.now(), authenticator };
      lane.socket.send(packet, isAcct ? o.acctPort : o.port, o.host);
      sent++;
      outstanding++;
      perSecond?.counts.add(isAcct ? 'sent_acct' : 'sent_auth');
      return true;
    }
    return false;
  }

  /** Sends as many as the rate and the window allow now. */
  function pump(): void {
    if (finished) return;
    const now = performance.now();
    if (now >= deadline || sent >= o.maxRequests) return;
    const allowed = o.rate > 0 ? Math.min(o.maxRequests, Math.floor(((now - started) / 1000) * o.rate) + 1) : o.maxRequests;
    while (sent < allowed && sendOne());
  }

  let second = 0;
  const secondTimer = perSecond && setInterval(() => {
    lines.write({ t: ++second, ...perSecond.counts.take(), latency: perSecond.latency.take(), outstanding, bad });
  }, 1000);

  // Paces sending when rate-limited, expires lost requests, and ends the run.
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const now = performance.now();
      for (const lane of lanes) {
        for (let id = 0; id < 256; id++) {
          const out = lane.slots[id];
          if (out && now - out.sentAt > o.timeoutMs) {
            lane.slots[id] = undefined;
            lane.free.push(id);
            outstanding--;
            lost++;
            perSecond?.counts.add('lost');
          }
        }
      }
      pump();
      const done = now >= deadline || sent >= o.maxRequests;
      if (done && (outstanding === 0 || now >= deadline + o.timeoutMs)) {
        clearInterval(tick);
        lost += outstanding;
        resolve();
      }
    }, 1);
    pump();
  });
  finished = true;
  const elapsedSec = (performance.now() - started) / 1000;
  const n = Math.min(answered, latencies.length);
  const sorted = latencies.subarray(0, n).sort();
  const pct = (p: number) => (n ? sorted[Math.min(n - 1, Math.floor((p / 100) * n))]! : NaN);
  const activeSec = Math.min(elapsedSec, o.durationSec);
  if (secondTimer) {
    clearInterval(secondTimer);
    lines.write({ t: ++second, partial: true, ...perSecond.counts.take(), latency: perSecond.latency.take(), outstanding, bad });
    // The summary line's figures, as the storm ends its lines (latency in ms, as the seconds').
    const ms = (v: number): number | null => (Number.isFinite(v) ? Math.round(v * 1000) / 1000 : null);
    lines.write({
      summary: true, target: `${o.host}:${o.port}/${o.acctPort}`, self: o.self, concurrency: o.concurrency, sources: lanes.length,
      rate: o.rate || null, sent, answered, accept: accepts, reject: rejects, acct: acctResponses, lost, bad,
      duration_s: Math.round(activeSec * 10) / 10, per_s: Math.round(answered / activeSec),
      latency: { n, p50: ms(pct(50)), p90: ms(pct(90)), p99: ms(pct(99)), max: ms(n ? sorted[n - 1]! : NaN) },
    });
  }
  await lines.close();
  process.stdout.write(
    `radius-load target=${o.host}:${o.port}/${o.acctPort}${o.self ? ' (self)' : ''} concurrency=${o.concurrency} sources=${lanes.length} rate=${o.rate || 'max'} `
    + `sent=${sent} answered=${answered} accept=${accepts} reject=${rejects} acct=${acctResponses} lost=${lost} bad=${bad} `
    + `duration=${activeSec.toFixed(1)}s req/s=${Math.round(answered / activeSec)} `
    + `p50=${pct(50).toFixed(3)}ms p99=${pct(99).toFixed(3)}ms max=${(n ? sorted[n - 1]! : NaN).toFixed(3)}ms\n`,
  );
  for (const lane of lanes) lane.socket.close();
  await server?.stop();
}

main().catch((err) => {
  process.stderr.write(`radius-load: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
