import { readFileSync } from 'node:fs';
import { refuseTarget } from './radius-client.js';
import type { StormShape } from './storm-plan.js';

export const STORM_HELP = `stadium-storm: N guests arrive at a rate; each loads the portal page and signs in (voucher, or an
SMS code through a fake carrier), then its NAS sends an Access-Request, an Accounting-Start and an
Interim-Update every --interim seconds for the rest of the run. Open loop: latency counts from when
each request was due.

  node dist/bench/stadium-storm.js [options]

  --guests 100000      guests                       --over 60     seconds over which they arrive
  --rate <n>           arrivals per second instead of --over
  --otp-share 0.1      share signing in by SMS code (0..1)
  --interim 60         seconds between a guest's Interim-Updates
  --stay 0             seconds until a guest's NAS sends its Stop (0: stays to the end)
  --tail 10            seconds the run goes on after the last arrival
  --processes 1        engine processes (distinct NODE_IDs) on the one Redis (or cluster: --redis-url
                       redis+cluster://...) and Postgres; guest i and its NAS go to process i mod n,
                       each process's NAS on its own hotspot and loopback address (--nas-address, then
                       the next addresses); --kill-at then kills (and restarts) the last process
  --cluster            a 3-master Redis Cluster of the bench's own (scripts/redis-cluster.ts) instead of
                       one Redis; CPU per sign-in per shard too (a cluster of your own: --redis-url
                       redis+cluster://host:port,... with --database-url)
  --kill-at <s>        kill -9 the service that many seconds into the storm, restart it on the same
                       ports, go on; then every session start/end must be in Postgres exactly once
                       and the chain must verify (exit 1 if not)
  --json-lines <path>  one JSON line per second there, and the summary as the last line
  --connections 256    HTTP connections at most     --timeout 2000 / --tries 3   RADIUS retransmission
  --http-client raw    raw (a lean keep-alive HTTP/1.1 client) or node (node:http's Agent), for an A/B of the bench's own cost
  --signin-tries 3     a guest's tries of a sign-in that failed on the wire or with a 5xx, 1 s apart
  --deadline <s>       hard stop (default: the run plus 120 s)
  --redis-url / --database-url   use these (migrated) instead of a throw-away Redis and PostgreSQL
  --target 127.0.0.1   where the traffic goes; loopback unless --allow-remote. With --external the
                       bench starts nothing and aims at a running deployment: --http-port,
                       --radius-port, --acct-port, --radius-secret, --hotspot, --codes <file>
                       (vouchers, one a line); no kill, no Postgres check, no CPU there.
  --stub               aim at a stand-in that answers every request at once with the service's shapes
                       (storm-stub.ts): the generator's own CPU per guest, measured and profiled alone;
                       no Redis, Postgres, kill or check, no verdict on the targets

Exit: 0 targets met (or, with --kill-at, exactly once and the chain valid), 2 a target missed,
1 errors in the check or the bench.`;

export interface External { httpPort: number; radiusPort: number; acctPort: number; secret: string; hotspot: string; codes: string[] }

export interface StormOptions {
  shape: StormShape;
  target: string;
  /** The NAS's own address (loopback): registered as the NAS client and the RADIUS packets' source. */
  nasAddress: string;
  external: External | undefined;
  /** Aim at storm-stub.ts instead of the service: the generator alone. */
  stub: boolean;
  killAtSec: number | undefined;
  /** Start a 3-master Redis Cluster for the run (--cluster). */
  cluster: boolean;
  /** Service processes sharing the storm (--processes). */
  processes: number;
  jsonLines: string | undefined;
  httpClient: 'raw' | 'node';
  connections: number; timeoutMs: number; tries: number; signinTries: number;
  deadlineSec: number;
  redisUrl: string | undefined; databaseUrl: string | undefined;
}

const FLAGS = new Set(['allow-remote', 'external', 'help', 'stub', 'cluster']);
const VALUES = new Set(['guests', 'over', 'rate', 'otp-share', 'interim', 'stay', 'tail', 'kill-at', 'json-lines', 'connections', 'timeout',
  'tries', 'signin-tries', 'processes', 'http-client', 'deadline', 'redis-url', 'database-url', 'target', 'http-port', 'radius-port', 'acct-port', 'radius-secret', 'hotspot', 'codes', 'nas-address']);

/** The options, or a one-line reason they are refused (thrown as an Error). */
export function parseStormArgs(argv: string[]): StormOptions | 'help' {
  const args = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const k = a.slice(2);
    if (!a.startsWith('--') || !(FLAGS.has(k) || VALUES.has(k))) throw new Error(`unknown argument ${a} (--help lists them)`);
    if (FLAGS.has(k)) { args.set(k, '1'); continue; }
    const v = argv[++i];
    if (v === undefined) throw new Error(`${a} needs a value`);
    args.set(k, v);
  }
  if (args.has('help')) return 'help';
  const num = (k: string, d: number, min: number, max: number): number => {
    const raw = args.get(k);
    if (raw === undefined) return d;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${k} must be a number in ${min}..${max}`);
    return n;
  };
  const guests = Math.floor(num('guests', 100_000, 1, 2_000_000));
  if (args.has('rate') && args.has('over')) throw new Error('give --rate or --over, not both');
  const rate = args.has('rate') ? num('rate', 0, 0.01, 100_000) : guests / num('over', 60, 0.1, 3600);
  const shape: StormShape = {
    guests, rate, otpShare: num('otp-share', 0.1, 0, 1), interimSec: num('interim', 60, 0.1, 3600),
    staySec: num('stay', 0, 0, 86_400), tailSec: num('tail', 10, 0, 3600),
  };
  const runSec = (guests - 1) / rate + shape.tailSec;
  const killAtSec = args.has('kill-at') ? num('kill-at', 0, 0, runSec) : undefined;
  const target = args.get('target') ?? '127.0.0.1';
  // Another loopback address lets a test run the storm beside files that registered 127.0.0.1 as their NAS.
  const nasAddress = args.get('nas-address') ?? '127.0.0.1';
  if (!/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(nasAddress)) throw new Error('--nas-address must be a loopback IPv4 address (127.x.y.z)');
  const refused = refuseTarget(target, args.has('allow-remote'));
  if (refused) throw new Error(refused);
  let external: External | undefined;
  if (args.has('external')) {
    const need = (k: string): string => {
      const v = args.get(k);
      if (!v) throw new Error(`--external needs --${k}`);
      return v;
    };
    const codes = readFileSync(need('codes'), 'utf8').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
    if (codes.length === 0) throw new Error('--codes names a file with no vouchers');
    external = {
      httpPort: num('http-port', 0, 1, 65535), radiusPort: num('radius-port', 0, 1, 65535), acctPort: num('acct-port', 0, 1, 65535),
      secret: need('radius-secret'), hotspot: need('hotspot'), codes,
    };
    need('http-port'); need('radius-port'); need('acct-port');
    if (killAtSec !== undefined) throw new Error('--kill-at needs the bench to run the service: not with --external');
    if (shape.otpShare > 0) throw new Error('--external signs in by voucher only: add --otp-share 0 (the fake carrier is the bench\'s own)');
  } else if (target !== '127.0.0.1') {
    throw new Error('the bench starts its own service on 127.0.0.1; --target elsewhere needs --external');
  }
  const stub = args.has('stub');
  if (stub && (external || killAtSec !== undefined || args.has('redis-url'))) throw new Error('--stub runs its own stand-in: not with --external, --kill-at or --redis-url');
  const processes = Math.floor(num('processes', 1, 1, 8));
  const cluster = args.has('cluster');
  if (cluster && (external || stub || args.has('redis-url'))) throw new Error('--cluster starts its own Redis Cluster: not with --external, --stub or --redis-url');
  if (processes > 1 && (external || stub)) throw new Error('--processes starts the bench\'s own services: not with --external or --stub');
  const httpClient = args.get('http-client') ?? 'raw';
  if (httpClient !== 'raw' && httpClient !== 'node') throw new Error('--http-client is raw or node');
  if (args.has('redis-url') !== args.has('database-url')) throw new Error('give --redis-url and --database-url together');
  return {
    shape, target, nasAddress, external, stub, killAtSec, processes, cluster,
    jsonLines: args.get('json-lines'), httpClient,
    connections: Math.floor(num('connections', 256, 1, 65_536)),
    timeoutMs: num('timeout', 2000, 10, 60_000),
    tries: Math.floor(num('tries', 3, 1, 10)),
    signinTries: Math.floor(num('signin-tries', 3, 1, 10)),
    deadlineSec: num('deadline', runSec + 120, 1, 7200),
    redisUrl: args.get('redis-url'), databaseUrl: args.get('database-url'),
  };
}
