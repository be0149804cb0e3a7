import { readFileSync } from 'node:fs';

/**
 * Where a thread's time went, from a V8 .cpuprofile (node --cpu-prof), by
 * area of this service: the RADIUS layer, the hop to the actor threads,
 * ioredis, UDP sends, and so on. A tool for reading the profiles the
 * benchmarks write (BENCH_CPU_PROF), not a scenario.
 *
 *   node dist/bench/cpu-profile-summary.js <file.cpuprofile> [--from us --to us] [--requests n] [--top 15]
 *
 * --from/--to cut a window in CLOCK_MONOTONIC microseconds, the clock of the
 * profile's own timestamps (radius-vs-freeradius prints each phase's window
 * when profiling); --requests turns the figures into microseconds per request.
 *
 * A native frame (no script URL: a syscall wrapper, a Buffer builtin) counts
 * for the area of the JavaScript that called it, so `socket.send`'s syscall is
 * "udp send" and msgpackr's string writes are "thread hop"; MessagePort's
 * native postMessage is the hop wherever it is called from.
 */

interface CallFrame { functionName: string; url: string; lineNumber: number }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

const AREAS: [RegExp, string][] = [
  [/\/radius\//, 'radius: codec, crypto, server'],
  [/msgpackr|node:internal\/worker|messageport|event_target/, 'thread hop: msgpackr + MessagePort'],
  [/ioredis|redis-parser|denque|standard-as-callback|cluster-key-slot/, 'ioredis'],
  [/node:dgram|node:dns|node:internal\/dgram/, 'udp send/receive (dgram)'],
  [/\/engine\/sessions\//, 'engine: actors, gateway, pool'],
  [/\/engine\//, 'engine: other'],
  [/\/http\/|uWebSockets/, 'http'],
  [/node:net|node:internal\/(stream|streams|net)/, 'tcp sockets (Redis, Postgres)'],
  [/node:internal\/(process\/task_queues|process\/promises|timers)|node:timers/, 'ticks, promises, timers'],
];

function area(url: string): string {
  for (const [re, name] of AREAS) if (re.test(url)) return name;
  return url.startsWith('node:') ? 'node: other' : url ? 'other JavaScript' : '';
}

function main(): void {
  const argv = process.argv.slice(2);
  const file = argv[0];
  if (!file || file.startsWith('--')) {
    process.stderr.write('usage: cpu-profile-summary <file.cpuprofile> [--from us --to us] [--requests n] [--top n]\n');
    process.exit(2);
  }
  const opt = (k: string, d: number): number => {
    const i = argv.indexOf(`--${k}`);
    return i > 0 ? Number(argv[i + 1]) : d;
  };
  const from = opt('from', 0), to = opt('to', Infinity), requests = opt('requests', 0), top = opt('top', 15);
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

  // The area of a node: its own URL's, else (native) its nearest caller's.
  const areaOf = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = areaOf.get(id);
    if (known !== undefined) return known;
    const cf = byId.get(id)!.callFrame;
    let a: string;
    if (cf.functionName === '(idle)') a = 'idle';
    else if (cf.functionName === '(garbage collector)') a = 'garbage collector';
    else if (cf.functionName === '(program)') a = '(program): V8/libuv outside JavaScript';
    else if (!cf.url && cf.functionName === 'postMessage') a = 'thread hop: msgpackr + MessagePort';
    else a = area(cf.url) || (parent.has(id) ? resolve(parent.get(id)!) : 'native');
    areaOf.set(id, a);
    return a;
  };

  const perArea = new Map<string, number>();
  const perFunction = new Map<string, number>();
  let t = p.startTime, total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (t < from || t >= to) continue;
    const id = p.samples[i]!;
    total += dt;
    const a = resolve(id);
    perArea.set(a, (perArea.get(a) ?? 0) + dt);
    const cf = byId.get(id)!.callFrame;
    const fn = `${cf.functionName || '(anonymous)'} ${cf.url.replace(/^file:\/\/.*?\/(dist|node_modules)\//, '$1/')}:${cf.lineNumber + 1}`;
    perFunction.set(fn, (perFunction.get(fn) ?? 0) + dt);
  }
  if (total === 0) {
    process.stdout.write(`${file}: no samples in the window\n`);
    return;
  }
  const busy = total - (perArea.get('idle') ?? 0);
  const line = (name: string, us: number): string => `${((100 * us) / total).toFixed(1).padStart(6)}%` +
    (requests > 0 ? `${(us / requests).toFixed(1).padStart(8)} us/req` : '') + `  ${name}`;
  const out = [`${file}: ${(total / 1e6).toFixed(2)} s sampled, busy ${((100 * busy) / total).toFixed(1)}%` +
    (requests > 0 ? `, ${requests} requests: ${(busy / requests).toFixed(1)} us busy per request` : ''), '  by area:'];
  for (const [a, us] of [...perArea].sort((x, y) => y[1] - x[1])) out.push('  ' + line(a, us));
  out.push(`  top ${top} functions (self time):`);
  for (const [f, us] of [...perFunction].sort((x, y) => y[1] - x[1]).slice(0, top)) out.push('  ' + line(f, us));
  process.stdout.write(out.join('\n') + '\n');
}

main();
