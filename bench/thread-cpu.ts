import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Each thread's time on a CPU, from /proc/<pid>/task/<tid>/schedstat
 * (nanoseconds, Linux): which thread of which process a phase's CPU went to
 * (the service's main, actor, sink and dispatcher threads, V8's helper
 * threads, Redis, Postgres backends, a receiver). A tool for reading the
 * benchmarks (the per-thread tables in bench/results/webhooks.md and
 * radius-vs-freeradius.md), not a scenario.
 *
 *   node dist/bench/thread-cpu.js record <file> <seconds> [name ...]
 *       every 200 ms, a line per task of every process whose name (comm) is
 *       one of the names (default: node redis-server postgres): epoch
 *       seconds, pid, tid, ns on a CPU so far, and the thread's name (its
 *       comm: Redis's background threads have names of their own, every
 *       thread of a Node process reads `node`);
 *   node dist/bench/thread-cpu.js window <file> <from> <to> [ops]
 *       per thread, the time on a CPU between two epoch times (prefix a
 *       bench's output with `date +%s.%N` to find a phase's): percent of a
 *       core, and µs per operation when `ops` is given.
 */

const SAMPLE_MS = 200;

function record(file: string, seconds: number, names: string[]): void {
  writeFileSync(file, '');
  const until = Date.now() + seconds * 1000;
  const tick = (): void => {
    const now = (Date.now() / 1000).toFixed(3);
    const lines: string[] = [];
    for (const pid of readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      try {
        if (!names.includes(readFileSync(`/proc/${pid}/comm`, 'utf8').trim())) continue;
        for (const tid of readdirSync(`/proc/${pid}/task`)) {
          const task = `/proc/${pid}/task/${tid}`;
          lines.push(`${now} ${pid} ${tid} ${readFileSync(`${task}/schedstat`, 'utf8').split(' ')[0]} ${readFileSync(`${task}/comm`, 'utf8').trim()}`);
        }
      } catch { /* gone meanwhile */ }
    }
    appendFileSync(file, lines.join('\n') + '\n');
    if (Date.now() < until) setTimeout(tick, SAMPLE_MS);
  };
  tick();
}

function window(file: string, from: number, to: number, ops: number): void {
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  const names = new Map<string, string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const [t, pid, tid, ns, ...name] = line.split(' ');
    if (ns === undefined || Number(t) < from || Number(t) > to) continue;
    const key = `${pid} ${tid}`;
    if (!first.has(key)) first.set(key, Number(ns));
    last.set(key, Number(ns));
    names.set(key, name.join(' '));
  }
  const rows = [...last].map(([key, ns]) => [key, ns - first.get(key)!] as const).filter(([, d]) => d > 0).sort((a, b) => b[1] - a[1]);
  const seconds = to - from;
  for (const [key, d] of rows.slice(0, 25)) {
    const [pid, tid] = key.split(' ');
    const perOp = ops ? `  ${(d / 1e3 / ops).toFixed(1).padStart(8)} µs per op` : '';
    console.log(`${pid!.padStart(7)} ${tid!.padStart(7)} ${(names.get(key) ?? '').padEnd(15)} ${((d / 1e9 / seconds) * 100).toFixed(1).padStart(6)} % of a core${perOp}`);
  }
}

const [mode, file, a, b, ...rest] = process.argv.slice(2);
if (mode === 'record' && file && a) record(file, Number(a), b ? [b, ...rest] : ['node', 'redis-server', 'postgres']);
else if (mode === 'window' && file && a && b) window(file, Number(a), Number(b), Number(rest[0] ?? 0));
else {
  console.error('usage: thread-cpu.js record <file> <seconds> [name ...] | window <file> <from> <to> [ops]');
  process.exit(2);
}
