import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLogger } from '../../engine/index.js';
import { EventFanout } from '../../engine/events/event-fanout.js';
import { EventLog } from '../../engine/events/event-log.js';
import type { DomainEvent } from '../../engine/events/types.js';
import { freePort } from '../../scripts/local-services.js';
import { until } from '../support/poll.js';

/**
 * The fan-out's reader against a Redis of its own (this file kills it; the
 * shared one serves other files): one blocking read that follows the tenant
 * set at once, and resumes after a restarted server from the last id seen.
 */
describe('EventFanout', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-fanout-'));
  let port = 0;
  let server: ChildProcess | null = null;
  let url = '';
  let main: Redis;
  let writer: Redis;
  let log: EventLog;
  const fanouts: EventFanout[] = [];

  const startRedis = async (): Promise<void> => {
    // appendfsync always: what was written before the kill is there after it, so resuming is exact.
    server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', ''], { stdio: 'ignore' });
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    await until(async () => (await probe.connect().then(() => probe.ping(), () => '')) === 'PONG', { timeoutMs: 10_000, what: 'redis-server up' });
    probe.disconnect();
  };
  const newFanout = (): EventFanout => {
    const f = new EventFanout(url, main, createLogger('silent'));
    fanouts.push(f);
    return f;
  };
  const tenant = (): string => `fan${Math.random().toString(36).slice(2, 10)}`;

  beforeAll(async () => {
    port = await freePort();
    url = `redis://127.0.0.1:${port}`;
    await startRedis();
    main = new Redis(url, { maxRetriesPerRequest: null });
    writer = new Redis(url, { maxRetriesPerRequest: null });
    for (const r of [main, writer]) r.on('error', () => undefined);
    log = new EventLog(writer);
  });
  afterAll(async () => {
    for (const f of fanouts) await f.close();
    main?.disconnect();
    writer?.disconnect();
    server?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('a listener sees what is written after it subscribed, in order, and nothing from before', async () => {
    const fanout = newFanout();
    const t = tenant();
    await log.append(t, 'incident.raised', null, { n: 0 });
    const got: DomainEvent[] = [];
    fanout.subscribe(t, (e) => got.push(e));
    await fanout.ready(t);
    const ids = [await log.append(t, 'session.start', 'hs_1', { n: 1 }), await log.append(t, 'session.end', null, { n: 2 })];
    await until(() => got.length === 2, { what: 'two events', seen: () => got });
    expect(got.map((e) => e.id)).toEqual(ids);
    expect(got[0]).toMatchObject({ tenantId: t, type: 'session.start', siteId: 'hs_1', data: { n: 1 } });
    expect(got[1]).toMatchObject({ type: 'session.end', siteId: null, data: { n: 2 } });
  });

  test('a tenant added while the reader blocks is read at once, not when the block times out', async () => {
    const fanout = newFanout();
    const [a, b] = [tenant(), tenant()];
    fanout.subscribe(a, () => undefined);
    await fanout.ready(a);
    await new Promise((r) => setTimeout(r, 100)); // the reader is blocked on a alone now
    const got: DomainEvent[] = [];
    fanout.subscribe(b, (e) => got.push(e));
    await fanout.ready(b);
    const at = Date.now();
    await log.append(b, 'incident.raised', null, {});
    await until(() => got.length === 1, { timeoutMs: 10_000, what: 'the event of the added tenant' });
    // The block lasts 5 s; only CLIENT UNBLOCK makes this quick.
    expect(Date.now() - at).toBeLessThan(1000);
  });

  test('a listener that leaves gets nothing more, and the tenant is no longer read', async () => {
    const fanout = newFanout();
    const t = tenant();
    const got: DomainEvent[] = [];
    const stop = fanout.subscribe(t, (e) => got.push(e));
    await fanout.ready(t);
    await log.append(t, 'audit.written', null, {});
    await until(() => got.length === 1, { what: 'the first event' });
    stop();
    expect(fanout.tenantCount).toBe(0);
    await log.append(t, 'audit.written', null, {});
    await new Promise((r) => setTimeout(r, 300));
    expect(got).toHaveLength(1);
  });

  test('after Redis is killed and restarted the reader resumes from the last id it delivered: nothing lost, nothing twice', async () => {
    const fanout = newFanout();
    const t = tenant();
    const got: DomainEvent[] = [];
    fanout.subscribe(t, (e) => got.push(e));
    await fanout.ready(t);
    const ids = [await log.append(t, 'session.start', null, {}), await log.append(t, 'session.start', null, {})];
    await until(() => got.length === 2, { what: 'events before the restart' });

    server!.kill('SIGKILL');
    await new Promise<void>((r) => server!.once('exit', () => r()));
    await startRedis();
    // Written at once, most likely while the reader is still reconnecting.
    ids.push(await log.append(t, 'session.end', null, {}), await log.append(t, 'session.extend', null, {}));
    await until(() => got.length >= 4, { timeoutMs: 15_000, what: 'events after the restart', seen: () => got.map((e) => e.id) });
    await new Promise((r) => setTimeout(r, 200));
    expect(got.map((e) => e.id)).toEqual(ids);
    expect(got.map((e) => e.type)).toEqual(['session.start', 'session.start', 'session.end', 'session.extend']);
  });
});
