import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createLogger, DEFAULT_CODE_FORMAT, Engine, loadConfig, projectPath } from '../engine/index.js';
import { freeUdpPort, startLocalServices } from '../scripts/local-services.js';
import { say, spawnReady, stopChild, Teardown, serviceNodeOptions } from './bench-kit.js';
import { ensureFreeradiusInstalled, ensureFreeradiusPostgresql, prepareRadiusDatabase, spawnFreeradius, stopDebianFreeradius, writeFreeradiusConfig, type PgTarget } from './freeradius.js';
import { RadiusTools, rssMb, withCpu, writeRadclientFile, type Cpu, type ToolFigures } from './radius-tools.js';

/**
 * Scenario: RADIUS for authorised devices, the engine against FreeRADIUS 3.2
 * in the same run, on loopback.
 *
 *  - Access-Request (PAP, signed with Message-Authenticator) for MACs that hold
 *    a live session: the engine answers from its hotspot actor (plus one Redis
 *    GET for the daily quota left); FreeRADIUS from its `files` module listing
 *    the same MACs. Two load tools: radclient (C, Debian's freeradius-utils)
 *    with -p parallel, and our bench/radius-load.ts with the same window.
 *  - Accounting Interim-Update from radius-load, whose octet counters grow per
 *    MAC, so the engine's account-session script adds usage and checks the
 *    daily quota on every packet; FreeRADIUS answers accounting with no
 *    module (nothing stored), which is the floor, not a like-for-like.
 *  - The stack deployments run, as a third server (`freeradius-sql`, unless
 *    BENCH_SQL_STACK=0): FreeRADIUS with rlm_sql on PostgreSQL, Debian's stock
 *    schema and queries, for authorize (radcheck, radreply) and accounting
 *    (radacct). It answers an interim after its SQL statement commits, the
 *    engine after Redis (AOF everysec); this bench's throw-away PostgreSQL runs
 *    with fsync off, which flatters the SQL stack, not the engine.
 *  - The floor (`floor`, unless BENCH_FLOOR=0): bench/radius-floor.ts, the
 *    least Node.js code that answers these packets safely (framing, duplicate
 *    check, Message-Authenticator or Request Authenticator, the MAC looked up,
 *    a signed Access-Accept or Accounting-Response). Its rate over
 *    FreeRADIUS's is what Node's UDP path reaches on the machine; the engine's
 *    over the floor's is what the engine's own work costs on top.
 *
 * Setup, all thrown away: Redis and PostgreSQL in a temp folder; a tenant, a
 * hotspot, a NAS client for 127.0.0.1 (Message-Authenticator required), one
 * unlimited voucher with a daily quota; the service as a child process
 * (`node dist/scripts/serve.js`, RADIUS on free ports); BENCH_MACS devices
 * signed in through the portal, then one Access-Request each (an actor takes
 * a session into memory when the NAS first asks about it); FreeRADIUS from
 * bench/freeradius.ts.
 *
 * Measured in rounds, each running every phase on both servers; the order of
 * the servers flips each round, so drift on a shared machine falls on both.
 * Figures are totals over the rounds. CPU use per phase is sampled from /proc
 * (server, Redis, the rest of the machine: mostly the load tool) and given
 * as CPU µs per request, which moves far less than req/s when the machine's
 * other jobs take CPU; Redis's commandstats over the phases go to stderr.
 * Details go to stderr; stdout gets one summary line. Exit 0 when both targets
 * are met, 2 when one is missed, 1 when a phase is broken (most requests
 * unanswered, a reject or a bad reply for an authorised MAC) or the bench fails.
 *
 * Targets (the issue): Access-Request at or above FreeRADIUS's rate (judged on
 * radclient, the neutral tool the target was stated with); Interim-Update at
 * >= 20,000/s on the engine (judged on radius-load, the tool with growing counters);
 * against the SQL stack, Access-Request >= 5x (radclient) and Interim-Update >= 3x.
 *
 * Knobs (environment): BENCH_DURATION (s per phase, 10), BENCH_WARMUP (s, 3),
 * BENCH_ROUNDS (2), BENCH_MACS (5000), BENCH_CONCURRENCY (128: radius-load's
 * window and radclient's -p), BENCH_RADCLIENT_REQUESTS (300000 per phase),
 * BENCH_ACTOR_THREADS (passed as ACTOR_THREADS; default the service's own),
 * BENCH_RADIUS_THREADS (passed as RADIUS_THREADS: 0 the main thread alone, N threads on the
 * UDP ports; default the service's own; the A/B of docs/radius.md "Threads"),
 * BENCH_CPU_PROF (a folder: the service and the floor run with --cpu-prof and write there),
 * BENCH_PHASES (comma-separated, of auth-rc, auth-gen, acct-gen; default all: an A/B of
 * accounting alone runs `acct-gen`, and a phase not run is left out of the summary and the verdict),
 * BENCH_SOURCES (unset: radius-load sends from one source port, as before; N: from N source ports
 * (`--sources N`, each an AP behind the NAS with its own MACs): the load a venue's many APs send,
 * which SO_REUSEPORT can spread over RADIUS_THREADS; docs/radius.md "Threads"),
 * BENCH_FLOOR (1; 0 leaves the floor out),
 * BENCH_RADCLIENT_PROCS (1: radclient processes side by side, each its own source port with its own
 * slice of the packets and its share of the window; at most 16. On the busy machine 16 of them did
 * not finish 30,000 requests inside the phase's bound, so the default stays one).
 */

const num = (name: string, dflt: number): number => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};
const DURATION_S = num('BENCH_DURATION', 10);
const WARMUP_S = num('BENCH_WARMUP', 3);
const ROUNDS = Math.floor(num('BENCH_ROUNDS', 2));
const MACS = Math.min(50_000, Math.floor(num('BENCH_MACS', 5000)));
const CONCURRENCY = Math.floor(num('BENCH_CONCURRENCY', 128));
const RADCLIENT_REQUESTS = Math.floor(num('BENCH_RADCLIENT_REQUESTS', 300_000));
/** radclient walks its whole packet list for every reply: beyond ~1,000 packets the walk, not the server, sets its pace. */
const RADCLIENT_FILE_PACKETS = Math.min(MACS, 1000);
const ACTOR_THREADS = process.env.BENCH_ACTOR_THREADS;
const RADIUS_THREADS = process.env.BENCH_RADIUS_THREADS;
const CPU_PROF = process.env.BENCH_CPU_PROF;
const SOURCES = process.env.BENCH_SOURCES === undefined ? undefined : Math.floor(num('BENCH_SOURCES', 1));
/** radclient processes side by side (one source port each); more than 16 C processes would only measure the fork. */
const RADCLIENT_PROCS = Math.min(Math.floor(num('BENCH_RADCLIENT_PROCS', 1)), 16);
const SQL_STACK = process.env.BENCH_SQL_STACK !== '0';
const FLOOR = process.env.BENCH_FLOOR !== '0';
/** The issue's targets against FreeRADIUS + rlm_sql: Access-Request (radclient) and Interim-Update rate ratios. */
const STACK_TARGETS = { auth: 5, acct: 3 };
const ALL_PHASES = ['auth-rc', 'auth-gen', 'acct-gen'] as const;
const PHASES = (process.env.BENCH_PHASES ?? ALL_PHASES.join(',')).split(',').map((p) => p.trim()).filter(Boolean);
for (const p of PHASES) if (!(ALL_PHASES as readonly string[]).includes(p)) throw new Error(`BENCH_PHASES: unknown phase ${p} (${ALL_PHASES.join(', ')})`);
const HOST = '127.0.0.1';
const SECRET = 'bench-' + randomBytes(9).toString('base64url');
const DAILY_QUOTA_MB = 100_000; // never reached: every packet checks it, none ends a session
const TARGET_ACCT_RPS = 20_000;
/** A phase with fewer answers than this share of what was sent is broken, not slow. */
const MIN_ANSWERED = 0.9;
/** A radclient run slower than 2,000 requests/s is broken, not slow: it is stopped there. */
const RADCLIENT_LIMIT_S = 30 + RADCLIENT_REQUESTS / 2000;
/** The whole run is bounded: setup (sign-in included), warm-ups, every phase at its limit, teardown. */
const DEADLINE_MS = (300 + ROUNDS * (2 + (SQL_STACK ? 1 : 0) + (FLOOR ? 1 : 0)) * (2 * (DURATION_S + 30) + RADCLIENT_LIMIT_S)) * 1000;

type Server = 'engine' | 'freeradius' | 'freeradius-sql' | 'floor';
type Phase = 'auth-rc' | 'auth-gen' | 'acct-gen';
interface Figures extends ToolFigures { phase: Phase; server: Server; cpu: Cpu }

const undo = new Teardown();
const tools = new RadiusTools({ host: HOST, secret: SECRET, concurrency: CONCURRENCY, sources: SOURCES, radclientLimitS: RADCLIENT_LIMIT_S });
undo.push(() => tools.stop());
/** MAC i as the NAS writes it in User-Name and Calling-Station-Id; the engine canonicalises, FreeRADIUS matches it verbatim. */
const macOf = (i: number): string => `02-B0-00-${[i >> 16, i >> 8, i].map((b) => (b & 255).toString(16).padStart(2, '0').toUpperCase()).join('-')}`;

/** Tenant, hotspot, NAS client and one unlimited voucher with a daily quota, through the engine (before the service starts). */
async function seed(env: NodeJS.ProcessEnv): Promise<{ hotspotId: string; code: string }> {
  const engine = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false, actors: false });
  try {
    await engine.start();
    const tenant = await engine.tenants.create('RADIUS Bench Venue');
    const hs = await engine.hotspots.create(tenant.id, { name: 'Hall', timezone: 'Europe/Istanbul' });
    await engine.hotspots.addNasClient(tenant.id, hs.id, { ip: HOST, secret: SECRET, name: 'bench', require_message_authenticator: true });
    const [v] = await engine.vouchers.createBatch(tenant.id, {
      count: 1, format: DEFAULT_CODE_FORMAT, max_uses: null, expires_at: null, bandwidth_profile: null, daily_quota_mb: DAILY_QUOTA_MB, session_quota_mb: null,
      duration_minutes: 240, bandwidth_down_mbps: 10, bandwidth_up_mbps: 5, ssids: [], notes: null,
    }, 'bench');
    return { hotspotId: hs.id, code: v!.code };
  } finally {
    await engine.close();
  }
}

/** Every MAC signs in through the portal, 32 at a time: each is a new use of the voucher and a live session. */
async function signIn(base: string, hotspotId: string, code: string, macs: string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < macs.length) {
      const mac = macs[next++]!;
      const r = await fetch(`${base}/api/v1/hotspot-portal/voucher/verify`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ hotspot_id: hotspotId, code, mac, ip: '10.0.0.1' }),
      });
      const body = await r.text();
      if (r.status !== 200 || !body.includes('"authorized"')) throw new Error(`sign-in of ${mac} answered ${r.status} ${body}`);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) if (line.startsWith(name + ' ') || line.startsWith(name + '{')) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  return sum;
}

async function main(): Promise<number> {
  ensureFreeradiusInstalled(say);
  stopDebianFreeradius(say);
  const dir = mkdtempSync(join(tmpdir(), 'bench-radius-vs-freeradius-'));
  undo.push(() => rmSync(dir, { recursive: true, force: true }));
  try {
    const local = await startLocalServices({ dir, ephemeral: true });
    undo.push(() => local.stop());
    const redisPid = Number(readFileSync(join(dir, 'redis', 'redis.pid'), 'utf8').trim());
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH, REDIS_URL: local.redisUrl, DATABASE_URL: local.databaseUrl, JWT_SECRET: randomBytes(48).toString('base64url'),
      HTTP_HOST: HOST, HTTP_PORT: '0', LOG_LEVEL: 'warn', NODE_ID: `bench-radius-${process.pid}`,
      RADIUS_HOST: HOST, RADIUS_AUTH_PORT: '0', RADIUS_ACCT_PORT: '0', ...(ACTOR_THREADS ? { ACTOR_THREADS } : {}),
      ...(RADIUS_THREADS ? { RADIUS_THREADS } : {}),
    };
    const { hotspotId, code } = await seed(env);

    const prof = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
    const service = spawn(process.execPath, [...serviceNodeOptions(), ...prof, projectPath('dist', 'scripts', 'serve.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    undo.push(() => stopChild(service));
    const ready = await new Promise<{ ports: { main: number }; radius: { auth: number; acct: number } }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('service not ready within 60 s')), 60_000);
      service.once('exit', (c) => { clearTimeout(timer); reject(new Error(`service exited with ${c} before it was ready`)); });
      createInterface({ input: service.stdout! }).on('line', (line) => {
        try { const m = JSON.parse(line); if (m.ready) { clearTimeout(timer); resolve(m); } } catch { say(`  [service] ${line}`); }
      });
    });
    const base = `http://${HOST}:${ready.ports.main}`;
    const rssAtReady = rssMb(service.pid!);

    const macs = Array.from({ length: MACS }, (_, i) => macOf(i));
    const macFile = join(dir, 'macs.txt');
    writeFileSync(macFile, macs.join('\n') + '\n');
    // One packet file per radclient process, each its own MACs (an AP's guests).
    const rcFiles = Array.from({ length: RADCLIENT_PROCS }, (_, k) => {
      const file = join(dir, `access-requests-${k}.txt`);
      writeRadclientFile(file, macs.slice(0, RADCLIENT_FILE_PACKETS).filter((_m, i) => i % RADCLIENT_PROCS === k));
      return file;
    });
    const rcCount = Math.max(1, Math.round(RADCLIENT_REQUESTS / RADCLIENT_FILE_PACKETS));

    let at = performance.now();
    await signIn(base, hotspotId, code, macs);
    say(`signed in ${MACS} MACs through the portal in ${((performance.now() - at) / 1000).toFixed(1)} s`);
    // A hotspot actor takes a session into memory from Redis when the NAS first asks about the
    // device: one Access-Request per MAC first, so the measured requests all find theirs there.
    // On a loaded machine some of them time out: the pass is run again (a MAC already taken in is simply accepted again).
    for (let pass = 1; ; pass++) {
      // From one source port: radius-load then walks the MACs in order, so MACS requests reach every one
      // (with --sources each port walks its own MACs at its own pace, and a count covers not all of them).
      const touch = await tools.radiusLoad(ready.radius, macFile, 60, false, MACS, undefined);
      if (touch.accepts === MACS) break;
      const why = `first Access-Request per MAC: ${touch.accepts} of ${MACS} accepted (${touch.rejects} rejected, ${touch.lost} lost)`;
      if (touch.rejects > 0 || pass === 3) throw new Error(why);
      say(`${why}; once more`);
    }
    // The actor threads report their sessions every 2 s.
    for (at = Date.now(); (await metric(base, 'guestwifi_live_sessions_in_actors')) < MACS && Date.now() - at < 30_000;) await new Promise((r) => setTimeout(r, 250));
    const live = await metric(base, 'guestwifi_live_sessions_in_actors');
    // On a loaded machine a few per cent were seen missing after every MAC's Access-Request was accepted
    // (not understood yet); the measured phases still fail on any reject, so a shortfall is said, not fatal.
    if (live < 0.9 * MACS) throw new Error(`only ${live} of ${MACS} sessions live in the actors`);
    if (live < MACS) say(`warning: ${live} of ${MACS} sessions live in the actors before the load`);
    const rssSignedIn = rssMb(service.pid!);

    const frOptions = { host: HOST, secret: SECRET, macs, sessionTimeoutSec: 14_400, bandwidthDownBps: 10_000_000 };
    const one = join(dir, 'one.txt');
    writeRadclientFile(one, macs.slice(0, 1));
    /** A FreeRADIUS of its own folder and ports, answering an Access-Accept for the first MAC before it is measured. */
    const freeradius = async (name: string, sql?: PgTarget): Promise<{ pid: number; ports: { auth: number; acct: number } }> => {
      const frDir = join(dir, name);
      mkdirSync(frDir);
      const ports = { auth: await freeUdpPort(), acct: await freeUdpPort() };
      writeFreeradiusConfig({ dir: frDir, authPort: ports.auth, acctPort: ports.acct, ...frOptions, sql });
      const frLog: string[] = [];
      const fr = spawnFreeradius(frDir, (l) => { if (frLog.push(l) > 50) frLog.shift(); });
      undo.push(() => stopChild(fr));
      for (const at = Date.now(); ;) {
        if (fr.exitCode !== null) throw new Error(`${name} exited with ${fr.exitCode}:\n${frLog.join('\n')}`);
        const r = await tools.accepts(ports.auth, one);
        if (r.yes) break;
        if (Date.now() - at > 20_000) throw new Error(`${name} did not accept within 20 s:\n${frLog.join('\n')}\n${r.out}`);
        await new Promise((res) => setTimeout(res, 300));
      }
      return { pid: fr.pid!, ports };
    };
    const servers: Partial<Record<Server, { pid: number; ports: { auth: number; acct: number } }>> = {
      engine: { pid: service.pid!, ports: ready.radius }, freeradius: await freeradius('freeradius'),
    };
    if (SQL_STACK) {
      ensureFreeradiusPostgresql(say);
      const db: PgTarget = { host: HOST, port: local.pgPort, user: 'postgres', database: 'radius_bench' };
      await prepareRadiusDatabase(local.databaseUrl, db, frOptions);
      servers['freeradius-sql'] = await freeradius('freeradius-sql', db);
    }
    if (FLOOR) {
      const floor = await spawnReady(undo, 'floor', [...prof, projectPath('dist', 'bench', 'radius-floor.js')], {
        PATH: process.env.PATH, FLOOR_HOST: HOST, FLOOR_SECRET: SECRET, FLOOR_MAC_FILE: macFile,
        FLOOR_SESSION_TIMEOUT: String(frOptions.sessionTimeoutSec), FLOOR_BANDWIDTH_DOWN: String(frOptions.bandwidthDownBps),
      });
      servers.floor = { pid: floor.child.pid!, ports: floor.ready.radius };
    }
    const serverNames = Object.keys(servers) as Server[];
    const nproc = spawnSync('nproc').stdout.toString().trim();
    // The tree under test, for the record: figures belong to a commit (and say so when the tree is not clean).
    const git = (args: string[]): string => spawnSync('git', ['-C', projectPath(), ...args]).stdout?.toString().trim() ?? '';
    const dirty = git(['status', '--porcelain', '--', 'engine', 'radius', 'scripts']).split('\n').filter(Boolean).length;
    say(`engine at ${git(['rev-parse', '--short', 'HEAD']) || 'unknown commit'}${dirty ? ` + ${dirty} uncommitted paths under engine/ radius/ scripts/` : ''}`);
    say(`radius-vs-freeradius: ${MACS} live MACs, window ${CONCURRENCY}, ${ROUNDS} rounds of ${DURATION_S} s per radius-load phase and ` +
      `${rcCount * RADCLIENT_FILE_PACKETS} radclient requests (${RADCLIENT_FILE_PACKETS} packets x ${rcCount}); ` +
      `source ports per tool: radius-load ${SOURCES ?? 'one'}, radclient ${RADCLIENT_PROCS}; nproc ${nproc}, node ${process.version}, ` +
      `load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    for (const s of serverNames) {
      const w = await tools.radiusLoad(servers[s]!.ports, macFile, WARMUP_S, false);
      await tools.radiusLoad(servers[s]!.ports, macFile, Math.min(2, WARMUP_S), true);
      say(`  warm-up ${s}: ${Math.round(w.answered / w.seconds)} Access-Request/s`);
    }

    const redisCli = (...args: string[]): string => spawnSync('redis-cli', ['-p', String(local.redisPort), ...args]).stdout?.toString() ?? '';
    redisCli('config', 'resetstat');
    const engineDrops0 = await metric(base, 'guestwifi_radius_dropped_total');
    const dup0 = await metric(base, 'guestwifi_radius_replies_total{kind="duplicate"}');
    const results: Figures[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const order: Server[] = round % 2 === 0 ? serverNames : [...serverNames].reverse();
      for (const phase of ALL_PHASES) {
        if (!PHASES.includes(phase)) continue;
        for (const server of order) {
          const { pid, ports } = servers[server]!;
          const from = process.hrtime.bigint() / 1000n;
          // The SQL stack answers 5-8 times slower: a fifth of radclient's requests keeps its phase inside the tool's time limit.
          const [f, cpu] = await withCpu(pid, redisPid, () => (phase === 'auth-rc'
            ? tools.radclient(ports.auth, rcFiles, server === 'freeradius-sql' ? Math.max(1, Math.round(rcCount / 5)) : rcCount)
            : tools.radiusLoad(ports, macFile, DURATION_S, phase === 'acct-gen')));
          results.push({ phase, server, ...f, cpu });
          const rps = f.answered / f.seconds;
          // The profile's timestamps are CLOCK_MONOTONIC microseconds, as hrtime: these cut a phase out of it.
          if (CPU_PROF && (server === 'engine' || server === 'floor')) {
            say(`  ${server} profile window (pid ${pid}): node dist/bench/cpu-profile-summary.js <file> --from ${from} --to ${process.hrtime.bigint() / 1000n} --requests ${f.answered}`);
          }
          say(`  round ${round + 1} ${phase.padEnd(8)} ${server.padEnd(14)} ${Math.round(rps).toString().padStart(6)}/s  ` +
            `p50 ${f.p50.toFixed(2)} ms p99 ${f.p99.toFixed(2)} ms  sent ${f.sent} answered ${f.answered} reject ${f.rejects} lost ${f.lost} bad ${f.bad}  ` +
            `cpu % of a core: server ${cpu.server} (main thread ${cpu.main}) redis ${cpu.redis} rest ${cpu.rest}, idle ${cpu.idle}%; ` +
            `cpu us/request: server ${Math.round(cpu.serverUs / f.answered)} redis ${Math.round(cpu.redisUs / f.answered)}`);
        }
      }
    }
    const engineDrops = (await metric(base, 'guestwifi_radius_dropped_total')) - engineDrops0;
    const duplicates = (await metric(base, 'guestwifi_radius_replies_total{kind="duplicate"}')) - dup0;
    // What Redis spent per command during the measured phases (commands a script runs count under their own names).
    const stats = [...redisCli('info', 'commandstats').matchAll(/cmdstat_(\w+):calls=(\d+),usec=(\d+),usec_per_call=([\d.]+)/g)]
      .map((m) => ({ cmd: m[1]!, calls: Number(m[2]), usec: Number(m[3]), per: Number(m[4]) })).sort((a, b) => b.usec - a.usec).slice(0, 8);
    say(`  redis commandstats (measured phases): ${stats.map((c) => `${c.cmd} ${c.calls} calls ${c.per.toFixed(2)} us/call`).join(', ')}`);
    const engineRss = rssMb(service.pid!), frRss = rssMb(servers.freeradius!.pid);
    say(`  rss: engine ${rssAtReady.toFixed(0)} MB ready, ${rssSignedIn.toFixed(0)} MB with ${MACS} sessions in its actors before the load, ` +
      `${engineRss.toFixed(0)} MB at the end; freeradius ${frRss.toFixed(0)} MB at the end`);
    const liveEnd = await metric(base, 'guestwifi_live_sessions_in_actors');

    const total = (phase: Phase, server: Server) => {
      const rs = results.filter((r) => r.phase === phase && r.server === server);
      const sum = (k: 'sent' | 'answered' | 'accepts' | 'rejects' | 'lost' | 'bad' | 'seconds') => rs.reduce((a, r) => a + r[k], 0);
      // Latency of the worst round: rounds are not pooled, and the slower one is the honest figure.
      const mid = (k: 'p50' | 'p99') => Math.max(...rs.map((r) => r[k]));
      const perReq = (k: 'serverUs' | 'redisUs') => rs.reduce((a, r) => a + r.cpu[k], 0) / sum('answered');
      return { serverUs: perReq('serverUs'), redisUs: perReq('redisUs'), rps: sum('answered') / sum('seconds'), sent: sum('sent'), answered: sum('answered'), accepts: sum('accepts'), rejects: sum('rejects'), lost: sum('lost'), bad: sum('bad'), p50: mid('p50'), p99: mid('p99') };
    };
    const part = (phase: Phase, label: string) => {
      const e = total(phase, 'engine'), f = total(phase, 'freeradius');
      const lat = (x: typeof e) => (Number.isNaN(x.p50) ? '' : ` p50/p99 ${x.p50.toFixed(1)}/${x.p99.toFixed(1)} ms`);
      return {
        e, f, ratio: e.rps / f.rps,
        text: `${label}: engine ${Math.round(e.rps)}/s${lat(e)} lost ${e.lost} cpu ${Math.round(e.serverUs)}+${Math.round(e.redisUs)} us/req | ` +
          `freeradius ${Math.round(f.rps)}/s${lat(f)} lost ${f.lost} cpu ${Math.round(f.serverUs)} us/req | ratio ${(e.rps / f.rps).toFixed(2)}`,
      };
    };
    const rc = part('auth-rc', 'auth radclient'), gen = part('auth-gen', 'auth radius-load'), acct = part('acct-gen', 'acct interim radius-load');
    const ran = (phase: Phase): boolean => PHASES.includes(phase);
    // Against the SQL stack: the engine's rate over freeradius-sql's, per phase run.
    const stack = (phase: Phase): number => total(phase, 'engine').rps / total(phase, 'freeradius-sql').rps;
    // Against the floor: Node's own UDP path on this machine, over FreeRADIUS; the engine over it.
    const floorText = FLOOR
      ? (['auth-rc', 'auth-gen', 'acct-gen'] as const).filter(ran).map((p) => {
        const fl = total(p, 'floor');
        return `${p} ${Math.round(fl.rps)}/s cpu ${Math.round(fl.serverUs)} us/req (floor over freeradius ${(fl.rps / total(p, 'freeradius').rps).toFixed(2)}, ` +
          `engine over floor ${(total(p, 'engine').rps / fl.rps).toFixed(2)})`;
      }).join(', ')
      : '';
    const stackText = SQL_STACK
      ? (['auth-rc', 'auth-gen', 'acct-gen'] as const).filter(ran).map((p) => `${p} ${Math.round(total(p, 'freeradius-sql').rps)}/s (engine ${stack(p).toFixed(1)}x)`).join(', ')
      : '';
    const stackAuth = !SQL_STACK || !ran('auth-rc') || stack('auth-rc') >= STACK_TARGETS.auth;
    const stackAcct = !SQL_STACK || !ran('acct-gen') || stack('acct-gen') >= STACK_TARGETS.acct;
    const broken = results.filter((r) => r.answered < MIN_ANSWERED * r.sent || r.rejects > 0 || r.bad > 0 || r.accepts !== r.answered - r.rejects)
      .map((r) => `${r.phase} ${r.server}`);
    const authPass = !ran('auth-rc') || rc.ratio >= 1, acctPass = !ran('acct-gen') || acct.e.rps >= TARGET_ACCT_RPS;
    const met = authPass && acctPass && stackAuth && stackAcct;
    const verdict = broken.length ? `BROKEN: ${[...new Set(broken)].join(', ')}` : met ? 'PASS' : 'FAIL';
    const texts = ([['auth-rc', rc], ['auth-gen', gen], ['acct-gen', acct]] as const).filter(([p]) => ran(p)).map(([, x]) => x.text);
    process.stdout.write(`radius-vs-freeradius: ${texts.join(' ; ')} ; engine drops ${engineDrops} duplicates ${duplicates} ; source ports radius-load ${SOURCES ?? 1} radclient ${RADCLIENT_PROCS} ; ` +
      `rss engine ${engineRss.toFixed(0)} MB at the end with ${liveEnd} live sessions (${rssSignedIn.toFixed(0)} MB before the load), freeradius ${frRss.toFixed(0)} MB ; ` +
      (SQL_STACK ? `freeradius + rlm_sql (PostgreSQL, Debian's schema and queries): ${stackText} ; ` : '') +
      (FLOOR ? `floor (bench/radius-floor.ts: Node's least code for these packets): ${floorText} ; ` : '') +
      `targets: auth radclient ratio >= 1 ${authPass ? 'pass' : 'miss'}, acct >= ${TARGET_ACCT_RPS}/s ${acctPass ? 'pass' : 'miss'}` +
      (SQL_STACK ? `, against the SQL stack auth >= ${STACK_TARGETS.auth}x ${stackAuth ? 'pass' : 'miss'}, acct >= ${STACK_TARGETS.acct}x ${stackAcct ? 'pass' : 'miss'}` : '') + ` ; ${verdict}\n`);
    return broken.length ? 1 : met ? 0 : 2;
  } finally {
    await undo.run();
  }
}

undo.guard('radius-vs-freeradius', DEADLINE_MS);

main().then((code) => { process.exitCode = code; }, (err: Error) => {
  say(`radius-vs-freeradius failed: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});
