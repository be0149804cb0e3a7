import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { projectPath } from '../engine/index.js';
import { cpuTicks, machineTicks, threadTicks } from './bench-kit.js';

/**
 * The load tools radius-vs-freeradius.ts drives, and what it reads of a
 * server while they run: radius-load (ours, a child process) and radclient
 * (FreeRADIUS's, C), each bounded in time, and the CPU and memory of the
 * server under test. One place for how a tool is started, stopped and read,
 * so the bench file keeps only its scenario.
 */

/** Where the tools aim and how hard: the bench's own settings. */
export interface ToolSettings {
  host: string;
  secret: string;
  /** radius-load's window, and radclient's -p (split between its processes). */
  concurrency: number;
  /** radius-load's source ports (undefined: one). */
  sources: number | undefined;
  /** A radclient run slower than this many seconds is stopped (broken, not slow). */
  radclientLimitS: number;
}

/** What one tool run answered. */
export interface ToolFigures { sent: number; answered: number; accepts: number; rejects: number; lost: number; bad: number; seconds: number; p50: number; p99: number }

/**
 * Percent of one core over the phase: the server (all its threads), its main
 * thread alone (the engine's UDP, codec and hop to the actors run there; the
 * rest is actor threads and V8's GC helpers), Redis, everything else (mostly
 * the load tool and other jobs on the machine); and the CPU time itself (µs).
 */
export interface Cpu { server: number; main: number; redis: number; rest: number; idle: number; serverUs: number; redisUs: number }

export class RadiusTools {
  /** Tools still running: killed by stop(), whatever ends the bench. */
  private readonly running = new Set<ChildProcess>();

  constructor(private readonly s: ToolSettings) {}

  /** Kills every tool still running. */
  stop(): void {
    for (const t of this.running) t.kill('SIGKILL');
  }

  /** Runs a program to its end, or kills it after `limitS` seconds (a hung tool must not hang the bench); its output, exit code and wall time. */
  run(cmd: string, args: string[], limitS: number): Promise<{ out: string; code: number | null; seconds: number }> {
    const at = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.running.add(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), limitS * 1000);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr!.on('data', (d: Buffer) => { out += d.toString(); });
    return new Promise((resolve) => child.once('close', (code, signal) => {
      clearTimeout(timer);
      this.running.delete(child);
      if (signal === 'SIGKILL') out += `\n${cmd} killed after ${limitS} s`;
      resolve({ out, code, seconds: (performance.now() - at) / 1000 });
    }));
  }

  /** One run of bench/radius-load.ts (a child: it never shares a thread with a server). */
  async radiusLoad(ports: { auth: number; acct: number }, macFile: string, seconds: number, acct: boolean, requests = 5_000_000, sources = this.s.sources): Promise<ToolFigures> {
    const r = await this.run(process.execPath, [projectPath('dist', 'bench', 'radius-load.js'), '--host', this.s.host, '--port', String(ports.auth),
      '--acct-port', String(ports.acct), '--secret', this.s.secret, '--mac-file', macFile, '--concurrency', String(this.s.concurrency),
      '--duration', String(seconds), '--acct-ratio', acct ? '1' : '0', '--requests', String(requests),
      ...(sources === undefined ? [] : ['--sources', String(sources)])], seconds + 30);
    const line = r.out.split('\n').find((l) => l.startsWith('radius-load '));
    if (r.code !== 0 || !line) throw new Error(`radius-load failed (exit ${r.code}): ${r.out.slice(-500)}`);
    const f = (k: string): number => Number(new RegExp(`(?:^| )${k.replace('/', '\\/')}=([\\d.]+)`).exec(line)?.[1] ?? NaN);
    return {
      sent: f('sent'), answered: f('answered'), accepts: acct ? f('acct') : f('accept'), rejects: f('reject'), lost: f('lost'), bad: f('bad'),
      seconds: f('duration'), p50: f('p50'), p99: f('p99'),
    };
  }

  /**
   * One radclient run per file, side by side (one source port each): `count` times each packet of its
   * file, the window split between them (`-p`); their own summaries (-s), summed. The phase lasts
   * until the last one ends.
   */
  async radclient(port: number, files: string[], count: number): Promise<ToolFigures> {
    const window = Math.max(1, Math.floor(this.s.concurrency / files.length));
    const at = performance.now();
    const runs = await Promise.all(files.map((file) => this.run('radclient',
      ['-q', '-s', '-r', '1', '-t', '2', '-p', String(window), '-c', String(count), '-f', file, `${this.s.host}:${port}`, 'auth', this.s.secret], this.s.radclientLimitS)));
    let accepts = 0, rejects = 0, lost = 0;
    for (const r of runs) {
      const f = (k: string): number => Number(new RegExp(`${k}\\s*:\\s*(\\d+)`).exec(r.out)?.[1] ?? NaN);
      if (!Number.isFinite(f('Accepted'))) throw new Error(`radclient gave no summary (exit ${r.code}): ${r.out.slice(-500)}`);
      accepts += f('Accepted'); rejects += f('Rejected'); lost += f('Lost');
    }
    return { sent: accepts + rejects + lost, answered: accepts + rejects, accepts, rejects, lost, bad: 0, seconds: (performance.now() - at) / 1000, p50: NaN, p99: NaN };
  }

  /** Whether a server accepts the first MAC of `file` now (one radclient request). */
  async accepts(port: number, file: string): Promise<{ yes: boolean; out: string }> {
    const r = await this.run('radclient', ['-r', '1', '-t', '0.5', '-f', file, `${this.s.host}:${port}`, 'auth', this.s.secret], 5);
    return { yes: r.out.includes('Received Access-Accept'), out: r.out };
  }
}

/** A radclient packet file: one Access-Request per MAC. */
export function writeRadclientFile(path: string, macs: string[]): void {
  // Message-Authenticator = 0x00: radclient computes the real one (RFC 3579 §3.2), as a NAS must for our client.
  writeFileSync(path, macs.map((m) => `User-Name = "${m}"\nUser-Password = "guest"\nCalling-Station-Id = "${m}"\n` +
    `Called-Station-Id = "00-11-22-33-44-55:Bench"\nNAS-Port-Id = "bench0"\nMessage-Authenticator = 0x00\n`).join('\n'));
}

/** Runs `fn`, returning its result and the CPU used meanwhile in percent of one core (ticks are 1/100 s). */
export async function withCpu<T>(server: number, redis: number, fn: () => Promise<T>): Promise<[T, Cpu]> {
  const s0 = cpuTicks(server), m0 = threadTicks(server, server), r0 = cpuTicks(redis), [i0, t0] = machineTicks(), at = Date.now();
  const out = await fn();
  const secs = (Date.now() - at) / 1000, [i1, t1] = machineTicks();
  const sTicks = cpuTicks(server) - s0, rTicks = cpuTicks(redis) - r0;
  const s = Math.round(sTicks / secs), r = Math.round(rTicks / secs);
  const busy = (t1 - t0 - (i1 - i0)) / secs;
  return [out, {
    server: s, main: Math.round((threadTicks(server, server) - m0) / secs), redis: r, rest: Math.max(0, Math.round(busy - s - r)), idle: Math.round((100 * (i1 - i0)) / Math.max(1, t1 - t0)),
    serverUs: sTicks * 1e4, redisUs: rTicks * 1e4,
  }];
}

/** A process's resident memory, MB. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}
