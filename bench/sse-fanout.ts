import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createLogger, DEFAULT_CODE_FORMAT, DEFAULT_MODULES, Engine, loadConfig, projectPath, signStreamToken } from '../engine/index.js';
import { keys } from '../engine/redis/keys.js';
import { localStack, benchMac, cpuTicks, drained, percentile, say, stopChild, Teardown, watchReady, withCpu, type CpuUse, type ReadyChild, serviceNodeOptions } from './bench-kit.js';

/**
 * Scenario (issue 11): 10,000 dashboard stream clients on ONE service process,
 * all on one tenant's `/stream/live-sessions?token=...`; a guest signs in
 * through portal verify; how long until the invalidation reached every one
 * of them (p50/p99 over SIGNINS sign-ins). Yardstick in the same run: a bare
 * uWebSockets.js server (sse-broadcast-server.ts) writing one ~50-byte frame
 * to 10,000 held responses, timed from the request that triggers it to the
 * last client's read (run before and after the service's phase). Beside it: portal verify's rate (wrk, 100 connections)
 * in alternating phases, without stream clients and with the 10,000 connected (ROUNDS times), each with-phase set
 * against the mean of the without-phases on both sides of it.
 *
 * Sign-ins are GAP_MS apart, more than the service's coalescing window
 * (STREAM_COALESCE_MS, 500 ms): each is then a leading edge and goes out at
 * once; a sign-in inside a window would wait for the window's end by design.
 * The k-th invalidation id to arrive is the k-th sign-in's (each sign-in
 * starts one session; nothing else writes to the tenant meanwhile).
 *
 * Clients are raw TCP sockets in CLIENT_PROCS child processes (sse-clients.ts).
 * 10,000 sockets need more descriptors than a default shell gives: the
 * service, the yardstick and the client processes are started through
 * `sh -c 'ulimit -n FD_LIMIT'` (root may raise the hard limit; otherwise the
 * hard limit is used) and the limit each got, read from /proc, is printed.
 *
 * One summary line on stdout; exit 0 pass, 2 a target missed, 1 errors (a
 * client that failed to connect or missed an invalidation, a non-200 verify).
 * Bounded: a guard stops everything after a few minutes. Knobs: BENCH_CLIENTS
 * (10000), BENCH_SIGNINS (30), BENCH_GAP_MS (800), BENCH_DURATION (verify's
 * seconds per wrk run, 20), BENCH_ROUNDS (verify phases with clients, 3),
 * BENCH_CLIENT_PROCS (2), BENCH_QUIET_STREAM (1: the clients listen to a
 * tenant where nothing happens, so the sign-in phase has nothing to time
 * and the rate phases show what the connections alone cost), BENCH_CPU_PROF (a folder: the
 * service runs with --cpu-prof and writes its threads' profiles there; each
 * verify phase prints its window for cpu-profile-summary's --from/--to).
 */

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 10_000);
const CLIENT_PROCS = Number(process.env.BENCH_CLIENT_PROCS ?? 2);
const SIGNINS = Number(process.env.BENCH_SIGNINS ?? 30);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 800);
/**
 * A phase of 20 s: a surge lasts minutes, and the stream's steady state under one is a broadcast
 * every stretched window (4 s with 10,000 clients); in a 10 s phase the surge's first two (the
 * leading change at once, the first 500 ms window) were half of the phase's broadcasts.
 */
const VERIFY_S = Number(process.env.BENCH_DURATION ?? 20);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET_P99_MS = 250;
/** "Unaffected": verify's rate with the clients connected at least this share of its rate without. */
const TARGET_RATE_RATIO = 0.9;
const FD_LIMIT = CLIENTS + 4096;
const CPU_PROF = process.env.BENCH_CPU_PROF;
const QUIET_STREAM = process.env.BENCH_QUIET_STREAM === '1';
const HOST = '127.0.0.1';
const VERIFY_PATH = '/api/v1/hotspot-portal/voucher/verify';
const STREAM_PATH = '/api/v1/tenants/me/stream/live-sessions';

const undo = new Teardown();
undo.guard('sse-fanout', 240_000 + 3 * SIGNINS * GAP_MS + (2 * ROUNDS + 2) * (VERIFY_S + 20) * 1000);

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const fmt = (x: number): string => x.toFixed(1);

/** A node child started through a shell that raises its descriptor limit first. */
function spawnWithFds(name: string, args: string[], env: NodeJS.ProcessEnv, stdin: 'pipe' | 'ignore' = 'ignore'): Promise<ReadyChild> {
  const script = `ulimit -n ${FD_LIMIT} 2>/dev/null || ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"`;
  return watchReady(undo, name, spawn('sh', ['-c', script, process.execPath, ...args], { env, stdio: [stdin, 'pipe', 'inherit'] }));
}

/** The soft "Max open files" of a process. */
function fdLimit(pid: number): string {
  const line = readFileSync(`/proc/${pid}/limits`, 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
  return line?.split(/\s+/)[3] ?? '?';
}

/** Per frame id: connections that got it, when the last did, when the first did (ms, wall clock). */
type Seen = Map<string, [number, number, number]>;

/** CLIENTS stream connections spread over CLIENT_PROCS processes. */
class ClientGroup {
  private constructor(private readonly procs: ReadyChild[], readonly connected: number, readonly failed: number, readonly firstError?: string) {}

  static async open(port: number, path: string): Promise<ClientGroup> {
    const per = Math.ceil(CLIENTS / CLIENT_PROCS);
    const procs = await Promise.all(Array.from({ length: CLIENT_PROCS }, (_, i) =>
      spawnWithFds(`clients ${i}`, [projectPath('dist', 'bench', 'sse-clients.js'), HOST, String(port), path, String(Math.min(per, CLIENTS - i * per))],
        { PATH: process.env.PATH }, 'pipe')));
    const sum = (k: 'connected' | 'failed'): number => procs.reduce((s, p) => s + Number(p.ready[k]), 0);
    say(`  ${sum('connected')} stream clients connected in ${CLIENT_PROCS} processes (fd limit ${fdLimit(procs[0]!.child.pid!)} each)`);
    return new ClientGroup(procs, sum('connected'), sum('failed'), procs.find((p) => p.ready.firstError)?.ready.firstError);
  }

  /** What every process saw since the last report, merged; and how many connections are still open. */
  async report(): Promise<{ seen: Seen; open: number }> {
    const before = this.procs.map((p) => p.messages.length);
    for (const p of this.procs) p.child.stdin!.write('report\n');
    const until = Date.now() + 30_000;
    while (this.procs.some((p, i) => p.messages.length <= before[i]!)) {
      if (Date.now() > until) throw new Error('stream clients did not report within 30 s');
      await sleep(20);
    }
    const seen: Seen = new Map();
    let open = 0;
    for (const p of this.procs) {
      const m = p.messages[p.messages.length - 1]!;
      open += Number(m.open);
      for (const [id, [n, last, first]] of Object.entries(m.ids as Record<string, [number, number, number]>)) {
        const s = seen.get(id);
        seen.set(id, s ? [s[0] + n, Math.max(s[1], last), Math.min(s[2], first)] : [n, last, first]);
      }
    }
    return { seen, open };
  }

  /** CPU ticks (1/100 s) of the client processes so far. */
  ticks(): number {
    return this.procs.reduce((s, p) => s + cpuTicks(p.child.pid!), 0);
  }

  async close(): Promise<void> {
    for (const p of this.procs) p.child.stdin!.write('close\n');
    await Promise.all(this.procs.map((p) => stopChild(p.child)));
  }
}

/**
 * Per event: ms from its trigger to the last client's read; events some
 * client missed; CPU ms per event of the server (the service's includes the
 * verify itself and its idle threads) and of all client processes, which
 * move much less with the neighbours' load than the times do.
 */
interface Fanout { latencies: number[]; missed: number; serverCpuMs: number; clientCpuMs: number }

function fanout(sent: number[], ids: string[], seen: Seen, clients: number): Fanout {
  const out: Fanout = { latencies: [], missed: 0, serverCpuMs: 0, clientCpuMs: 0 };
  ids.forEach((id, k) => {
    const s = seen.get(id);
    if (!s || s[0] !== clients) out.missed++;
    if (s) out.latencies.push(s[1] - sent[k]!);
  });
  out.latencies.sort((a, b) => a - b);
  return out;
}

const describe = (f: Fanout): string => `p50 ${fmt(percentile(f.latencies, 50))} p99 ${fmt(percentile(f.latencies, 99))} max ${fmt(f.latencies[f.latencies.length - 1] ?? NaN)} ms, ` +
  `cpu ms per event server ${fmt(f.serverCpuMs)} clients ${fmt(f.clientCpuMs)}`;

/** Runs `fn` (which triggers SIGNINS events) and charges the CPU meanwhile to each event. */
async function chargeCpu(serverPid: number, clients: ClientGroup, fn: () => Promise<void>): Promise<{ serverCpuMs: number; clientCpuMs: number }> {
  const s0 = cpuTicks(serverPid), c0 = clients.ticks();
  await fn();
  return { serverCpuMs: ((cpuTicks(serverPid) - s0) * 10) / SIGNINS, clientCpuMs: ((clients.ticks() - c0) * 10) / SIGNINS };
}

/**
 * SIGNINS sign-ins through portal verify, GAP_MS apart, with the clients connected: per sign-in, the time until its
 * invalidation reached every client, and the CPU charged to each.
 */
async function signinLatency(port: number, hotspotId: string, codes: string[], pids: { server: number; redis: number; postgres: number }, clients: ClientGroup): Promise<{ signin: Fanout; bad: number }> {
  await clients.report(); // starts the counts from here
  const sent: number[] = [];
  const answered: number[] = [];
  let bad = 0;
  const [charged, cpu] = await withCpu(pids, () => chargeCpu(pids.server, clients, async () => {
    for (let k = 0; k < SIGNINS; k++) {
      sent.push(now());
      const r = await fetch(`http://${HOST}:${port}${VERIFY_PATH}`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ hotspot_id: hotspotId, code: codes[k % codes.length], mac: benchMac(0x0a, 1, k) }),
      });
      const body = await r.text();
      answered.push(now() - sent[k]!);
      if (r.status !== 200 || !body.includes('authorized')) { bad++; say(`  sign-in ${k}: ${r.status} ${body.slice(0, 200)}`); }
      await sleep(Math.max(0, sent[k]! + GAP_MS - now()));
    }
    await sleep(500); // the last invalidation's reads
  }));
  const { seen, open } = await clients.report();
  // The k-th id to reach any client is the k-th sign-in's.
  const ids = [...seen.entries()].sort((a, b) => a[1][2] - b[1][2]).map(([id]) => id);
  if (ids.length !== SIGNINS) say(`  ${ids.length} invalidation ids for ${SIGNINS} sign-ins`);
  const signin = { ...fanout(sent, ids.slice(0, SIGNINS), seen, clients.connected), ...charged };
  signin.missed += Math.max(0, SIGNINS - ids.length);
  answered.sort((a, b) => a - b);
  say(`  sign-in to invalidation at all ${clients.connected}: ${describe(signin)}, missed ${signin.missed}, open ${open}; ` +
    `the verify answered in p50 ${fmt(percentile(answered, 50))} max ${fmt(answered[answered.length - 1] ?? NaN)} ms; ` +
    `cpu % server ${cpu.server}, redis ${cpu.redis}, rest ${cpu.rest}, idle ${cpu.idle}`);
  return { signin, bad };
}

/** wrk on portal verify with bench/portal-verify.lua: requests/s and non-2xx or socket errors. */
async function wrk(port: number, hotspotId: string, codesFile: string, run: number, seconds: number): Promise<{ rps: number; bad: number; p99Ms: number }> {
  const args = ['-t1', '-c100', `-d${seconds}s`, '--timeout', '5s', '-s', projectPath('bench', 'portal-verify.lua'),
    `http://${HOST}:${port}${VERIFY_PATH}`, '--', hotspotId, codesFile, String(run)];
  const child = spawn('wrk', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const line = out.split('\n').find((l) => l.startsWith('WRK_JSON '));
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${out.slice(-300)}`);
  const w = JSON.parse(line.slice('WRK_JSON '.length));
  return { rps: w.requests / (w.duration_us / 1e6), bad: w.status + w.connect + w.read + w.write + w.timeout, p99Ms: w.p99_us / 1000 };
}

async function seed(env: NodeJS.ProcessEnv): Promise<{ tenantId: string; quietTenantId: string; hotspotId: string; codes: string[] }> {
  const engine = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false, actors: false });
  try {
    await engine.start();
    const tenant = await engine.tenants.create('Bench arena', [...DEFAULT_MODULES, 'dashboard']);
    const quiet = await engine.tenants.create('Bench quiet venue', [...DEFAULT_MODULES, 'dashboard']);
    const hs = await engine.hotspots.create(tenant.id, { name: 'Gate A', timezone: 'Europe/Istanbul' });
    const rows = await engine.vouchers.createBatch(tenant.id, {
      count: 200, format: DEFAULT_CODE_FORMAT, max_uses: null, expires_at: null, bandwidth_profile: null,
      daily_quota_mb: null, session_quota_mb: null, duration_minutes: null, bandwidth_down_mbps: null, bandwidth_up_mbps: null, ssids: [], notes: null,
    }, 'bench');
    return { tenantId: tenant.id, quietTenantId: quiet.id, hotspotId: hs.id, codes: rows.map((r) => r.code) };
  } finally {
    await engine.close();
  }
}

/** The yardstick: the bare uWS broadcast to CLIENTS held responses, SIGNINS times. */
async function yardstick(): Promise<Fanout> {
  const server = await spawnWithFds('broadcast server', [projectPath('dist', 'bench', 'sse-broadcast-server.js')], { PATH: process.env.PATH });
  const port = server.ready.port as number;
  const clients = await ClientGroup.open(port, '/stream');
  try {
    if (clients.failed) throw new Error(`${clients.failed} clients of the bare server failed: ${clients.firstError}`);
    const sent: number[] = [];
    const ids: string[] = [];
    const cpu = await chargeCpu(server.child.pid!, clients, async () => {
      for (let k = 0; k < SIGNINS; k++) {
        ids.push(`b${k}`);
        sent.push(now());
        const r = await fetch(`http://${HOST}:${port}/broadcast?id=b${k}`);
        if (Number(await r.text()) !== clients.connected) throw new Error('the bare server holds fewer responses than clients connected');
        await sleep(Math.max(0, sent[k]! + GAP_MS - now()));
      }
      await sleep(500); // the last broadcast's reads
    });
    return { ...fanout(sent, ids, (await clients.report()).seen, clients.connected), ...cpu };
  } finally {
    await clients.close();
    await stopChild(server.child);
  }
}

async function main(): Promise<number> {
  try {
    say(`sse-fanout: ${CLIENTS} clients in ${CLIENT_PROCS} processes, ${SIGNINS} sign-ins ${GAP_MS} ms apart, verify ${VERIFY_S} s per wrk run`);
    // The yardstick runs before and after the service, so a drift of the neighbours' load weighs on both sides alike.
    const bareRuns: Fanout[] = [];
    const bareRun = async (): Promise<void> => {
      const b = await yardstick();
      bareRuns.push(b);
      say(`  bare uWS broadcast to all (run ${bareRuns.length}): ${describe(b)}, missed ${b.missed}`);
    };
    await bareRun();

    const stack = await localStack('sse-fanout', undo);
    const { dir } = stack;
    const secret = stack.env.JWT_SECRET!;
    // Every client is one credential's, from one address: the stream and address caps (defaults 20 per
    // credential, 10,000 per tenant, 1,000 per address) are raised above what the run opens.
    const cap = String(CLIENTS + 1000);
    const env: NodeJS.ProcessEnv = {
      ...stack.env, HTTP_HOST: HOST, RADIUS_ENABLED: 'false',
      STREAM_MAX_PER_PRINCIPAL: cap, STREAM_MAX_PER_TENANT: cap, HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(CLIENTS + 2000),
    };
    // Redis rewrites its AOF in a forked child each time the file doubles: a core-second or so of a
    // process the CPU figures count as "rest", falling in whichever phase it happens to. Off here,
    // so that the phases with and without clients differ in the clients alone.
    const admin = new Redis(stack.env.REDIS_URL!);
    undo.push(() => { admin.disconnect(); });
    await admin.config('SET', 'auto-aof-rewrite-percentage', '0');
    const { tenantId, quietTenantId, hotspotId, codes } = await seed(env);
    const codesFile = join(dir, 'codes.txt');
    writeFileSync(codesFile, codes.join('\n') + '\n');
    const prof = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
    const service = await spawnWithFds('service', [...serviceNodeOptions(), ...prof, projectPath('dist', 'scripts', 'serve.js')], env);
    const port = service.ready.ports.main as number;
    say(`  service fd limit ${fdLimit(service.child.pid!)}`);
    const pids = {
      server: service.child.pid!,
      ...stack.pids(),
    };
    // With clients connected, their processes' share of "rest" is shown apart: on 2 cores it is CPU the service cannot have.
    const rate = async (label: string, run: number, clients?: ClientGroup): Promise<{ rps: number; bad: number; p99Ms: number; cpu: CpuUse }> => {
      // Each phase starts with the outbox sink caught up: at this load it falls behind, and a phase
      // must not inherit the previous one's backlog (its Postgres writes) nor leave its own to the next.
      const drain = await drained(admin, keys.outbox(tenantId), 60_000);
      if (clients) await clients.report(); // counts the invalidations from here
      const c0 = clients?.ticks() ?? 0;
      // The profile's timestamps are CLOCK_MONOTONIC microseconds, as hrtime's.
      const from = process.hrtime.bigint() / 1000n;
      const [r, cpu] = await withCpu(pids, () => wrk(port, hotspotId, codesFile, run, VERIFY_S));
      if (CPU_PROF) say(`  profile window of "verify ${label}": --from ${from} --to ${process.hrtime.bigint() / 1000n} --requests ${Math.round(r.rps * VERIFY_S)}`);
      const ofClients = clients ? `, of which stream clients ${Math.round((clients.ticks() - c0) / VERIFY_S)}` : '';
      const writes = clients ? `; invalidations per client ${(await clients.report()).seen.size}` : '';
      say(`  verify ${label}: ${fmt(r.rps)}/s, p99 ${fmt(r.p99Ms)} ms, bad ${r.bad}; cpu % server ${cpu.server}, redis ${cpu.redis}, postgres ${cpu.postgres}, ` +
        `rest ${cpu.rest}${ofClients}, idle ${cpu.idle}${writes}; outbox ${drain.left === 0 ? `drained in ${fmt(drain.waitedMs / 1000)} s before` : `${drain.left} still queued`}`);
      return { ...r, cpu };
    };

    await wrk(port, hotspotId, codesFile, 1, VERIFY_S);
    // Verify's rate alternates: without clients, with them, without, ... (ROUNDS with-phases). Each with-phase is set
    // against the mean of the without-phases on both sides of it, so a drift of the machine or of the service (every
    // verify starts one more live session) weighs on both sides alike.
    let run = 2;
    const without = [await rate('with no stream clients', run++)];
    const withClients: Awaited<ReturnType<typeof rate>>[] = [];

    // BENCH_QUIET_STREAM=1: the clients listen to another tenant, where nothing happens: what the
    // connections cost by being there, without a single invalidation.
    const streamTenant = QUIET_STREAM ? quietTenantId : tenantId;
    const token = await signStreamToken(new TextEncoder().encode(secret), streamTenant, ['viewer'], 900, 'bench');
    let signin: Fanout | null = null;
    let badSignins = 0;
    let lostClients = 0;
    let connected = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const clients = await ClientGroup.open(port, `${STREAM_PATH}?token=${token}`);
      try {
        if (clients.failed) throw new Error(`${clients.failed} stream clients failed: ${clients.firstError}`);
        connected = clients.connected;
        if (round === 1 && QUIET_STREAM) {
          signin = { latencies: [], missed: 0, serverCpuMs: 0, clientCpuMs: 0 };
        } else if (round === 1) {
          // The sink catches up first: this phase times the fan-out, not sign-ins queued behind a backlog.
          const drain = await drained(admin, keys.outbox(tenantId), 60_000);
          say(`  outbox before the sign-ins: ${drain.left === 0 ? `drained in ${fmt(drain.waitedMs / 1000)} s` : `${drain.left} still queued`}`);
          const measured = await signinLatency(port, hotspotId, codes, pids, clients);
          signin = measured.signin;
          badSignins = measured.bad;
        }
        withClients.push(await rate(`with ${clients.connected} stream clients (round ${round})`, run++, clients));
        const open = (await clients.report()).open;
        say(`  stream clients still open after the verify load: ${open}`);
        lostClients += clients.connected - open;
      } finally {
        await clients.close();
      }
      await sleep(1000);
      without.push(await rate(`with no stream clients (after round ${round})`, run++));
    }
    await stopChild(service.child);
    await bareRun();
    const bare: Fanout = {
      latencies: bareRuns.flatMap((b) => b.latencies).sort((a, b) => a - b), missed: bareRuns.reduce((n, b) => n + b.missed, 0),
      serverCpuMs: bareRuns.reduce((n, b) => n + b.serverCpuMs, 0) / bareRuns.length, clientCpuMs: bareRuns.reduce((n, b) => n + b.clientCpuMs, 0) / bareRuns.length,
    };
    const ratios = withClients.map((w, k) => w.rps / ((without[k]!.rps + without[k + 1]!.rps) / 2));
    const rateRatio = ratios.reduce((a, b) => a + b, 0) / ratios.length;
    const p99 = percentile(signin!.latencies, 99);
    const bareP99 = percentile(bare.latencies, 99);
    const errors = signin!.missed + bare.missed + badSignins + [...without, ...withClients].reduce((n, r) => n + r.bad, 0) + lostClients;
    const pass = p99 <= TARGET_P99_MS && rateRatio >= TARGET_RATE_RATIO;
    const verdict = errors ? 'ERRORS' : pass ? 'PASS' : 'FAIL';
    process.stdout.write(`sse-fanout: ${connected} clients | sign-in to all: ${describe(signin!)} (target p99 <= ${TARGET_P99_MS} ms) | ` +
      `bare uWS broadcast to all: ${describe(bare)} | p99 ratio ${(p99 / bareP99).toFixed(2)}, server cpu ratio ${(signin!.serverCpuMs / bare.serverCpuMs).toFixed(2)} | ` +
      `verify/s without clients ${without.map((r) => fmt(r.rps)).join(', ')}; with ${withClients.map((r) => fmt(r.rps)).join(', ')}: ` +
      `${ratios.map((r) => r.toFixed(2)).join(', ')}, mean ${rateRatio.toFixed(2)} (target >= ${TARGET_RATE_RATIO}) | errors ${errors} ${verdict}\n`);
    return errors ? 1 : pass ? 0 : 2;
  } finally {
    await undo.run();
  }
}

main().then((code) => { process.exitCode = code; }, (err: Error) => {
  say(`sse-fanout failed: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});
