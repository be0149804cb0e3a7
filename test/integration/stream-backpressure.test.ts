import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect } from 'vitest';
import { DEFAULT_MODULES, projectPath } from '../../engine/index.js';
import { call, newTenant, type Running, serviceTest, type Tenant, until } from '../support/fixture.js';

const MAX_BUFFERED = 2048;
const MAX_BACKED_UP_MS = 2000;
/** Events appended at a time while filling a slow client's socket (see the stall test). */
const FILL_BATCH = 6;

// A small bound and no coalescing, so that a client that reads nothing falls behind within a second.
const test = serviceTest({
  // 100 clients a wave on one credential: above the stream cap's default of 20.
  STREAM_MAX_PER_PRINCIPAL: '1000',
  STREAM_MAX_BUFFERED_BYTES: String(MAX_BUFFERED), STREAM_COALESCE_MS: '0', STREAM_MAX_BACKED_UP_MS: String(MAX_BACKED_UP_MS),
});

/** Non-reading stream clients in a python3 process (test/support/slow-stream-clients.py), driven line by line. */
function slowClients(base: string, path: string): { run(cmd: string): Promise<string>; stop(): void } {
  const url = new URL(base);
  const child: ChildProcessWithoutNullStreams = spawn('python3', [projectPath('test', 'support', 'slow-stream-clients.py'), url.hostname, url.port, path]);
  const lines = createInterface({ input: child.stdout });
  const answers: ((l: string) => void)[] = [];
  lines.on('line', (l) => answers.shift()?.(l));
  child.stderr.on('data', (d: Buffer) => process.stderr.write(d));
  return {
    run: (cmd) => new Promise((resolve) => {
      answers.push(resolve);
      child.stdin.write(`${cmd}\n`);
    }),
    stop: () => { child.stdin.end(); child.kill(); },
  };
}

/**
 * A stream client that reads nothing costs the server a bounded number of
 * bytes and is then dropped; the server's memory does not grow with the
 * number of such clients that come and go.
 */
describe('stream clients that do not read', () => {
  let svc: Running;
  let t: Tenant;
  let path = '';
  test.beforeAll(async ({ svc: s }) => {
    svc = s;
    t = await newTenant(svc.service, 'Slow Readers', [...DEFAULT_MODULES, 'dashboard']);
    const r = await call(svc.base, 'POST', '/api/v1/tenants/me/stream-token', { auth: t.apiKey });
    path = `/api/v1/tenants/me/stream/live-sessions?token=${r.body.token}`;
  });

  const gauge = async (name: string): Promise<number> => Number(new RegExp(`^guestwifi_${name} (\\d+)$`, 'm').exec(await svc.service.engine.metrics.render())?.[1] ?? NaN);
  const dropped = (reason: string): number => svc.service.engine.metrics.value('stream_clients_dropped_total', reason);
  /** Appends events, `batch` at a time, until `done`; bounded by until()'s deadline. */
  const pumpUntil = async (done: () => boolean, what: string, batch = 20, timeoutMs = 20_000): Promise<void> => {
    const engine = svc.service.engine;
    await until(async () => {
      if (done()) return true;
      await Promise.all(Array.from({ length: batch }, () => engine.events.append(t.tenantId, 'session.start', t.hotspotId, {})));
      return done();
    }, { timeoutMs, intervalMs: 1, what, seen: async () => ({ clients: await gauge('stream_clients'), backedUp: await gauge('stream_clients_backed_up'), buffer: dropped('buffer'), stalled: dropped('stalled') }) });
  };

  test('is dropped once its unsent bytes pass the bound, and 1,000 of them coming and going leave the memory flat', async () => {
    const clients = slowClients(svc.base, path);
    const engine = svc.service.engine;
    const WAVES = 10;
    const PER_WAVE = 100;
    const droppedBefore = dropped('buffer') + dropped('stalled');
    let rssAfterWarmUp = 0;
    try {
      for (let wave = 1; wave <= WAVES; wave++) {
        expect(await clients.run(`open ${PER_WAVE}`)).toBe(`opened ${PER_WAVE}`);
        await until(async () => await gauge('stream_clients') === PER_WAVE, { what: `${PER_WAVE} clients connected`, seen: () => gauge('stream_clients') });
        await pumpUntil(() => dropped('buffer') + dropped('stalled') - droppedBefore === wave * PER_WAVE, `wave ${wave} dropped`);
        expect(await gauge('stream_clients')).toBe(0);
        expect(await clients.run('close')).toBe(`closed ${PER_WAVE}`);
        await until(() => engine.fanout.tenantCount === 0 && engine.streams.hubCount === 0, { what: 'the tenant no longer read' });
        if (wave === 2) rssAfterWarmUp = process.memoryUsage().rss;
      }
    } finally {
      clients.stop();
    }
    // Most went for the byte bound (the pump outruns the stall timer); none stayed.
    expect(dropped('buffer')).toBeGreaterThan(WAVES * PER_WAVE / 2);
    expect(await gauge('stream_clients_backed_up')).toBe(0);
    const growth = process.memoryUsage().rss - rssAfterWarmUp;
    expect(growth, `RSS grew ${Math.round(growth / 1e6)} MB over ${(WAVES - 2) * PER_WAVE} clients`).toBeLessThan(40e6);
  });

  test('is dropped when it stays backed up too long, though under the byte bound', async () => {
    const clients = slowClients(svc.base, path);
    const stalledBefore = dropped('stalled');
    const bufferBefore = dropped('buffer');
    try {
      expect(await clients.run('open 1')).toBe('opened 1');
      await until(async () => await gauge('stream_clients') === 1, { what: 'the client connected' });
      // Fill its socket until a write is refused, then add nothing: it then owes far less than the
      // bound. The kernel may grow the socket's send buffer after a refusal, and the client then
      // drains (uWS holds nothing for it): fill again until it stays refused.
      const engine = svc.service.engine;
      const deadline = Date.now() + 20_000;
      let backedUpAt = 0;
      while (dropped('stalled') === stalledBefore && await gauge('stream_clients') === 1 && Date.now() < deadline) {
        if (await gauge('stream_clients_backed_up') === 0) {
          backedUpAt = 0;
          // A few events at a time, each batch delivered before the gauge is read again: the reader
          // takes what accumulated every 20 ms, and a burst landing on a refused socket must stay well
          // under the byte bound (FILL_BATCH frames of about 120 bytes: under half of it). The fill is
          // paced by the reader's tick, so it takes FILL_BATCH times fewer ticks than a pair at a time
          // (which took 5-15 s of the 20 s deadline on a quiet machine, and ran out on a busy one).
          const delivered = engine.fanout.delivered;
          await Promise.all(Array.from({ length: FILL_BATCH }, () => engine.events.append(t.tenantId, 'session.start', t.hotspotId, {})));
          await until(() => engine.fanout.delivered >= delivered + FILL_BATCH, { intervalMs: 1, what: 'the batch delivered' });
          continue;
        }
        if (backedUpAt === 0) backedUpAt = Date.now();
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(dropped('stalled'), 'dropped as stalled').toBe(stalledBefore + 1);
      expect(Date.now() - backedUpAt).toBeGreaterThanOrEqual(MAX_BACKED_UP_MS - 300);
      expect(dropped('buffer')).toBe(bufferBefore);
      expect(await gauge('stream_clients')).toBe(0);
    } finally {
      clients.stop();
    }
  });
});
