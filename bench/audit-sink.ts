import { fork, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Redis as RedisConnection } from 'ioredis';
import type { RedisClient as Redis } from '../engine/redis/redis-client.js';
import { createLogger, DEFAULT_CODE_FORMAT, Engine, loadConfig, projectPath } from '../engine/index.js';
import { activityKeys } from '../engine/events/activity-keys.js';
import { newId } from '../engine/ids.js';
import { keys } from '../engine/redis/keys.js';
import { createRedis } from '../engine/redis/scripts.js';
import { localStack, say, stopChild, Teardown, watchReady, serviceNodeOptions } from './bench-kit.js';

/**
 * Scenario: the outbox sink, which carries every session start (and every
 * other audit event) from the tenants' Redis streams into Postgres: the
 * voucher_uses, sessions and vouchers tables and the per-tenant hash chain.
 *
 * (a) Drain rate. With no sink running, N session starts are queued through
 *     the real use-voucher-18.lua (the records are exactly what production
 *     queues) across a few tenants; then an engine with its OutboxSink starts
 *     in this process, and we time until every stream is empty (an entry is
 *     deleted only after its transaction committed) -> records/s.
 * (b) Lag under load. The service (`node dist/scripts/serve.js`) runs its sink
 *     while a separate load process runs the same script at a fixed rate. Every
 *     100 ms we take the age of the oldest undrained record: the first entry of
 *     each stream (drained entries are deleted), its id's time against now.
 *     The service's own gauge (guestwifi_outbox_sink_lag_seconds) is sampled beside it.
 *
 * At the end every record must be in Postgres exactly once and every chain
 * must verify, or the figures mean nothing (exit 1).
 *
 * Everything runs on loopback and is thrown away: Redis and Postgres in a
 * temporary folder (startLocalServices, ephemeral). Details go to stderr;
 * stdout gets one summary line. Exit 0 pass, 1 error, 2 a target missed.
 *
 * Knobs (environment): BENCH_RECORDS (200000), BENCH_TENANTS (4),
 * BENCH_ENDS=1 (every session of (a) is also ended, through the real
 * end-session-10.lua, before the sink starts: (a) then drains twice
 * BENCH_RECORDS records, half of them ends, as a day's traffic has them),
 * BENCH_RATE (5000 per second), BENCH_LOAD_SECONDS (20), BENCH_SKIP_LAG=1,
 * BENCH_HISTORY_DAYS (0; e.g. 729: that many past daily partitions of
 * audit_records, each with BENCH_HISTORY_ROWS (1000) records of another
 * tenant, as after two years of service, so lookups that probe every
 * partition show their cost),
 * BENCH_CPU_PROF (a folder: the bench runs itself again under `node
 * --cpu-prof`, so every thread of this process, the sink's among them, writes
 * a profile there, and (a) prints the drain's window for cpu-profile-summary;
 * the service of (b) runs with --cpu-prof and writes its own there too).
 */

const RECORDS = Number(process.env.BENCH_RECORDS ?? 200_000);
const TENANTS = Number(process.env.BENCH_TENANTS ?? 4);
const RATE = Number(process.env.BENCH_RATE ?? 5000);
const LOAD_S = Number(process.env.BENCH_LOAD_SECONDS ?? 20);
const SKIP_LAG = process.env.BENCH_SKIP_LAG === '1';
const ENDS = process.env.BENCH_ENDS === '1';
const HISTORY_DAYS = Number(process.env.BENCH_HISTORY_DAYS ?? 0);
const HISTORY_ROWS = Number(process.env.BENCH_HISTORY_ROWS ?? 1000);
const CPU_PROF = process.env.BENCH_CPU_PROF;
const CODES_PER_TENANT = 16;
const TARGET_RATE = 50_000;
const TARGET_LAG_S = 2;
const DEADLINE_MS = 600_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Site { tenant: string; hotspot: string; codes: string[] }

/** A locally administered MAC, unique per (phase, n). */
function mac(phase: number, n: number): string {
  const b = [0x02, 0xa0 + phase, (n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  return b.map((x) => x.toString(16).padStart(2, '0').toUpperCase()).join(':');
}

/** One session start through the production script; resolves to its outcome ('ok' expected) and session id. */
async function useVoucher(redis: Redis, s: Site, code: string, m: string): Promise<[outcome: string, sid: string]> {
  const sid = newId('sess_');
  const now = Date.now();
  const r = await redis.useVoucherV9(
    keys.voucher(s.tenant, code), keys.voucherDevices(s.tenant, code), keys.grant(s.tenant, s.hotspot, m),
    keys.outbox(s.tenant), keys.loaded(s.tenant), keys.live(s.tenant, s.hotspot), keys.sessionRef(s.tenant, sid),
    keys.block(s.tenant, m), ...activityKeys(s.tenant, now),
    keys.guessesByDevice(s.tenant, s.hotspot, m), keys.guessesByAddress(s.tenant, ''), keys.guessRefusals(s.tenant, 0), keys.knownDevices(s.tenant),
    now, m, s.hotspot, '10.20.0.1', 'Guest', sid, 1440, 900, 10, 0, 600_000, 1_200_000);
  return [String(r[0]), sid];
}

/** That session's end through the production script, as a device's Accounting-Stop ends it; resolves to its outcome ('ended'). */
async function endSession(redis: Redis, s: Site, sid: string, m: string): Promise<string> {
  const now = Date.now();
  const r = await redis.endSessionV3(keys.grant(s.tenant, s.hotspot, m), keys.live(s.tenant, s.hotspot), keys.sessionRef(s.tenant, sid),
    keys.outbox(s.tenant), ...activityKeys(s.tenant, now), sid, now, 'user_request', s.hotspot, m, '', '');
  return String(r[0]);
}

/* ------------------------------------------------------------------ load role */

/**
 * The load process of (b): RATE session starts per second for LOAD_S seconds
 * on one shared schedule (request i leaves at t0 + i / RATE), spread over
 * the sites; prints {"done":true, ...} on stdout.
 */
async function loadRole(): Promise<void> {
  const { redisUrl, sites, rate, seconds } = JSON.parse(process.env.BENCH_LOAD!) as { redisUrl: string; sites: Site[]; rate: number; seconds: number };
  const redis = createRedis(redisUrl, createLogger('warn', 2));
  const total = Math.round(rate * seconds);
  let sent = 0, ok = 0, failed = 0, inFlight = 0, maxBehind = 0;
  process.stdout.write(JSON.stringify({ ready: true }) + '\n');
  const t0 = Date.now();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - t0) * rate) / 1000));
    maxBehind = Math.max(maxBehind, due - sent);
    // Bounded: a Redis that cannot keep up shows as "behind", not as a growing queue here.
    while (sent < due && inFlight < 2000) {
      const i = sent++;
      const s = sites[i % sites.length]!;
      inFlight++;
      useVoucher(redis, s, s.codes[Math.floor(i / sites.length) % s.codes.length]!, mac(1, i)).then(
        ([r]) => { inFlight--; if (r === 'ok') ok++; else failed++; },
        () => { inFlight--; failed++; });
    }
    await sleep(2);
  }
  while (inFlight > 0) await sleep(5);
  const secs = (Date.now() - t0) / 1000;
  process.stdout.write(JSON.stringify({ done: true, sent, ok, failed, seconds: secs, maxBehind }) + '\n');
  redis.disconnect();
}

/* ------------------------------------------------------------------ helpers */

const undo = new Teardown();

/** utime + stime of a process, in clock ticks (1/100 s). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

/** Ticks of a process and its children (Postgres: the postmaster and its backends). */
function treeTicks(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  const visit = (p: number): void => {
    try {
      out.set(p, cpuTicks(p));
      for (const c of readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(' ')) if (c) visit(Number(c));
    } catch { /* gone meanwhile */ }
  };
  visit(pid);
  return out;
}

/** CPU per process group over `fn`, in percent of one core. */
async function withCpu<T>(pids: Record<string, number>, fn: () => Promise<T>): Promise<[T, Record<string, number>]> {
  const before = Object.fromEntries(Object.entries(pids).map(([k, p]) => [k, treeTicks(p)]));
  const at = Date.now();
  const out = await fn();
  const secs = (Date.now() - at) / 1000;
  const cpu: Record<string, number> = {};
  for (const [k, p] of Object.entries(pids)) {
    let t = 0;
    for (const [pid, ticks] of treeTicks(p)) t += ticks - (before[k]!.get(pid) ?? 0);
    cpu[k] = Math.round(t / secs);
  }
  return [out, cpu];
}

/** Age in seconds of the oldest record still in any stream (0 when all are empty). */
async function oldestUndrained(redis: Redis, sites: Site[]): Promise<number> {
  const p = redis.pipeline();
  for (const s of sites) p.xrange(keys.outbox(s.tenant), '-', '+', 'COUNT', 1);
  const replies = (await p.exec()) ?? [];
  let oldest = Infinity;
  for (const [, r] of replies) {
    const first = (r as [string, string[]][] | null)?.[0];
    if (first) oldest = Math.min(oldest, Number(first[0].split('-')[0]));
  }
  return oldest === Infinity ? 0 : Math.max(0, (Date.now() - oldest) / 1000);
}

async function queued(redis: Redis, sites: Site[]): Promise<number> {
  const p = redis.pipeline();
  for (const s of sites) p.xlen(keys.outbox(s.tenant));
  return ((await p.exec()) ?? []).reduce((n, [, v]) => n + Number(v), 0);
}

async function metricLag(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(/^guestwifi_outbox_sink_lag_seconds (\S+)$/m.exec(text)?.[1] ?? NaN);
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))]! : NaN;
}

const fmt = (x: number, digits = 1): string => x.toFixed(digits);

/* ------------------------------------------------------------------ main */

async function main(): Promise<number> {
  try {
    const stack = await localStack('audit-sink', undo);
    const { local } = stack;
    const env: NodeJS.ProcessEnv = { ...stack.env, NODE_ID: 'bench-audit-sink', RADIUS_ENABLED: 'false' };
    const pids = {
      ...stack.pids(),
    };
    say(`audit-sink: ${RECORDS} records over ${TENANTS} tenants; then ${RATE}/s for ${LOAD_S} s; ` +
      `nproc ${spawnSync('nproc').stdout.toString().trim()}, node ${process.version}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);

    // Sites: tenants, a hotspot each, unlimited vouchers; no sink runs in this engine.
    const seeder = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false, actors: false });
    await seeder.start();
    const sites: Site[] = [];
    for (let t = 0; t < TENANTS; t++) {
      const tenant = await seeder.tenants.create(`Bench Venue ${t}`);
      const hs = await seeder.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'UTC' });
      const rows = await seeder.vouchers.createBatch(tenant.id, {
        count: CODES_PER_TENANT, format: DEFAULT_CODE_FORMAT, max_uses: null, expires_at: null, bandwidth_profile: null,
        daily_quota_mb: null, session_quota_mb: null, duration_minutes: null, bandwidth_down_mbps: null, bandwidth_up_mbps: null, ssids: [], notes: null,
      }, 'bench');
      await seeder.vouchers.loadIntoRedis(tenant.id);
      sites.push({ tenant: tenant.id, hotspot: hs.id, codes: rows.map((r) => r.code) });
    }
    if (HISTORY_DAYS > 0) {
      // Named as PartitionCache names them; within the retention period, so the engine keeps them.
      const at = Date.now();
      const today = Date.parse(new Date().toISOString().slice(0, 10));
      for (let d = HISTORY_DAYS; d >= 1; d--) {
        const day = new Date(today - d * 86_400_000).toISOString().slice(0, 10);
        const next = new Date(today - (d - 1) * 86_400_000).toISOString().slice(0, 10);
        await seeder.pool.query(`CREATE TABLE IF NOT EXISTS audit_records_${day.replace(/-/g, '')} PARTITION OF audit_records FOR VALUES FROM ('${day}') TO ('${next}')`);
      }
      await seeder.pool.query(
        `INSERT INTO audit_records (tenant_id, seq, id, event_type, ts, session_id, details, prev_hash, hash_chain_value, day)
         SELECT 'tn_bench_history', g, 'sess_h' || g || ':start', 'history', d + interval '12 hours', 'sess_h' || g, '{}', '-', '-', d
         FROM generate_series(0, $1::int * $2::int - 1) AS g, LATERAL (SELECT $3::date - 1 - (g / $2::int) AS d) AS x`,
        [HISTORY_DAYS, HISTORY_ROWS, new Date(today).toISOString().slice(0, 10)]);
      say(`  history: ${HISTORY_DAYS} past daily partitions with ${HISTORY_ROWS} records each, in ${fmt((Date.now() - at) / 1000)} s`);
    }
    await seeder.close();
    const redis = new RedisConnection(local.redisUrl);
    undo.push(() => redis.disconnect());

    // (a) Queue RECORDS session starts through the real script, then time the sink draining them.
    const filler = createRedis(local.redisUrl, createLogger('warn', 2));
    const fillAt = Date.now();
    let bad = 0;
    const sids: string[] = [];
    for (let i = 0; i < RECORDS;) {
      const chunk: Promise<[string, string]>[] = [];
      for (const end = Math.min(RECORDS, i + 5000); i < end; i++) {
        const s = sites[i % sites.length]!;
        chunk.push(useVoucher(filler, s, s.codes[Math.floor(i / sites.length) % s.codes.length]!, mac(0, i)));
      }
      for (const [r, sid] of await Promise.all(chunk)) {
        if (r !== 'ok') bad++;
        sids.push(sid);
      }
    }
    if (bad) throw new Error(`${bad} of ${RECORDS} script calls did not answer ok`);
    say(`  queued ${RECORDS} records through use-voucher-18.lua in ${fmt((Date.now() - fillAt) / 1000)} s`);
    if (ENDS) {
      const endAt = Date.now();
      for (let i = 0; i < RECORDS;) {
        const chunk: Promise<string>[] = [];
        for (const end = Math.min(RECORDS, i + 5000); i < end; i++) chunk.push(endSession(filler, sites[i % sites.length]!, sids[i]!, mac(0, i)));
        bad += (await Promise.all(chunk)).filter((r) => r !== 'ended').length;
      }
      if (bad) throw new Error(`${bad} of ${RECORDS} end-session calls did not answer ended`);
      say(`  queued ${RECORDS} ends through end-session-10.lua in ${fmt((Date.now() - endAt) / 1000)} s`);
    }
    filler.disconnect();
    const drained = ENDS ? 2 * RECORDS : RECORDS;
    if ((await queued(redis, sites)) !== drained) throw new Error('streams do not hold every queued record');

    const sinkEngine = new Engine(loadConfig(env), createLogger('warn', 2), { actors: false });
    let sinkClosed = false;
    undo.push(() => (sinkClosed ? undefined : sinkEngine.close()));
    // The profile's timestamps are CLOCK_MONOTONIC microseconds, as hrtime: these cut the drain out of it.
    const profileFrom = process.hrtime.bigint() / 1000n;
    const [drainMs, drainCpu] = await withCpu({ ...pids, sink: process.pid }, async () => {
      const t0 = Date.now();
      await sinkEngine.start();
      while ((await queued(redis, sites)) > 0) {
        if (Date.now() - t0 > 300_000) throw new Error('sink did not drain within 300 s');
        await sleep(20);
      }
      return Date.now() - t0;
    });
    if (CPU_PROF) {
      say(`  (a) profiles in ${CPU_PROF} (the sink's thread is the worker's file): node dist/bench/cpu-profile-summary.js <file> ` +
        `--from ${profileFrom} --to ${process.hrtime.bigint() / 1000n} --requests ${drained}`);
    }
    sinkClosed = true;
    await sinkEngine.close();
    const drainRate = drained / (drainMs / 1000);
    // CPU per record is steadier than records/s on a shared machine: it shows what a change saved.
    const perRecord = (pct: number): number => (pct * 1e4 * (drainMs / 1000)) / drained;
    const drainUs = { sink: perRecord(drainCpu.sink!), postgres: perRecord(drainCpu.postgres!), redis: perRecord(drainCpu.redis!) };
    say(`  (a) drained ${drained} in ${fmt(drainMs / 1000, 2)} s = ${fmt(drainRate, 0)} records/s; ` +
      `cpu % of a core: sink process ${drainCpu.sink}, postgres ${drainCpu.postgres}, redis ${drainCpu.redis}; ` +
      `cpu us per record: sink process ${fmt(drainUs.sink, 0)}, postgres ${fmt(drainUs.postgres, 0)}, redis ${fmt(drainUs.redis, 0)}`);

    // (b) The service drains while a load process queues RATE records per second.
    let lag = { p50: NaN, p99: NaN, max: NaN, metricMax: NaN, achievedRate: NaN, n: 0 };
    let loadOk = 0;
    if (!SKIP_LAG) {
      const prof = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
      const service = await watchReady(undo, 'service', spawn(process.execPath, [...serviceNodeOptions(), ...prof, projectPath('dist', 'scripts', 'serve.js')], { env, stdio: ['ignore', 'pipe', 'inherit'] }));
      const base = `http://127.0.0.1:${service.ready.ports.main}`;
      const load = await watchReady(undo, 'load', fork(fileURLToPath(import.meta.url), [], {
        env: { ...env, BENCH_ROLE: 'load', BENCH_LOAD: JSON.stringify({ redisUrl: local.redisUrl, sites, rate: RATE, seconds: LOAD_S }) },
        stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
      }));
      const samples: number[] = [];
      const metric: number[] = [];
      const [, lagCpu] = await withCpu({ ...pids, service: service.child.pid! }, async () => {
        while (load.messages.length === 0) {
          if (load.child.exitCode !== null) throw new Error('load process died');
          samples.push(await oldestUndrained(redis, sites));
          metric.push(await metricLag(base));
          await sleep(100);
        }
      });
      const done = load.messages[0]!;
      loadOk = done.ok;
      if (done.failed) throw new Error(`load: ${done.failed} script calls failed`);
      // The tail: until the last record of the load is stored.
      const tailAt = Date.now();
      while ((await queued(redis, sites)) > 0) {
        if (Date.now() - tailAt > 60_000) throw new Error('service sink did not catch up within 60 s after the load');
        samples.push(await oldestUndrained(redis, sites));
        await sleep(100);
      }
      lag = {
        p50: quantile(samples, 0.5), p99: quantile(samples, 0.99), max: Math.max(...samples),
        metricMax: Math.max(...metric.filter(Number.isFinite)), achievedRate: done.ok / done.seconds, n: samples.length,
      };
      say(`  (b) ${done.ok} records at ${fmt(lag.achievedRate, 0)}/s (most behind schedule: ${done.maxBehind}); ` +
        `oldest undrained record: p50 ${fmt(lag.p50, 2)} s, p99 ${fmt(lag.p99, 2)} s, max ${fmt(lag.max, 2)} s over ${lag.n} samples; ` +
        `guestwifi_outbox_sink_lag_seconds max ${fmt(lag.metricMax, 2)} s\n` +
        `      cpu % of a core: service ${lagCpu.service}, postgres ${lagCpu.postgres}, redis ${lagCpu.redis}`);
      await stopChild(service.child);
    }

    // Exactly once, gap-free: every queued start is one chain record, one session, one use; every chain verifies.
    const checker = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false, actors: false });
    undo.push(() => checker.close());
    await checker.start();
    const expected = RECORDS + loadOk;
    const count = async (sql: string): Promise<number> => (await checker.pool.query<{ n: number }>(sql)).rows[0]!.n;
    const starts = await count("SELECT count(*)::int AS n FROM audit_records WHERE event_type = 'session_start'");
    const distinct = await count("SELECT count(DISTINCT session_id)::int AS n FROM audit_records WHERE event_type = 'session_start'");
    const sessions = await count('SELECT count(*)::int AS n FROM sessions');
    const uses = await count('SELECT count(*)::int AS n FROM voucher_uses');
    if (starts !== expected || distinct !== expected || sessions !== expected || uses !== expected) {
      throw new Error(`expected ${expected} everywhere: session_start ${starts} (distinct ${distinct}), sessions ${sessions}, voucher_uses ${uses}`);
    }
    for (const s of sites) {
      const v = await checker.audit.verify(s.tenant);
      if (!v.valid) throw new Error(`chain of ${s.tenant} broken: ${JSON.stringify(v.first_break)}`);
    }
    if (ENDS) {
      const ends = await count("SELECT count(*)::int AS n FROM audit_records WHERE event_type = 'session_end'");
      const ended = await count('SELECT count(*)::int AS n FROM sessions WHERE ended_at IS NOT NULL');
      if (ends !== RECORDS || ended !== RECORDS) throw new Error(`expected ${RECORDS} ends: session_end ${ends}, sessions ended ${ended}`);
    }
    say(`  checked: ${expected} session starts${ENDS ? ` and ${RECORDS} ends` : ''}, each once in audit_records, sessions and voucher_uses; ${sites.length} chains valid`);

    say(`  load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (other jobs on the machine share its 2 cores)`);
    const pass = drainRate >= TARGET_RATE && (SKIP_LAG || lag.max <= TARGET_LAG_S);
    process.stdout.write(`audit-sink: drain ${fmt(drainRate, 0)} records/s (${drained}${ENDS ? ', half of them ends,' : ''} over ${TENANTS} tenants${HISTORY_DAYS ? `, ${HISTORY_DAYS} days of history` : ''} in ${fmt(drainMs / 1000, 2)} s; ` +
      `cpu us/record sink ${fmt(drainUs.sink, 0)} postgres ${fmt(drainUs.postgres, 0)}) | ` +
      (SKIP_LAG ? 'lag skipped | ' : `lag at ${fmt(lag.achievedRate, 0)}/s for ${LOAD_S} s: p50 ${fmt(lag.p50, 2)} s p99 ${fmt(lag.p99, 2)} s max ${fmt(lag.max, 2)} s (gauge max ${fmt(lag.metricMax, 2)} s) | `) +
      `exactly once, chains valid (target: drain >= ${TARGET_RATE}/s, lag max <= ${TARGET_LAG_S} s) ${pass ? 'PASS' : 'FAIL'}\n`);
    return pass ? 0 : 2;
  } finally {
    await undo.run();
  }
}

if (process.env.BENCH_ROLE === 'load') {
  loadRole().then(() => process.exit(0), (err: Error) => { say(`load failed: ${err.stack ?? err.message}`); process.exit(1); });
} else if (CPU_PROF && !process.execArgv.some((a) => a.startsWith('--cpu-prof'))) {
  // The sink runs on a worker thread: an inspector session here would profile only the main one.
  const again = spawnSync(process.execPath, ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  process.exitCode = again.status ?? 1;
} else {
  undo.guard('audit-sink', DEADLINE_MS);
  main().then((code) => { process.exitCode = code; }, (err: Error) => {
    say(`audit-sink failed: ${err.stack ?? err.message}`);
    process.exitCode = 1;
  });
}
