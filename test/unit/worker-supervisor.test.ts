import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerSupervisor, type Backoff } from '../../engine/workers/worker-supervisor.js';
import { until } from '../support/poll.js';

/**
 * WorkerSupervisor against a real worker thread: one that dies is started
 * again after a back-off that doubles while it keeps dying, resets once it
 * lived a healthy while, and stops for good on stop().
 */

const dir = mkdtempSync(join(tmpdir(), 'worker-supervisor-'));
// The tiny worker: says hello, then dies (throws) after `liveMs`, or stays up when liveMs < 0.
const file = join(dir, 'crasher.mjs');
writeFileSync(file, `
import { parentPort, workerData } from 'node:worker_threads';
parentPort.postMessage('up');
parentPort.on('message', (m) => { if (m === 'drain') parentPort.postMessage('drained'); });
if (workerData.liveMs >= 0) setTimeout(() => { throw new Error('boom'); }, workerData.liveMs);
else setInterval(() => undefined, 1000);
`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A logger whose restart lines the test reads back: each restart logs the delay it chose. */
function capture(): { log: Logger; delays: number[]; errors: string[] } {
  const delays: number[] = [];
  const errors: string[] = [];
  const log = pino({ level: 'warn' }, {
    write(line: string) {
      const o = JSON.parse(line) as { delayMs?: number; err?: { message?: string } };
      if (typeof o.delayMs === 'number') delays.push(o.delayMs);
      if (o.err?.message) errors.push(o.err.message);
    },
  });
  return { log, delays, errors };
}

function supervise(liveMs: number, backoff: Backoff) {
  const c = capture();
  const ups: number[] = [];
  const sup = new WorkerSupervisor({
    name: 'test worker', file, workerData: { liveMs }, backoff, log: c.log,
    onMessage: (m) => { if (m === 'up') ups.push(Date.now()); },
  });
  return { sup, ups, ...c };
}

describe('WorkerSupervisor', () => {
  it('restarts a worker that keeps dying with a doubling delay, bounded, and records its error', async () => {
    const { sup, ups, delays, errors } = supervise(0, { firstMs: 40, maxMs: 200, healthyMs: 60_000 });
    sup.start();
    await until(() => ups.length >= 6);
    await sup.stop();
    expect(delays.slice(0, 5)).toEqual([40, 80, 160, 200, 200]);
    // The waits really happened: each start came at least its delay after the one before.
    for (let i = 1; i < 5; i++) expect(ups[i]! - ups[i - 1]!).toBeGreaterThanOrEqual(delays[i - 1]!);
    expect(errors).toContain('boom');
    const stats = sup.stats;
    expect(stats.restarts).toBeGreaterThanOrEqual(5);
    expect(stats.lastError).toBe('boom');
    expect(stats.running).toBe(false);
  });

  it('goes back to the first delay after a worker lived a healthy while', async () => {
    const { sup, delays } = supervise(150, { firstMs: 20, maxMs: 5_000, healthyMs: 100 });
    sup.start();
    await until(() => delays.length >= 4);
    await sup.stop();
    expect(delays.slice(0, 4)).toEqual([20, 20, 20, 20]);
  });

  it('starts again a worker killed as a crash would, and after stop() starts nothing', async () => {
    const { sup, ups, delays } = supervise(-1, { firstMs: 10, maxMs: 10, healthyMs: 0 });
    sup.start();
    await until(() => ups.length === 1);
    const first = sup.worker;
    await sup.kill();
    await until(() => ups.length === 2);
    expect(sup.worker).not.toBe(first);
    expect(sup.stats).toMatchObject({ running: true, restarts: 1 });

    await sup.stop();
    expect(sup.worker).toBeNull();
    sup.start();
    await new Promise((r) => setTimeout(r, 200));
    expect(ups).toHaveLength(2);
    expect(delays).toHaveLength(1);
    expect(sup.stats).toMatchObject({ running: false, restarts: 1 });
  });

  it('lets a stopping worker drain before it ends it', async () => {
    const { sup, ups } = supervise(-1, { firstMs: 10, maxMs: 10, healthyMs: 0 });
    sup.start();
    await until(() => ups.length === 1);
    let drained = false;
    await sup.stop((worker) => new Promise<void>((resolve) => {
      worker.on('message', (m) => { if (m === 'drained') { drained = true; resolve(); } });
      worker.postMessage('drain');
    }));
    expect(drained).toBe(true);
    expect(sup.stats.running).toBe(false);
  });

  it('refuses a back-off that makes no sense', () => {
    expect(() => new WorkerSupervisor({ name: 'x', file, backoff: { firstMs: 100, maxMs: 10, healthyMs: 0 }, log: capture().log }))
      .toThrow(/firstMs <= maxMs/);
  });
});
