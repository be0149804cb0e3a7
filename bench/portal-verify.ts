import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createLogger, DEFAULT_CODE_FORMAT, Engine, loadConfig, projectPath } from '../engine/index.js';
import { freePort } from '../scripts/local-services.js';
import { localStack, benchMac as mac, drained, say, spawnReady as spawnChild, Teardown, withCpu, type CpuUse, type LocalStack, serviceNodeOptions } from './bench-kit.js';
import { floorOutbox } from './verify-floor.js';

const undo = new Teardown();
const spawnReady = (name: string, args: string[], env: NodeJS.ProcessEnv) => spawnChild(undo, name, args, env);

/**
 * Scenario: portal voucher verification (POST /api/v1/hotspot-portal/voucher/verify)
 * at 100 connections, against its FLOOR in the same run (bench/verify-floor.ts:
 * a bare uWebSockets.js server doing the same durable work with the least
 * code: one script call per verify for the use, the session hash, the live set
 * and the start record, and a COPY sink into the same Postgres tables).
 * Every request carries its own (code, MAC), so each is a new use of a
 * multi-use voucher. Same client for both: wrk with portal-verify.lua.
 *
 * Rounds of two phases, the service and the floor, in alternating order
 * (ABBA...), each a warm-up and a measurement. A phase's CPU is counted from
 * the start of its measurement until both outboxes are drained (the sinks'
 * Postgres work for the phase's verifies included), divided by the verifies
 * answered. Per phase it also reads Redis's INFO commandstats and Postgres's
 * row and transaction counters before and after: commands, rows and
 * transactions per verify (docs: bench/results/portal-verify.md).
 *
 * Everything is on loopback and thrown away: Redis and Postgres in a temporary
 * folder, the service and the floor as child processes (the load generator
 * never shares a thread with a server). Details go to stderr; stdout gets one
 * summary line. Exit 1 when a run had errors or non-2xx answers, 2 when the
 * targets were missed (verify >= 0.7 of the floor's req/s, CPU per verify of
 * service + Redis + Postgres <= 1.4 of the floor's; issue 22).
 *
 * Knobs (environment): BENCH_DURATION (s, default 10), BENCH_WARMUP (s, 2),
 * BENCH_ROUNDS (2), BENCH_CONNECTIONS (100), BENCH_WRK_THREADS (1),
 * BENCH_CPU_PROF (a folder: the service and the floor run with --cpu-prof and
 * write their profiles there on exit, named by pid), BENCH_REDIS_DURABILITY (`everysec`, the default:
 * Redis's AOF fsync once a second; `always`: `appendfsync always`; `wait`: a
 * replica of its own and REDIS_WAIT_REPLICAS=1; the floor does not wait for
 * the replica), BENCH_ONLY (`verify` or `floor`: that side alone).
 */

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const WARMUP_S = Number(process.env.BENCH_WARMUP ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const WRK_THREADS = Number(process.env.BENCH_WRK_THREADS ?? 1);
const CPU_PROF = process.env.BENCH_CPU_PROF;
const ONLY = process.env.BENCH_ONLY;
const DURABILITY = process.env.BENCH_REDIS_DURABILITY ?? 'everysec';
if (!['everysec', 'always', 'wait'].includes(DURABILITY)) throw new Error(`BENCH_REDIS_DURABILITY=${DURABILITY}: everysec, always or wait`);
if (ONLY !== undefined && ONLY !== 'verify' && ONLY !== 'floor') throw new Error(`BENCH_ONLY=${ONLY}: verify or floor`);
const VOUCHERS = 200;
const TARGET_RATIO = 0.7;
const TARGET_CPU_RATIO = 1.4;
/** The whole run is bounded: setup, the rounds' warm-ups, measurements and drains, teardown. */
const DEADLINE_MS = 120_000 + 2 * ROUNDS * (DURATION_S + WARMUP_S + 40) * 1000;
const PATH = '/api/v1/hotspot-portal/voucher/verify';
const HOST = '127.0.0.1';

type Target = 'verify' | 'floor';

interface Figures {
  target: Target;
  round: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  /** Socket errors and timeouts. */
  errors: number;
  /**
   * CPU use from the measurement's start until both outboxes were drained, in
   * percent of one core: the server under test, Redis, Postgres (all its
   * processes), and the rest of the machine's busy time (mostly wrk); idle
   * is percent of the machine.
   */
  cpu: CpuUse;
  /** CPU µs per verify answered: server, Redis, Postgres. */
  us: { server: number; redis: number; postgres: number; total: number };
  /** Redis commands per verify (INFO commandstats, scripts' inner commands included), by command. */
  commands: Map<string, { calls: number; usec: number }>;
  /** Postgres per verify: transactions committed, rows inserted and updated, by table too. */
  pg: { xacts: number; inserted: number; updated: number; tables: Map<string, number> };
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
async function seed(engine: Engine, name: string): Promise<{ tenantId: string; hotspotId: string; codes: string[] }> {
  const tenant = await engine.tenants.create(name);
  const hs = await engine.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'Europe/Istanbul' });
  const rows = await engine.vouchers.createBatch(tenant.id, {
    count: VOUCHERS, format: DEFAULT_CODE_FORMAT, max_uses: null, expires_at: null, bandwidth_profile: null,
    daily_quota_mb: null, session_quota_mb: null, duration_minutes: null, bandwidth_down_mbps: null, bandwidth_up_mbps: null, ssids: [], notes: null,
  }, 'bench');
  return { tenantId: tenant.id, hotspotId: hs.id, codes: rows.map((r) => r.code) };
}

const fmt = (x: number, digits = 1): string => x.toFixed(digits);

/** INFO commandstats as command -> {calls, usec}. */
async function commandStats(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const out = new Map<string, { calls: number; usec: number }>();
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    out.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  }
  return out;
}

/** Postgres's counters: the database's commits and rows, and rows inserted or updated per table (partitions summed under their parent's prefix). */
async function pgStats(db: pg.Client): Promise<{ xacts: number; inserted: number; updated: number; tables: Map<string, number> }> {
  await db.query('SELECT pg_stat_clear_snapshot()');
  const d = (await db.query<{ x: string; i: string; u: string }>(
    'SELECT xact_commit::text AS x, tup_inserted::text AS i, tup_updated::text AS u FROM pg_stat_database WHERE datname = current_database()')).rows[0]!;
  const tables = new Map<string, number>();
  for (const r of (await db.query<{ relname: string; n: string }>('SELECT relname, (n_tup_ins + n_tup_upd)::text AS n FROM pg_stat_user_tables')).rows) {
    const name = r.relname.replace(/_\d{8}$/, '');
    tables.set(name, (tables.get(name) ?? 0) + Number(r.n));
  }
  return { xacts: Number(d.x), inserted: Number(d.i), updated: Number(d.u), tables };
}

/** Postgres counts a backend's rows when it reports them (at most a second after its commit): read until two reads agree. */
async function settledPgStats(db: pg.Client): Promise<Awaited<ReturnType<typeof pgStats>>> {
  let last = await pgStats(db);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 300));
    const next = await pgStats(db);
    if (next.inserted === last.inserted && next.updated === last.updated) return next;
    last = next;
  }
  return last;
}

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
    const engine = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false });
    let sides: Record<Target, { tenantId: string; hotspotId: string; codes: string[] }>;
    try {
      await engine.start();
      sides = { verify: await seed(engine, 'Bench Venue'), floor: await seed(engine, 'Bench Floor') };
    } finally {
      await engine.close();
    }
    const codesFile = (t: Target): string => join(dir, `codes-${t}.txt`);
    for (const t of ['verify', 'floor'] as const) writeFileSync(codesFile(t), sides[t].codes.join('\n') + '\n');

    const prof = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
    const service = await spawnReady('service', [...serviceNodeOptions(), ...prof, projectPath('dist', 'scripts', 'serve.js')], env);
    const floor = await spawnReady('floor', [...prof, projectPath('dist', 'bench', 'verify-floor.js')], {
      PATH: process.env.PATH, REDIS_URL: stack.local.redisUrl, DATABASE_URL: stack.local.databaseUrl,
      FLOOR_TENANT: sides.floor.tenantId, FLOOR_HOTSPOT: sides.floor.hotspotId, FLOOR_MINUTES: String(loadConfig(env).defaultSessionMinutes),
    });
    const bases: Record<Target, string> = {
      verify: `http://${HOST}:${service.ready.ports.main}`, floor: `http://${HOST}:${floor.ready.port}`,
    };
    const servers: Record<Target, number> = { verify: service.child.pid!, floor: floor.child.pid! };
    const outboxes: Record<Target, string> = { verify: `{t:${sides.verify.tenantId}}:outbox`, floor: floorOutbox(sides.floor.tenantId) };
    const redis = new Redis(stack.local.redisUrl);
    const db = new pg.Client({ connectionString: stack.local.databaseUrl });
    await db.connect();
    undo.push(async () => { redis.disconnect(); await db.end(); });

    // One request by hand on each: the scenario must be the success path, or the figures mean nothing.
    for (const t of ['verify', 'floor'] as const) {
      const probe = await fetch(bases[t] + PATH, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ hotspot_id: sides[t].hotspotId, code: sides[t].codes[0], mac: mac(10, t === 'verify' ? 0 : 1, 0) }),
      });
      const probeBody = await probe.text();
      if (probe.status !== 200 || !probeBody.includes('"authorized"')) throw new Error(`${t} probe answered ${probe.status} ${probeBody}`);
    }

    say(`portal-verify: ${CONNECTIONS} connections, ${WARMUP_S} s warm-up + ${DURATION_S} s per phase, ${ROUNDS} rounds, ${VOUCHERS} unlimited vouchers a side, ` +
      `wrk -t${WRK_THREADS}; redis durability ${DURABILITY}; nproc ${spawnSync('nproc').stdout.toString().trim()}, node ${process.version}`);
    const results: Figures[] = [];
    let run = 1;
    for (let round = 1; round <= ROUNDS; round++) {
      const order: Target[] = ONLY ? [ONLY as Target] : round % 2 === 1 ? ['verify', 'floor'] : ['floor', 'verify'];
      for (const target of order) {
        const go = (secs: number) => runWrk(bases[target], sides[target].hotspotId, codesFile(target), run++, secs);
        await go(WARMUP_S);
        for (const t of ['verify', 'floor'] as const) await drained(redis, outboxes[t], 30_000);
        const [c0, p0] = [await commandStats(redis), await settledPgStats(db)];
        const at = Date.now();
        const fromUs = process.hrtime.bigint() / 1000n;
        const [f, cpu] = await withCpu({ server: servers[target], ...stack.pids() }, async () => {
          const w = await go(DURATION_S);
          const left = await drained(redis, outboxes[target], 30_000);
          if (left.left > 0) say(`  ${target}: ${left.left} records still in the outbox 30 s after the load`);
          return w;
        });
        const secs = (Date.now() - at) / 1000;
        // The profiles' clock is CLOCK_MONOTONIC, as hrtime's: the window for cpu-profile-summary.
        if (CPU_PROF) say(`  ${target} profile window (pid ${servers[target]}): --from ${fromUs} --to ${process.hrtime.bigint() / 1000n} --requests ${f.requests}`);
        const [c1, p1] = [await commandStats(redis), await settledPgStats(db)];
        const perVerify = (pct: number): number => (pct * secs * 1e4) / f.requests;
        const us = { server: perVerify(cpu.server), redis: perVerify(cpu.redis), postgres: perVerify(cpu.postgres), total: 0 };
        us.total = us.server + us.redis + us.postgres;
        const commands = new Map<string, { calls: number; usec: number }>();
        for (const [name, c] of c1) {
          const before = c0.get(name) ?? { calls: 0, usec: 0 };
          const calls = (c.calls - before.calls) / f.requests;
          // The bench's own INFO and XLEN calls are in these too: a few per phase, nothing per verify.
          if (calls > 0) commands.set(name, { calls, usec: (c.usec - before.usec) / f.requests });
        }
        const tables = new Map<string, number>();
        for (const [name, n] of p1.tables) {
          const d = (n - (p0.tables.get(name) ?? 0)) / f.requests;
          if (d > 0.001) tables.set(name, d);
        }
        const fig: Figures = {
          target, round, ...f, cpu, us, commands,
          pg: { xacts: (p1.xacts - p0.xacts) / f.requests, inserted: (p1.inserted - p0.inserted) / f.requests, updated: (p1.updated - p0.updated) / f.requests, tables },
        };
        results.push(fig);
        const top = [...commands].sort((a, b) => b[1].usec - a[1].usec).slice(0, 14)
          .map(([n, c]) => `${n} ${fmt(c.calls, 2)} (${fmt(c.usec, 1)} us)`).join(', ');
        const rows = [...tables].sort((a, b) => b[1] - a[1]).map(([n, d]) => `${n} ${fmt(d, 2)}`).join(', ');
        say(`  round ${round} ${target.padEnd(6)} ${fmt(fig.rps, 0).padStart(6)} req/s  p50 ${fmt(fig.p50Ms, 2)} ms  p99 ${fmt(fig.p99Ms, 2)} ms  ` +
          `non-2xx ${fig.non2xx}  errors ${fig.errors}  (${fig.requests} requests)\n` +
          `      cpu % of a core (measurement + drain, ${fmt(secs, 1)} s): server ${cpu.server}, redis ${cpu.redis}, postgres ${cpu.postgres}, rest ${cpu.rest}; ` +
          `machine idle ${cpu.idle}%\n` +
          `      cpu us per verify: server ${fmt(us.server, 0)}, redis ${fmt(us.redis, 0)}, postgres ${fmt(us.postgres, 0)}, total ${fmt(us.total, 0)}\n` +
          `      redis commands per verify: ${[...commands.values()].reduce((n, c) => n + c.calls, 0).toFixed(1)}: ${top}\n` +
          `      postgres per verify: ${fmt(fig.pg.xacts, 3)} commits, ${fmt(fig.pg.inserted, 2)} rows inserted, ${fmt(fig.pg.updated, 2)} updated; by table: ${rows}`);
      }
    }

    const failed = results.filter((r) => r.non2xx > 0 || r.errors > 0);
    const of = (t: Target): Figures[] => results.filter((r) => r.target === t);
    const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    if (ONLY) {
      const m = of(ONLY as Target);
      process.stdout.write(`portal-verify [${DURABILITY}] ${ONLY} only: ${fmt(mean(m.map((r) => r.rps)), 0)} req/s, cpu us per verify ` +
        `${fmt(mean(m.map((r) => r.us.server)), 0)} / ${fmt(mean(m.map((r) => r.us.redis)), 0)} / ${fmt(mean(m.map((r) => r.us.postgres)), 0)}` +
        `${failed.length ? ' ERRORS' : ''}\n`);
      return failed.length ? 1 : 0;
    }
    // Each round's ratio is of two phases next to each other: the neighbours' load moves less between them than across the run.
    const ratios = Array.from({ length: ROUNDS }, (_, i) => {
      const v = results.find((r) => r.round === i + 1 && r.target === 'verify')!, f = results.find((r) => r.round === i + 1 && r.target === 'floor')!;
      return {
        rps: v.rps / f.rps, server: v.us.server / f.us.server, redis: v.us.redis / f.us.redis, postgres: v.us.postgres / f.us.postgres,
        total: v.us.total / f.us.total,
      };
    });
    const r = { rps: mean(ratios.map((x) => x.rps)), server: mean(ratios.map((x) => x.server)), redis: mean(ratios.map((x) => x.redis)),
      postgres: mean(ratios.map((x) => x.postgres)), total: mean(ratios.map((x) => x.total)) };
    const v = of('verify'), fl = of('floor');
    const pass = r.rps >= TARGET_RATIO && r.total <= TARGET_CPU_RATIO;
    const verdict = failed.length ? `ERRORS in ${failed.map((x) => `round ${x.round} ${x.target}`).join(', ')}` : pass ? 'PASS' : 'FAIL';
    process.stdout.write(`portal-verify [${DURABILITY}]: verify ${fmt(mean(v.map((x) => x.rps)), 0)} req/s p99 ${fmt(mean(v.map((x) => x.p99Ms)))} ms | ` +
      `floor ${fmt(mean(fl.map((x) => x.rps)), 0)} req/s p99 ${fmt(mean(fl.map((x) => x.p99Ms)))} ms | ratio ${fmt(r.rps, 2)} ` +
      `(rounds ${ratios.map((x) => fmt(x.rps, 2)).join(', ')}) | cpu per verify of the floor's: total ${fmt(r.total, 2)} ` +
      `(rounds ${ratios.map((x) => fmt(x.total, 2)).join(', ')}), service ${fmt(r.server, 2)}, redis ${fmt(r.redis, 2)}, postgres ${fmt(r.postgres, 2)} | ` +
      `us per verify verify/floor: service ${fmt(mean(v.map((x) => x.us.server)), 0)}/${fmt(mean(fl.map((x) => x.us.server)), 0)}, ` +
      `redis ${fmt(mean(v.map((x) => x.us.redis)), 0)}/${fmt(mean(fl.map((x) => x.us.redis)), 0)}, ` +
      `postgres ${fmt(mean(v.map((x) => x.us.postgres)), 0)}/${fmt(mean(fl.map((x) => x.us.postgres)), 0)} ` +
      `(targets: ratio >= ${TARGET_RATIO}, cpu <= ${TARGET_CPU_RATIO}) ${verdict}\n`);
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
