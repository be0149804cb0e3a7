import type { Redis } from 'ioredis';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startLocalServices, type LocalServices } from '../scripts/local-services.js';
import { SERVICE_NODE_OPTIONS } from '../scripts/node-options.js';

/**
 * What every HTTP bench in this folder shares: child processes started and
 * stopped, a teardown that runs once however the bench ends, and CPU time
 * read from /proc (CPU per request moves much less than req/s with the
 * neighbours' load, so it is the figure an A/B compares).
 */

export const say = (line: string): void => { process.stderr.write(line + '\n'); };

/**
 * The Node.js options a bench starts the service with: production's
 * (scripts/node-options.ts), unless BENCH_SERVICE_NODE_OPTIONS names others
 * (space-separated; empty: none), for the A/B of an option.
 */
export function serviceNodeOptions(): string[] {
  const given = process.env.BENCH_SERVICE_NODE_OPTIONS;
  return given === undefined ? [...SERVICE_NODE_OPTIONS] : given.split(' ').filter(Boolean);
}

/** Steps to undo, in reverse order of creation: run once, whether the bench ends, fails, is interrupted or overruns. */
export class Teardown {
  private readonly steps: (() => Promise<void> | void)[] = [];
  private running: Promise<void> | undefined;

  push(step: () => Promise<void> | void): void {
    this.steps.push(step);
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        try { await step(); } catch (err) { say(`teardown: ${(err as Error).message}`); }
      }
    })();
    return this.running;
  }

  /** Stops the bench by itself after `deadlineMs`, and on SIGINT/SIGTERM, tearing down first. */
  guard(name: string, deadlineMs: number): void {
    const abort = (why: string): void => {
      say(`${name}: ${why}; stopping`);
      void this.run().finally(() => process.exit(1));
    };
    setTimeout(() => abort(`still running after ${deadlineMs / 1000} s`), deadlineMs).unref();
    process.once('SIGINT', () => abort('interrupted'));
    process.once('SIGTERM', () => abort('terminated'));
  }
}

/** A child bench process: its `{"ready":true,...}` line, and the `{"done":true,...}` lines it prints later. */
export interface ReadyChild { child: ChildProcess; ready: Record<string, any>; messages: Record<string, any>[] }

/**
 * Waits for a child's `{"ready":true,...}` stdout line (60 s at most) and keeps
 * collecting its `{"done":true,...}` lines; other lines are logs, the first few
 * shown. The child is stopped at teardown.
 */
export async function watchReady(teardown: Teardown, name: string, child: ChildProcess): Promise<ReadyChild> {
  teardown.push(() => stopChild(child));
  const messages: Record<string, any>[] = [];
  const lines = createInterface({ input: child.stdout! });
  let shown = 0;
  const ready = await new Promise<Record<string, any>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready within 60 s`)), 60_000);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`${name} exited with ${code} before it was ready`)); });
    lines.on('line', (line) => {
      try {
        const msg = JSON.parse(line);
        if (msg.ready) { clearTimeout(timer); resolve(msg); return; }
        if (msg.done) { messages.push(msg); return; }
      } catch { /* not JSON */ }
      if (shown++ < 5) say(`  [${name}] ${line}`);
    });
  });
  return { child, ready, messages };
}

/** Starts a node child (stdout piped) and waits for it to say it is ready (watchReady). */
export function spawnReady(teardown: Teardown, name: string, args: string[], env: NodeJS.ProcessEnv): Promise<ReadyChild> {
  return watchReady(teardown, name, spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'inherit'] }));
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => { clearTimeout(kill); resolve(); });
    child.kill('SIGTERM');
  });
}

/** utime + stime of a process, in clock ticks (100 per second on Linux). */
export function cpuTicks(pid: number): number {
  return statTicks(`/proc/${pid}/stat`);
}

/** utime + stime of one thread of a process (its main thread: tid = pid), in clock ticks. */
export function threadTicks(pid: number, tid: number): number {
  return statTicks(`/proc/${pid}/task/${tid}/stat`);
}

function statTicks(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}

/** [idle, total] ticks of the whole machine. */
export function machineTicks(): [number, number] {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return [f[3]! + f[4]!, f.reduce((a, b) => a + b, 0)];
}

/** Ticks of a process and its children (Postgres: the postmaster and its backends). */
export function treeTicks(pid: number): Map<number, number> {
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

/** CPU use during a run, in percent of one core; idle is percent of the machine; machineUs the whole machine's busy CPU time in µs. */
export interface CpuUse { server: number; redis: number; postgres: number; rest: number; idle: number; machineUs: number }

/** Runs `fn` and returns what it returns with the CPU used meanwhile by the server, Redis, Postgres and the rest. */
export async function withCpu<T>(pids: { server: number; redis: number; postgres: number }, fn: () => Promise<T>): Promise<[T, CpuUse]> {
  const s0 = cpuTicks(pids.server), r0 = cpuTicks(pids.redis), p0 = treeTicks(pids.postgres), [i0, t0] = machineTicks();
  const at = Date.now();
  const out = await fn();
  const secs = (Date.now() - at) / 1000;
  const [i1, t1] = machineTicks();
  let pg = 0;
  // A backend started meanwhile counts from zero.
  for (const [pid, ticks] of treeTicks(pids.postgres)) pg += ticks - (p0.get(pid) ?? 0);
  const busy = (t1 - t0 - (i1 - i0)) / secs; // ticks are 1/100 s: ticks per second = percent of a core
  const cpu = {
    server: Math.round((cpuTicks(pids.server) - s0) / secs), redis: Math.round((cpuTicks(pids.redis) - r0) / secs),
    postgres: Math.round(pg / secs), rest: 0, idle: Math.round((100 * (i1 - i0)) / Math.max(1, t1 - t0)),
    machineUs: (t1 - t0 - (i1 - i0)) * 10_000,
  };
  cpu.rest = Math.max(0, Math.round(busy - cpu.server - cpu.redis - cpu.postgres));
  return [out, cpu];
}

/**
 * Waits until the stream `key` (a tenant's outbox) is empty, the sink having taken everything, at
 * most `limitMs`: what it still held then (0: drained), and how long the wait took.
 */
export async function drained(redis: Redis, key: string, limitMs: number): Promise<{ left: number; waitedMs: number }> {
  const started = Date.now();
  let left = await redis.xlen(key);
  while (left > 0 && Date.now() - started < limitMs) {
    await new Promise((r) => setTimeout(r, 200));
    left = await redis.xlen(key);
  }
  return { left, waitedMs: Date.now() - started };
}

/** A locally administered MAC, unique per (prefix, run, n). */
export function benchMac(prefix: number, run: number, n: number): string {
  // A table, not toString/padStart per byte: the storm calls this several times per guest.
  return `${HEX[prefix & 255]}:${HEX[run & 255]}:${HEX[(n >>> 24) & 255]}:${HEX[(n >>> 16) & 255]}:${HEX[(n >>> 8) & 255]}:${HEX[n & 255]}`;
}
const HEX = Array.from({ length: 256 }, (_, x) => x.toString(16).padStart(2, '0').toUpperCase());

/** The p-th percentile (0-100) of a sorted array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** A bench's own Redis and PostgreSQL (localStack). */
export interface LocalStack {
  /** The temporary folder holding both, removed at teardown. */
  dir: string;
  local: LocalServices;
  /** The service's environment for them: a fresh JWT secret, HTTP on an ephemeral loopback port, warn logs. */
  env: NodeJS.ProcessEnv;
  /** The two servers' process ids, for withCpu. */
  pids(): { redis: number; postgres: number };
}

/**
 * A throw-away Redis and PostgreSQL in a temporary folder, stopped and
 * removed at teardown, and the service's environment pointing at them:
 * what every bench that runs the service starts from.
 */
export async function localStack(name: string, teardown: Teardown): Promise<LocalStack> {
  const dir = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  teardown.push(() => rmSync(dir, { recursive: true, force: true }));
  const local = await startLocalServices({ dir, ephemeral: true });
  teardown.push(() => local.stop());
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH, REDIS_URL: local.redisUrl, DATABASE_URL: local.databaseUrl,
    JWT_SECRET: randomBytes(48).toString('base64url'), HTTP_HOST: '127.0.0.1', HTTP_PORT: '0', LOG_LEVEL: 'warn',
  };
  const pids = (): { redis: number; postgres: number } => ({
    redis: Number(readFileSync(join(dir, 'redis', 'redis.pid'), 'utf8').trim()),
    postgres: Number(readFileSync(join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]),
  });
  return { dir, local, env, pids };
}
