import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createLogger, DEFAULT_CODE_FORMAT, Engine, loadConfig, projectPath, signOperatorToken } from '../engine/index.js';
import { cpuTicks, localStack, say, spawnReady, Teardown, treeTicks, type ReadyChild, serviceNodeOptions } from './bench-kit.js';
import { fakeCarrier } from './fake-carrier.js';
import { JsonClient } from './json-client.js';
import { JsonLines } from './json-lines.js';
import { OpenLoopRadius } from './radius-client.js';
import { checkStorm, endsStored, endsWaiting, startsStored, type StormCheck } from './storm-check.js';
import { RawHttpClient } from './raw-http-client.js';
import { StormDriver, type CodeFor, type GuestHttp, type StormLane, type StormSite } from './storm-driver.js';
import { parseStormArgs, STORM_HELP, type StormOptions } from './storm-options.js';
import { StormPlan } from './storm-plan.js';
import { startRedisCluster } from '../scripts/redis-cluster.js';

/**
 * Issue 22 item 4: the stadium storm. The bench starts Redis and PostgreSQL
 * (thrown away) or takes the ones named, seeds a venue (tenant, hotspot, NAS
 * client for 127.0.0.1, unlimited vouchers, SMS sign-in through a fake carrier),
 * starts the service, and plays the schedule (storm-plan.ts) with the driver
 * (storm-driver.ts). --kill-at kills the service with SIGKILL midway and starts it
 * again on the same ports (same NODE_ID: it takes its leases and outbox entries
 * back). Afterwards: the sink's lag (from the last sign-in's answer until every
 * start the bench saw is in Postgres), exactly once both ways and the chain
 * (storm-check.ts), CPU per sign-in of the service, Redis, Postgres and this bench.
 * Summary line on stdout; details on stderr; JSON lines per second with --json-lines.
 * BENCH_RADIUS_THREADS is passed to the service as RADIUS_THREADS (unset: its default).
 * Targets (issue 22): sign-in p99 <= 100 ms, Access-Request p99 <= 20 ms, 0 errors, sink lag <= 10 s.
 */

const TARGET = { signinP99: 100, accessP99: 20, sinkLagS: 10 };
const HOST = '127.0.0.1';
const SECRET = 'storm-nas-secret';
const CODES = 200;
const undo = new Teardown();

interface Venue { sites: StormSite[]; tenant: string | undefined; codeFor: CodeFor | undefined }

/** The NAS addresses of `n` processes' hotspots: `first`, then the next loopback addresses. */
function nasAddresses(first: string, n: number): string[] {
  const p = first.split('.').map(Number);
  return Array.from({ length: n }, (_, k) => `${p[0]}.${p[1]}.${p[2]}.${((p[3]! - 1 + k) % 254) + 1}`);
}

/** The service as a child; restartable on the same ports, its CPU summed over its lives. */
class ServiceLives {
  current!: ReadyChild;
  private ticksOfDead = 0;
  constructor(private readonly env: NodeJS.ProcessEnv) {}

  async start(extra: NodeJS.ProcessEnv = {}): Promise<ReadyChild> {
    // BENCH_CPU_PROF (a folder): the service and its threads write V8 CPU profiles there when stopped (bench/cpu-profile-summary.ts reads them).
    const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    this.current = await spawnReady(undo, 'service', [...serviceNodeOptions(), ...prof, projectPath('dist', 'scripts', 'serve.js')], { ...this.env, ...extra });
    return this.current;
  }

  ticks(): number {
    const pid = this.current.child.pid!;
    try { return this.ticksOfDead + cpuTicks(pid); } catch { return this.ticksOfDead; }
  }

  /**
   * SIGKILL (no shutdown code runs), then the same service again: RADIUS on the same
   * ports (the NASes' retransmissions reach the new process), HTTP on a new one (the
   * old port's connections linger in TIME_WAIT and uWS will not listen beside them;
   * in a deployment the load balancer hides the port). Resolves to the new HTTP port.
   */
  async killAndRestart(): Promise<number> {
    const { child, ready: r } = this.current;
    this.ticksOfDead += cpuTicks(child.pid!);
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await gone;
    const next = await this.start({ RADIUS_AUTH_PORT: String(r.radius.auth), RADIUS_ACCT_PORT: String(r.radius.acct) });
    return next.ready.ports.main as number;
  }
}

async function seed(env: NodeJS.ProcessEnv, otp: boolean, nasAddress: string[]): Promise<{ tenant: string; hotspots: string[]; codes: string[] }> {
  const engine = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false, actors: false });
  try {
    await engine.start();
    const tenant = await engine.tenants.create(`Storm Stadium ${randomBytes(3).toString('hex')}`);
    // One hotspot per process, its NAS on its own address: each process owns its hotspot's actor (the lease).
    const hotspots: string[] = [];
    for (const [k, ip] of nasAddress.entries()) {
      const hs = await engine.hotspots.create(tenant.id, { name: k === 0 ? 'Gates' : `Gates ${k + 1}`, timezone: 'Europe/Istanbul' });
      await engine.hotspots.addNasClient(tenant.id, hs.id, { ip, secret: SECRET, name: `storm-${k + 1}`, require_message_authenticator: true });
      hotspots.push(hs.id);
    }
    const rows = await engine.vouchers.createBatch(tenant.id, {
      count: CODES, format: DEFAULT_CODE_FORMAT, max_uses: null, expires_at: null, bandwidth_profile: null,
      daily_quota_mb: null, session_quota_mb: null, duration_minutes: null, bandwidth_down_mbps: null, bandwidth_up_mbps: null, ssids: [], notes: null,
    }, 'bench');
    void otp;
    return { tenant: tenant.id, hotspots, codes: rows.map((r) => r.code) };
  } finally {
    await engine.close();
  }
}

/** SMS sign-in on, through the fake carrier, with the abuse limits off (every guest comes from 127.0.0.1). */
async function enableSms(client: GuestHttp, jwtSecret: string, tenant: string, carrierUrl: string, credentialsVar: string): Promise<void> {
  const token = await signOperatorToken(new TextEncoder().encode(jwtSecret), tenant, ['admin'], 3600, 'bench');
  const put = await client.send('PUT', '/v1/settings/sign-in', {
    methods: ['voucher', 'sms_otp'],
    sms: { provider: 'netgsm', base_url: carrierUrl, credentials_ref: `env://${credentialsVar}`, sender: 'STADIUM' },
    otp: { cooldown_sec: 0, per_identity_daily: 0, per_ip_hourly: 0, per_mac_hourly: 0, per_prefix_hourly: 0 },
  }, { authorization: `Bearer ${token}` });
  if (put.status !== 200) throw new Error(`sign-in settings refused: ${put.status} ${JSON.stringify(put.json)}`);
}

const ms = (x: number | null): string => (x === null ? '-' : x.toFixed(1));

async function main(o: StormOptions): Promise<number> {
  const { shape } = o;
  const plan = new StormPlan(shape);
  undo.guard('stadium-storm', o.deadlineSec * 1000);
  const runTag = randomBytes(1)[0]!;
  say(`stadium-storm: ${shape.guests} guests over ${(plan.lastArrivalMs / 1000).toFixed(1)} s (${shape.rate.toFixed(0)}/s), ` +
    `${Math.round(shape.otpShare * 100)}% by SMS code, interim every ${shape.interimSec} s, stay ${shape.staySec || 'to the end'}, tail ${shape.tailSec} s` +
    `${o.processes > 1 ? `, ${o.processes} service processes` : ''}${o.killAtSec !== undefined ? `, kill -9 at ${o.killAtSec} s` : ''}; target ${o.external ? `${o.target} (external)` : HOST}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);

  let venue: Venue;
  let lives: ServiceLives[] = [];
  let pool: pg.Pool | undefined;
  let checkEnv: NodeJS.ProcessEnv | undefined;
  let pids: (() => { redis: number; postgres: number }) | undefined;
  let shardPids: number[] | undefined;
  const http: GuestHttp = o.httpClient === 'node'
    ? new JsonClient(o.target, o.external?.httpPort ?? 0, o.connections)
    : new RawHttpClient(o.target, o.external?.httpPort ?? 0, o.connections);
  undo.push(() => http.close());
  let stub: ReadyChild | undefined;
  if (o.external) {
    const x = o.external;
    venue = { sites: [{ hotspot: x.hotspot, codes: x.codes, authPort: x.radiusPort, acctPort: x.acctPort, secret: x.secret }], tenant: undefined, codeFor: undefined };
  } else if (o.stub) {
    // The generator alone: a stand-in answers at once (storm-stub.ts); SMS codes still go through the fake carrier.
    let codeFor: CodeFor | undefined;
    const carrierEnv: NodeJS.ProcessEnv = {};
    if (shape.otpShare > 0) {
      const auth = `Basic ${Buffer.from(`storm:${randomBytes(8).toString('hex')}`).toString('base64')}`;
      const carrier = await fakeCarrier(undo, HOST, auth);
      codeFor = carrier.codeFor;
      Object.assign(carrierEnv, { STUB_CARRIER_URL: carrier.url, STUB_CARRIER_AUTH: auth });
    }
    stub = await spawnReady(undo, 'stub', [projectPath('dist', 'bench', 'storm-stub.js')], { PATH: process.env.PATH, STUB_SECRET: SECRET, ...carrierEnv });
    http.port = stub.ready.ports.main as number;
    venue = { sites: [{ hotspot: 'hs_stub', codes: ['STUB-CODE'], authPort: stub.ready.radius.auth, acctPort: stub.ready.radius.acct, secret: SECRET }], tenant: undefined, codeFor };
  } else {
    let base: NodeJS.ProcessEnv;
    if (o.redisUrl && o.databaseUrl) {
      base = { PATH: process.env.PATH, REDIS_URL: o.redisUrl, DATABASE_URL: o.databaseUrl, JWT_SECRET: randomBytes(48).toString('base64url'),
        HTTP_HOST: HOST, HTTP_PORT: '0', LOG_LEVEL: 'warn' };
    } else {
      const stack = await localStack('stadium-storm', undo);
      base = stack.env;
      pids = stack.pids;
      if (o.cluster) {
        // A 3-master Redis Cluster of its own instead of the stack's Redis (which then idles): CPU per shard,
        // each master writing its AOF as the stack's Redis does.
        const c = await startRedisCluster({ aof: true });
        undo.push(() => c.stop());
        base = { ...base, REDIS_URL: c.url };
        shardPids = c.nodes.map((n) => n.child.pid!);
        say(`  Redis Cluster: 3 masters on ${c.nodes.map((n) => n.port).join(', ')} (started in ${(c.startMs / 1000).toFixed(1)} s)`);
      }
    }
    const jwt = base.JWT_SECRET!;
    const env: NodeJS.ProcessEnv = {
      ...base, NODE_ID: `storm-${process.pid}-${runTag}`, RADIUS_HOST: HOST, RADIUS_AUTH_PORT: '0', RADIUS_ACCT_PORT: '0',
      ALLOW_PRIVATE_TARGETS: 'true', PMS_HOLD_LINKS: 'false', REPORT_SCHEDULER: 'false',
      ...(process.env.BENCH_RADIUS_THREADS ? { RADIUS_THREADS: process.env.BENCH_RADIUS_THREADS } : {}),
    };
    const seeded = await seed(env, shape.otpShare > 0, nasAddresses(o.nasAddress, o.processes));
    let codeFor: CodeFor | undefined;
    let carrierUrl = '';
    const credentialsVar = `${seeded.tenant.toUpperCase()}_SMS`;
    if (shape.otpShare > 0) {
      const creds = `storm:${randomBytes(8).toString('hex')}`;
      const carrier = await fakeCarrier(undo, HOST, `Basic ${Buffer.from(creds).toString('base64')}`);
      env[credentialsVar] = creds;
      codeFor = carrier.codeFor;
      carrierUrl = carrier.url;
    }
    // One after the other: the first applies the migrations the next then finds done.
    const sites: StormSite[] = [];
    for (let k = 0; k < o.processes; k++) {
      const one = new ServiceLives(o.processes > 1 ? { ...env, NODE_ID: `${env.NODE_ID!}-${k + 1}` } : env);
      const s = await one.start();
      lives.push(one);
      sites.push({ hotspot: seeded.hotspots[k]!, codes: seeded.codes, authPort: s.ready.radius.auth, acctPort: s.ready.radius.acct, secret: SECRET });
    }
    http.port = lives[0]!.current.ready.ports.main as number;
    if (shape.otpShare > 0) await enableSms(http, jwt, seeded.tenant, carrierUrl, credentialsVar);
    venue = { sites, tenant: seeded.tenant, codeFor };
    // A bare pool while the storm runs (an Engine here would run its background work on the bench's CPU);
    // the engine for the chain's verification only afterwards.
    pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 2 });
    undo.push(() => pool!.end());
    checkEnv = env;
  }

  const nasAt = nasAddresses(o.nasAddress, venue.sites.length);
  const lanes: StormLane[] = venue.sites.map((site, k) => {
    const laneHttp = k === 0 ? http : o.httpClient === 'node'
      ? new JsonClient(o.target, lives[k]!.current.ready.ports.main as number, o.connections)
      : new RawHttpClient(o.target, lives[k]!.current.ready.ports.main as number, o.connections);
    if (k > 0) undo.push(() => laneHttp.close());
    const r = new OpenLoopRadius({ host: o.target, localAddress: o.external ? undefined : nasAt[k], secret: site.secret, timeoutMs: o.timeoutMs, tries: o.tries, maxLanes: 1024 });
    r.start();
    undo.push(() => r.close());
    return { http: laneHttp, radius: r, site };
  });
  const radius = {
    get outstanding(): number { return lanes.reduce((n, l) => n + l.radius.outstanding, 0); },
    get retransmitted(): number { return lanes.reduce((n, l) => n + l.radius.retransmitted, 0); },
    get lateDuplicates(): number { return lanes.reduce((n, l) => n + l.radius.lateDuplicates, 0); },
    get bad(): number { return lanes.reduce((n, l) => n + l.radius.bad, 0); },
    close: (): void => { for (const l of lanes) l.radius.close(); },
  };
  // --kill-at kills the last process (the only one, unless --processes): its lane follows it to its new HTTP port.
  const victim = lives.at(-1);
  const victimLane = lanes.at(-1)!;
  const serviceTicks = (): number => lives.reduce((n, l) => n + l.ticks(), 0);
  const lines = new JsonLines(o.jsonLines);
  const t0 = performance.now() + 200;
  const driver = new StormDriver(plan, lanes, venue.codeFor, t0, runTag, o.signinTries);

  // CPU from here to the end of the sink's catch-up.
  const cpu0 = { service: lives.length ? serviceTicks() : (stub ? cpuTicks(stub.child.pid!) : 0), redis: pids ? cpuTicks(pids().redis) : 0, shards: shardPids?.map(cpuTicks) ?? [], pg: pids ? treeTicks(pids().postgres) : new Map<number, number>(), own: process.cpuUsage() };

  // Watched once the last guest's sign-in is answered; counted from the last guest's arrival (the target's
  // "within 10 s of the last arrival"): until every start the bench saw is in Postgres.
  let sinkLagMs: number | null = null;
  let watching: Promise<void> | undefined;
  const watchSink = async (): Promise<void> => {
    const from = t0 + plan.lastArrivalMs;
    const need = driver.ledger.authorized.size;
    for (;;) {
      if ((await startsStored(pool!, venue.tenant!)) >= need) { sinkLagMs = performance.now() - from; return; }
      if (performance.now() - from > 120_000) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  let second = 0;
  let killed = false;
  let restarting: Promise<void> | undefined;
  const perSecond = (): void => {
    const rec: Record<string, unknown> = { t: ++second, ...driver.counts.take(), signing: driver.signing, radius_outstanding: radius.outstanding };
    for (const [k, s] of Object.entries(driver.series)) rec[k] = s.take();
    lines.write(rec);
  };
  const secondTimer = setInterval(perSecond, 1000);

  await new Promise<void>((resolve, reject) => {
    // The clock sleeps until the next event is due (at most 20 ms, for the checks below), not 1 ms at a
    // time: a busy-waiting generator takes a core's share from the service it measures.
    let loop: NodeJS.Timeout | undefined;
    let stopped = false;
    const halt = (): void => { clearTimeout(loop); stopped = true; };
    const step = (): void => {
      if (stopped) return;
      tick();
      if (stopped) return;
      const wait = Math.min(20, Math.max(0, t0 + plan.nextDueMs() - performance.now()));
      loop = setTimeout(step, wait);
    };
    const tick = (): void => {
      const now = performance.now() - t0;
      if (now < 0) return;
      driver.tick();
      if (o.killAtSec !== undefined && !killed && now >= o.killAtSec * 1000) {
        killed = true;
        const at = performance.now();
        driver.outage = [at, Infinity];
        say(`  kill -9 the service at ${(now / 1000).toFixed(1)} s`);
        restarting = victim!.killAndRestart().then((port) => {
          victimLane.http.port = port;
          driver.outage = [at, performance.now()];
          say(`  service back after ${((performance.now() - at) / 1000).toFixed(1)} s`);
        }, (err: Error) => { halt(); reject(err); });
      }
      const arrived = plan.exhausted(now) || now >= plan.lastArrivalMs;
      if (arrived && driver.signing === 0 && pool && !watching && driver.lastSigninAt > 0 && !driver.down()) watching = watchSink();
      if (plan.exhausted(now) && driver.signing === 0 && radius.outstanding === 0 && !driver.down()) { halt(); resolve(); }
    };
    step();
  });
  // The generator's CPU: from the first arrival to the last answer (the check's Postgres polling after it is not the load's).
  const generatorUs = process.cpuUsage(cpu0.own);
  const stubTicks = stub ? cpuTicks(stub.child.pid!) - cpu0.service : undefined;
  await restarting;
  clearInterval(secondTimer);
  perSecond();
  radius.close();
  await watching;

  let check: StormCheck | undefined;
  let redisPerShard: number[] | null = null;
  const perGuest = (us: number): number => Math.round(us / Math.max(1, driver.signedIn));
  // "bench" is the generator alone (see generatorUs); with --stub, "service" is the stand-in's CPU.
  const cpu: Record<string, number | null> = { service: stubTicks === undefined ? null : perGuest(stubTicks * 1e4), redis: null, postgres: null,
    bench: perGuest(generatorUs.user + generatorUs.system) };
  if (pool && checkEnv && venue.tenant) {
    // Every answered Stop's end in Postgres too, and applied to its session row (an end that waited for
    // its start, stored by another consumer, is applied within seconds), before the check (bounded).
    const until = performance.now() + 60_000;
    while (performance.now() < until && ((await startsStored(pool, venue.tenant)) < driver.ledger.authorized.size
      || (await endsStored(pool, venue.tenant)) < driver.ledger.stopped.size
      || (await endsWaiting(pool, venue.tenant)) > 0)) await new Promise((r) => setTimeout(r, 100));
    const per = (ticks: number): number => Math.round((ticks * 1e4) / Math.max(1, driver.signedIn));
    cpu.service = per(serviceTicks() - cpu0.service);
    if (pids) {
      cpu.redis = per(cpuTicks(pids().redis) - cpu0.redis);
      if (shardPids) {
        redisPerShard = shardPids.map((pid, i) => per(cpuTicks(pid) - cpu0.shards[i]!));
        cpu.redis = redisPerShard.reduce((a, b) => a + b, 0);
      }
      let pg = 0;
      for (const [pid, t] of treeTicks(pids().postgres)) pg += t - (cpu0.pg.get(pid) ?? 0);
      cpu.postgres = per(pg);
    }
    const engine = new Engine(loadConfig(checkEnv), createLogger('warn', 2), { sink: false, actors: false });
    undo.push(() => engine.close());
    await engine.start();
    check = await checkStorm(pool, venue.tenant, driver.ledger, () => engine.audit.verify(venue.tenant!));
  }

  const f = Object.fromEntries(Object.entries(driver.series).map(([k, s]) => [k, s.run.figures()]));
  const errors = Object.fromEntries(driver.errors);
  const errorCount = [...driver.errors.values()].reduce((a, b) => a + b, 0);
  const lagS = sinkLagMs === null ? null : (sinkLagMs as number) / 1000;
  const targets = {
    signin_p99: f.signin!.p99 !== null && f.signin!.p99 <= TARGET.signinP99,
    access_p99: f.access!.p99 !== null && f.access!.p99 <= TARGET.accessP99,
    errors: errorCount === 0,
    sink_lag: lagS !== null && lagS <= TARGET.sinkLagS,
  };
  const met = Object.values(targets).every(Boolean);
  const summary = {
    summary: true, stub: o.stub, tenant: venue.tenant ?? null, http_client: o.httpClient, guests: shape.guests, processes: o.processes, rate: shape.rate, otp_share: shape.otpShare, signed_in: driver.signedIn,
    latency_ms: f, errors, restart_errors: Object.fromEntries(driver.restartErrors), retransmitted: radius.retransmitted, late_duplicates: radius.lateDuplicates, bad_replies: radius.bad,
    sink_lag_s: lagS, cpu_us_per_signin: cpu, redis_us_per_signin_per_shard: redisPerShard, killed_at_s: o.killAtSec ?? null,
    check: check ?? null, targets: o.killAtSec === undefined && !o.stub ? targets : null,
  };
  lines.write(summary);
  await lines.close();

  say(`  sign-in: ${driver.signedIn} of ${shape.guests}; page p50 ${ms(f.page!.p50)} ms; retransmitted ${radius.retransmitted} (answered twice: ${radius.lateDuplicates}), bad replies ${radius.bad}`);
  say(`  errors: ${JSON.stringify(errors)}${driver.restartErrors.size ? `; around the kill: ${JSON.stringify(summary.restart_errors)}` : ''}`);
  say(`  cpu us per sign-in: ${o.stub ? 'stub' : 'service'} ${cpu.service ?? '-'}, redis ${cpu.redis ?? '-'}, postgres ${cpu.postgres ?? '-'}, this bench's generator ${cpu.bench ?? '-'}${redisPerShard ? ` (redis per shard: ${redisPerShard.join(', ')})` : ''}`);
  if (check) say(`  check: ${check.sessions} sessions, ${check.starts} starts, ${check.ends} ends in Postgres (${check.unanswered} sign-ins and ${check.unansweredEnds} stops whose answers were lost; ${check.replacedAfterLostVerify} replaced after a lost code verify); chain ${check.chainValid ? 'valid' : 'BROKEN'}${check.problems.length ? `; PROBLEMS: ${check.problems.join('; ')}` : ''}`);
  const lat = (k: string): string => `p50 ${ms(f[k]!.p50)} p90 ${ms(f[k]!.p90)} p99 ${ms(f[k]!.p99)} max ${ms(f[k]!.max)}`;
  const verdict = check && !check.ok ? 'CHECK FAILED' : o.killAtSec !== undefined ? (check ? 'EXACTLY ONCE' : 'UNCHECKED')
    : o.stub ? `STUB (generator only; ${errorCount ? 'errors' : 'no errors'})` : met ? 'PASS' : 'FAIL';
  process.stdout.write(`stadium-storm: ${shape.guests} guests at ${shape.rate.toFixed(0)}/s | sign-in ms ${lat('signin')} | access ms ${lat('access')} | ` +
    `start ms p99 ${ms(f.acctStart!.p99)} | interim ms p99 ${ms(f.interim!.p99)} | errors ${errorCount} | sink lag ${lagS === null ? '-' : lagS.toFixed(2)} s | ` +
    `cpu us/sign-in ${o.stub ? 'stub' : 'service'} ${cpu.service ?? '-'} redis ${cpu.redis ?? '-'} postgres ${cpu.postgres ?? '-'} bench ${cpu.bench ?? '-'} | ` +
    `(targets: sign-in p99 <= ${TARGET.signinP99} ms, access p99 <= ${TARGET.accessP99} ms, 0 errors, sink lag <= ${TARGET.sinkLagS} s) ${verdict}\n`);
  if (check && !check.ok) return 1;
  if (o.killAtSec !== undefined) return check ? 0 : 1;
  if (o.stub) return errorCount === 0 ? 0 : 2;
  return met ? 0 : 2;
}

let options: StormOptions | 'help';
try {
  options = parseStormArgs(process.argv.slice(2));
} catch (err) {
  process.stderr.write(`stadium-storm: ${(err as Error).message}\n`);
  process.exit(2);
}
if (options === 'help') {
  process.stdout.write(STORM_HELP + '\n');
} else {
  main(options).then((code) => undo.run().then(() => { process.exitCode = code; }), (err: Error) => {
    say(`stadium-storm failed: ${err.stack ?? err.message}`);
    return undo.run().then(() => { process.exitCode = 1; });
  });
}
