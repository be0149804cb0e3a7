import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { keys } from '../engine/redis/keys.js';
import { defineScripts } from '../engine/redis/scripts.js';
import { AccountBatcher, type AccountReport } from '../engine/sessions/account-batcher.js';
import { freePort } from '../scripts/local-services.js';

/**
 * Scenario: what one Interim-Update costs Redis and the actor thread's
 * Redis client, a report per script call (account-session-3.lua, as the
 * actors sent them before) against the reports of an event-loop turn in one
 * call (AccountBatcher, account-sessions-n.lua), on a Redis of its own.
 *
 * It isolates the part of an accounting report that batching changes, so a
 * busy machine moves it less than the whole-engine A/B (radius-vs-freeradius,
 * BENCH_PHASES=acct-gen): CPU time is read from /proc for Redis and from
 * process.cpuUsage() for this process (the ioredis side, as in an actor
 * thread), per report, and does not count the time other jobs hold the cores.
 *
 * Setup: BENCH_DEVICES live grants (the fields the script reads) of one
 * tenant; BENCH_WINDOW workers, each with its own devices, send Interim-Updates
 * with growing totals one after another (as an actor does per device), so
 * BENCH_WINDOW reports are outstanding. Rounds alternate the two modes
 * (BENCH_ROUNDS, BENCH_DURATION s each). Details to stderr, one summary line
 * to stdout.
 *
 *   npm run -s build && node dist/bench/account-batch.js
 */

const num = (name: string, dflt: number): number => {
  const v = Number(process.env[name] ?? dflt);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} must be a positive number`);
  return v;
};
const DEVICES = Math.floor(num('BENCH_DEVICES', 5_000));
const WINDOW = Math.floor(num('BENCH_WINDOW', 128));
const ROUNDS = Math.floor(num('BENCH_ROUNDS', 3));
const DURATION_MS = num('BENCH_DURATION', 5) * 1000;
const TENANT = 'tn_benchacct';
const HS = 'hs_bench';
const DAY = '20261128';
const TICK_US = 1e6 / 100; // /proc's clock ticks (USER_HZ 100 on Linux)

const say = (line: string): void => { process.stderr.write(line + '\n'); };
const mac = (i: number): string => `02:00:${[(i >> 24) & 255, (i >> 16) & 255, (i >> 8) & 255, i & 255].map((b) => b.toString(16).padStart(2, '0')).join(':')}`;

/** CPU time of a process so far, µs (utime + stime). */
function procCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_US;
}

type Mode = 'single' | 'batch';

async function phase(redis: Redis, batcher: AccountBatcher, mode: Mode, totals: Float64Array, redisPid: number): Promise<{ rate: number; redisUs: number; clientUs: number }> {
  let done = 0;
  const endAt = performance.now() + DURATION_MS;
  const one = (i: number): Promise<unknown> => {
    totals[i]! += 1_000;
    const r: AccountReport = {
      tenant: TENANT, hs: HS, mac: mac(i), day: DAY, nowMs: Date.now(), acctId: `a${i}`, inOctets: totals[i]!, outOctets: 100,
      ip: '', ap: '', signal: '', status: 'interim',
    };
    return mode === 'batch'
      ? batcher.submit(r)
      : redis.accountSessionV4(keys.grant(TENANT, HS, r.mac), keys.dailyUsage(TENANT, r.mac, DAY), keys.liveByAp(TENANT),
        r.nowMs, r.acctId, r.inOctets, r.outOctets, r.ip, r.ap, r.signal, r.status);
  };
  const worker = async (w: number): Promise<void> => {
    for (let k = 0; performance.now() < endAt; k++) {
      await one((w + k * WINDOW) % DEVICES);
      done++;
    }
  };
  const r0 = procCpuUs(redisPid), c0 = process.cpuUsage(), t0 = performance.now();
  await Promise.all(Array.from({ length: WINDOW }, (_, w) => worker(w)));
  const secs = (performance.now() - t0) / 1000, c = process.cpuUsage(c0);
  return { rate: done / secs, redisUs: (procCpuUs(redisPid) - r0) / done, clientUs: (c.user + c.system) / done };
}

async function main(): Promise<void> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-account-batch-'));
  // AOF as the service's Redis runs (scripts/local-services.ts): its writes are part of what a report costs.
  const server: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec',
    '--dir', dir], { stdio: 'ignore' });
  const stop = (): void => { server.kill('SIGKILL'); rmSync(dir, { recursive: true, force: true }); };
  process.once('exit', stop);
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
  redis.on('error', () => undefined);
  for (let i = 0; ; i++) {
    if (await redis.ping().then(() => true, () => false)) break;
    if (i > 100) throw new Error('redis-server did not start');
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    defineScripts(redis);
    for (let i = 0; i < DEVICES; i += 1_000) {
      const p = redis.pipeline();
      for (let j = i; j < Math.min(DEVICES, i + 1_000); j++) {
        p.hset(keys.grant(TENANT, HS, mac(j)), 'sid', `sess_${j}`, 'hs', HS, 'mac', mac(j), 'bin', 0, 'bout', 0, 'quota', 100_000, 'squota', 0, 'last', 0);
      }
      await p.exec();
    }
    const totals = new Float64Array(DEVICES);
    const batcher = new AccountBatcher(redis);
    await phase(redis, batcher, 'single', totals, server.pid!); // warm-up: scripts loaded, JIT warm
    await phase(redis, batcher, 'batch', totals, server.pid!);
    say(`account-batch: ${DEVICES} devices, window ${WINDOW}, ${ROUNDS} rounds of ${DURATION_MS / 1000} s per mode; node ${process.version}, ` +
      `load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
    const sums: Record<Mode, { rate: number; redisUs: number; clientUs: number }> = {
      single: { rate: 0, redisUs: 0, clientUs: 0 }, batch: { rate: 0, redisUs: 0, clientUs: 0 },
    };
    for (let round = 0; round < ROUNDS; round++) {
      for (const mode of (round % 2 === 0 ? ['single', 'batch'] : ['batch', 'single']) as Mode[]) {
        const r = await phase(redis, batcher, mode, totals, server.pid!);
        say(`  round ${round + 1} ${mode.padEnd(6)} ${Math.round(r.rate).toString().padStart(7)} reports/s  redis ${r.redisUs.toFixed(1)} us/report  client ${r.clientUs.toFixed(1)} us/report`);
        sums[mode].rate += r.rate / ROUNDS;
        sums[mode].redisUs += r.redisUs / ROUNDS;
        sums[mode].clientUs += r.clientUs / ROUNDS;
      }
    }
    const s = sums.single, b = sums.batch;
    process.stdout.write(`account-batch: single ${Math.round(s.rate)}/s redis ${s.redisUs.toFixed(1)} client ${s.clientUs.toFixed(1)} us/report | ` +
      `batch ${Math.round(b.rate)}/s redis ${b.redisUs.toFixed(1)} client ${b.clientUs.toFixed(1)} us/report | ` +
      `ratios batch/single: rate ${(b.rate / s.rate).toFixed(2)}, redis cpu ${(b.redisUs / s.redisUs).toFixed(2)}, client cpu ${(b.clientUs / s.clientUs).toFixed(2)}\n`);
  } finally {
    redis.disconnect();
    stop();
  }
}

main().then(() => process.exit(0), (err: Error) => {
  say(`account-batch failed: ${err.stack ?? err.message}`);
  process.exit(1);
});
