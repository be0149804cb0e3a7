import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { createLogger, DEFAULT_CODE_FORMAT, Engine, loadConfig, projectPath } from '../engine/index.js';
import { freePort } from '../scripts/local-services.js';
import { localStack, benchMac as mac, say, spawnReady as spawnChild, Teardown, withCpu, type CpuUse, type LocalStack } from './bench-kit.js';

const undo = new Teardown();
const spawnReady = (name: string, args: string[], env: NodeJS.ProcessEnv) => spawnChild(undo, name, args, env);

/**
 * Scenario: portal voucher verification (POST /api/v1/hotspot-portal/voucher/verify)
 * at 100 connections, against a bare uWebSockets.js JSON echo server on the
 * same machine as the yardstick. Every request carries its own (code, MAC), so
 * each is a new use of a multi-use voucher: the Lua decision, the grant and the
 * outbox record, with the outbox sink draining into Postgres meanwhile.
 *
 * Measured with two load generators in one run: autocannon (what fastify uses)
 * and wrk. On a 2-core machine autocannon's own CPU use competes with the
 * server, so wrk's figures decide pass/fail; autocannon's are reported beside.
 *
 * Everything is on loopback and thrown away: Redis and Postgres in a temporary
 * folder, the service and the echo server as child processes (the load
 * generator never shares a thread with a server). Details go to stderr; stdout
 * gets one summary line. Exit 1 when a run had errors or non-2xx answers,
 * 2 when the targets were missed.
 *
 * Knobs (environment): BENCH_DURATION (s, default 10), BENCH_WARMUP (s, 2),
 * BENCH_CONNECTIONS (100), BENCH_WRK_THREADS (1), BENCH_CPU_PROF (a folder:
 * the service runs with --cpu-prof and writes its profile there on exit),
 * BENCH_REDIS_DURABILITY (`everysec`, the default: Redis's AOF fsync once a
 * second; `always`: `appendfsync always`; `wait`: a replica of its own and
 * REDIS_WAIT_REPLICAS=1): the cost of closing Redis's durability window.
 */

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const WRK_THREADS = Number(process.env.BENCH_WRK_THREADS ?? 1);
const CPU_PROF = process.env.BENCH_CPU_PROF;
const DURABILITY = process.env.BENCH_REDIS_DURABILITY ?? 'everysec';
if (!['everysec', 'always', 'wait'].includes(DURABILITY)) throw new Error(`BENCH_REDIS_DURABILITY=${DURABILITY}: everysec, always or wait`);
const VOUCHERS = 200;
const TARGET_RATIO = 0.35;
const TARGET_P99_MS = 10;
/** The whole run is bounded: setup, 4 warm-ups, 4 measurements, teardown. */
const DEADLINE_MS = 120_000 + 4 * (DURATION_S + WARMUP_S + 10) * 1000;
const PATH = '/api/v1/hotspot-portal/voucher/verify';
const HOST = '127.0.0.1';

type Tool = 'wrk' | 'autocannon';
type Target = 'verify' | 'echo';

interface Figures {
  tool: Tool;
  target: Target;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Socket errors and timeouts. */
  errors: number;
  /**
   * CPU use during the measurement in percent of one core: the server under
   * test, Redis, Postgres (all its processes), and the rest of the machine's
   * busy time (mostly the load generator); idle is percent of the machine.
   */
  cpu: CpuUse;
}

async function runAutocannon(url: string, hotspotId: string, codes: string[], run: number, seconds: number) {
  let n = 0;
  const r = await autocannon({
    url, connections: CONNECTIONS, duration: seconds, timeout: 5,
    requests: [{
      method: 'POST', path: PATH, headers: { 'content-type': 'application/json' },
      setupRequest: (req) => {
        const i = n++;
        req.body = `{"hotspot_id":"${hotspotId}","code":"${codes[i % codes.length]}","mac":"${mac(6, run, i)}"}`;
        return req;
      },
    }],
  });
  return {
    requests: r.requests.total, rps: r.requests.total / r.duration, p50Ms: r.latency.p50, p99Ms: r.latency.p99,
    non2xx: r.non2xx, errors: r.errors + r.timeouts,
  };
}

async function runWrk(url: string, hotspotId: string, codesFile: string, run: number, seconds: number) {
  const args = [`-t${WRK_THREADS}`, `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '5s',
    '-s', projectPath('bench', 'portal-verify.lua'), url + PATH, '--', hotspotId, codesFile, String(run & 255)];
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  // 'close', not 'exit': stdout may still hold the WRK_JSON line when the process exits.
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const line = out.split('\n').find((l) => l.startsWith('WRK_JSON '));
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${out.slice(-500)}`);
  const w = JSON.parse(line.slice('WRK_JSON '.length));
  return {
    requests: w.requests, rps: w.requests / (w.duration_us / 1e6), p50Ms: w.p50_us / 1000, p99Ms: w.p99_us / 1000,
    non2xx: w.status, errors: w.connect + w.read + w.write + w.timeout,
  };
}

/** Puts wrk on the PATH from Debian's packages when it is missing and we are root. */
function ensureWrk(): void {
  if (spawnSync('sh', ['-c', 'command -v wrk'], { stdio: 'ignore' }).status === 0) return;
  if (process.getuid?.() !== 0) throw new Error('wrk is not installed (Debian/Ubuntu: sudo apt-get install wrk)');
  say('wrk missing: installing it from Debian packages (apt-get)...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', 'wrk']]) {
    if (spawnSync('apt-get', args, { stdio: 'inherit', env }).status !== 0) throw new Error(`apt-get ${args.join(' ')} failed`);
  }
}

/** A tenant, a hotspot and VOUCHERS unlimited vouchers, through the engine (no sink: the service runs its own). */
async function seed(env: NodeJS.ProcessEnv): Promise<{ hotspotId: string; codes: string[] }> {
  const engine = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false });
  try {
    await engine.start();
    const tenant = await engine.tenants.create('Bench Venue');
    const hs = await engine.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'Europe/Istanbul' });
    const rows = await engine.vouchers.createBatch(tenant.id, {
      count: VOUCHERS, format: DEFAULT_CODE_FORMAT, max_uses: null, expires_at: null, bandwidth_profile: null,
      daily_quota_mb: null, session_quota_mb: null, duration_minutes: null, bandwidth_down_mbps: null, bandwidth_up_mbps: null, ssids: [], notes: null,
    }, 'bench');
    return { hotspotId: hs.id, codes: rows.map((r) => r.code) };
  } finally {
    await engine.close();
  }
}

const fmt = (x: number, digits = 1): string => x.toFixed(digits);

/** BENCH_REDIS_DURABILITY: the bench's Redis set as asked, and the service's environment for it. */
async function durability(stack: LocalStack): Promise<NodeJS.ProcessEnv> {
  if (DURABILITY === 'everysec') return {};
  const redis = new Redis(stack.local.redisUrl);
  try {
    if (DURABILITY === 'always') {
      await redis.config('SET', 'appendfsync', 'always');
      return {};
    }
    const port = await freePort();
    const replicaDir = join(stack.dir, 'replica');
    mkdirSync(replicaDir);
    const r = spawnSync('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', replicaDir, '--appendonly', 'yes',
      '--appendfsync', 'everysec', '--save', '', '--replicaof', '127.0.0.1', String(stack.local.redisPort), '--daemonize', 'yes',
      '--pidfile', join(replicaDir, 'redis.pid'), '--logfile', join(replicaDir, 'redis.log')]);
    if (r.status !== 0) throw new Error('the replica redis-server failed to start');
    undo.push(async () => { spawnSync('redis-cli', ['-p', String(port), 'shutdown', 'nosave']); });
    const replica = new Redis(port, '127.0.0.1');
    try {
      for (let i = 0; !/master_link_status:up/.test(await replica.info('replication')); i++) {
        if (i > 200) throw new Error('the replica did not come in sync within 10 s');
        await new Promise((res) => setTimeout(res, 50));
      }
    } finally {
      replica.disconnect();
    }
    return { REDIS_WAIT_REPLICAS: '1' };
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<number> {
  ensureWrk();
  try {
    const stack = await localStack('portal-verify', undo);
    const { dir } = stack;
    const env: NodeJS.ProcessEnv = { ...stack.env, HTTP_HOST: HOST, ...(await durability(stack)) };
    const { hotspotId, codes } = await seed(env);
    const codesFile = join(dir, 'codes.txt');
    writeFileSync(codesFile, codes.join('\n') + '\n');

    const prof = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
    const service = await spawnReady('service', [...prof, projectPath('dist', 'scripts', 'serve.js')], env);
    const echo = await spawnReady('echo', [projectPath('dist', 'bench', 'echo-server.js')], { PATH: process.env.PATH });
    const bases: Record<Target, string> = {
      verify: `http://${HOST}:${service.ready.ports.main}`, echo: `http://${HOST}:${echo.ready.port}`,
    };
    const pids = {
      server: 0,
      ...stack.pids(),
    };

    // One request by hand: the scenario must be the success path, or the figures mean nothing.
    const probe = await fetch(bases.verify + PATH, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hotspot_id: hotspotId, code: codes[0], mac: mac(10, 0, 0) }),
    });
    const probeBody = await probe.text();
    if (probe.status !== 200 || !probeBody.includes('"authorized"')) throw new Error(`verify probe answered ${probe.status} ${probeBody}`);

    say(`portal-verify: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per run, ${VOUCHERS} unlimited vouchers, ` +
      `wrk -t${WRK_THREADS}; redis durability ${DURABILITY}; nproc ${spawnSync('nproc').stdout.toString().trim()}, node ${process.version}`);
    const results: Figures[] = [];
    let run = 1;
    for (const tool of ['wrk', 'autocannon'] as const) {
      for (const target of ['verify', 'echo'] as const) {
        pids.server = (target === 'verify' ? service.child : echo.child).pid!;
        const go = (secs: number) => (tool === 'wrk'
          ? runWrk(bases[target], hotspotId, codesFile, run++, secs)
          : runAutocannon(bases[target], hotspotId, codes, run++, secs));
        await go(WARMUP_S);
        const [f, cpu] = await withCpu(pids, () => go(DURATION_S));
        const fig: Figures = { tool, target, ...f, cpu };
        results.push(fig);
        // CPU per request is steadier than req/s on a shared machine: it shows what a change saved.
        const perReq = (pct: number): string => fmt((pct * 1e4) / fig.rps, 0);
        say(`  ${tool.padEnd(10)} ${target.padEnd(6)} ${fmt(fig.rps, 0).padStart(6)} req/s  p50 ${fmt(fig.p50Ms, 2)} ms  p99 ${fmt(fig.p99Ms, 2)} ms  ` +
          `non-2xx ${fig.non2xx}  errors ${fig.errors}  (${fig.requests} requests)\n` +
          `${' '.repeat(20)}cpu % of a core: server ${cpu.server}, redis ${cpu.redis}, postgres ${cpu.postgres}, rest ${cpu.rest}; ` +
          `machine idle ${cpu.idle}%; cpu us per request: server ${perReq(cpu.server)}, redis ${perReq(cpu.redis)}, postgres ${perReq(cpu.postgres)}`);
      }
    }

    const get = (tool: Tool, target: Target): Figures => results.find((r) => r.tool === tool && r.target === target)!;
    const part = (tool: Tool): { text: string; ratio: number; p99: number } => {
      const v = get(tool, 'verify'), e = get(tool, 'echo');
      const ratio = v.rps / e.rps;
      const bad = v.non2xx + v.errors + e.non2xx + e.errors;
      return {
        ratio, p99: v.p99Ms,
        text: `${tool} verify ${fmt(v.rps, 0)} req/s p50 ${fmt(v.p50Ms)} ms p99 ${fmt(v.p99Ms)} ms | ` +
          `echo ${fmt(e.rps, 0)} req/s p99 ${fmt(e.p99Ms)} ms | ratio ${fmt(ratio, 2)} | non-2xx+errors ${bad}`,
      };
    };
    const wrk = part('wrk'), ac = part('autocannon');
    const failed = results.filter((r) => r.non2xx > 0 || r.errors > 0);
    const pass = wrk.ratio >= TARGET_RATIO && wrk.p99 <= TARGET_P99_MS;
    const verdict = failed.length ? `ERRORS in ${failed.map((r) => `${r.tool} ${r.target}`).join(', ')}` : pass ? 'PASS' : 'FAIL';
    process.stdout.write(`portal-verify [${DURABILITY}]: ${wrk.text} ; ${ac.text} ` +
      `(target on wrk: ratio >= ${TARGET_RATIO}, p99 <= ${TARGET_P99_MS} ms) ${verdict}\n`);
    return failed.length ? 1 : pass ? 0 : 2;
  } finally {
    await undo.run();
  }
}

undo.guard('portal-verify', DEADLINE_MS);

main().then((code) => { process.exitCode = code; }, (err: Error) => {
  say(`portal-verify failed: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});
