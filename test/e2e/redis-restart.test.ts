import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { e2eTest, keys, until, type ServiceProcess } from './own-stack.js';

const test = e2eTest('e2e-redis-restart');

/**
 * Invariant 1 across a Redis crash: a voucher is never used more than
 * max_uses times. Under `appendfsync everysec` a crashed Redis comes back
 * without its last writes: here, a use counter two uses behind Postgres (the
 * sink had copied those uses) and a block gone, while the tenant's loaded
 * marker, written long before, is still there. The lost second is made
 * exact by starting the killed server on a copy of its AOF taken before
 * those writes. Its own Redis and Postgres: the shared ones serve other files.
 */
describe('Redis killed and started on an AOF that lacks its last writes', () => {
  let svc: ServiceProcess | undefined;

  const runId = async (redis: Redis): Promise<string> => /^run_id:([0-9a-f]{40})\r?$/m.exec(await redis.info('server'))![1]!;

  test('loads the tenant again from Postgres: exactly max_uses in all, and the block holds', async ({ stack, redis, db, spawn }) => {
    svc = await spawn();
    const base = svc.base;
    const { tenant_id: tenantId, api_key: apiKey } = await stack.cli(['tenant', 'create', '--name', 'Restart Venue', '--json']);
    const post = async (path: string, body: unknown, key?: string): Promise<{ status: number; body: any }> => {
      const res = await fetch(base + path, {
        method: 'POST', body: JSON.stringify(body),
        headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
      });
      return { status: res.status, body: await res.json() };
    };
    const hotspot = (await post('/v1/hotspots', { name: 'Lobby', timezone: 'UTC' }, apiKey)).body;
    const five = (await post('/v1/vouchers', { code: 'RESTART-5', max_uses: 5 }, apiKey)).body;
    expect((await post('/v1/vouchers', { code: 'RESTART-ANY', max_uses: null }, apiKey)).status).toBe(201);
    let n = 0;
    const verify = (code: string, mac = `02:AC:00:00:00:${(++n).toString(16).padStart(2, '0').toUpperCase()}`) =>
      post(`/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hotspot.id}`, { code, mac });
    const pgUses = async (): Promise<number> =>
      (await db.query('SELECT current_uses FROM vouchers WHERE id = $1', [five.id])).rows[0].current_uses;

    expect((await verify('RESTART-5')).body.uses_left).toBe(4);
    const before = await runId(redis);
    expect(await redis.get(keys.loaded(tenantId))).toBe(before);
    await until(async () => (await pgUses()) === 1, { timeoutMs: 10_000, what: 'the first use in Postgres' });

    // The AOF as it stands now is what the server will come back with.
    const redisDir = join(stack.dir, 'redis');
    const aof = join(redisDir, 'appendonlydir');
    const snapshot = join(stack.dir, 'aof-before');
    cpSync(aof, snapshot, { recursive: true });

    // The writes the crash will take: two uses (copied to Postgres before the crash) and a block.
    expect((await verify('RESTART-5')).body.uses_left).toBe(3);
    expect((await verify('RESTART-5')).body.uses_left).toBe(2);
    const blockedMac = '02:AC:00:00:0B:01';
    const s = await verify('RESTART-ANY', blockedMac);
    expect(s.status).toBe(200);
    expect((await post(`/v1/sessions/${s.body.session_id}/block`, { duration: 'permanent' }, apiKey)).status).toBe(200);
    await until(async () => (await pgUses()) === 3, { timeoutMs: 10_000, what: 'three uses in Postgres' });
    // And acknowledged: the sink deletes a batch's entries only after its own raise of the counters, so no raise
    // of these uses can reach the restarted server and hide the counter it lost.
    await until(async () => (await redis.xlen(keys.outbox(tenantId))) === 0, { timeoutMs: 10_000, what: 'the outbox drained' });

    // kill -9, then start on the older AOF with the options scripts/local-services.ts uses.
    const pid = Number(readFileSync(join(redisDir, 'redis.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    await until(async () => { try { process.kill(pid, 0); return false; } catch { return true; } }, { timeoutMs: 10_000, what: 'redis-server gone' });
    rmSync(aof, { recursive: true, force: true });
    cpSync(snapshot, aof, { recursive: true });
    const started = spawnSync('redis-server', [
      '--port', String(stack.local.redisPort), '--bind', '127.0.0.1', '--dir', redisDir,
      '--appendonly', 'yes', '--appendfsync', 'everysec', '--save', '',
      '--daemonize', 'yes', '--pidfile', join(redisDir, 'redis.pid'), '--logfile', join(redisDir, 'redis.log'),
    ], { stdio: 'inherit' });
    expect(started.status).toBe(0);
    await until(async () => (await redis.ping().catch(() => '')) === 'PONG', { timeoutMs: 20_000, what: 'redis-server back' });

    // What the restarted server holds: the counter behind, no block, the old marker, another run_id.
    const after = await runId(redis);
    expect(after).not.toBe(before);
    expect(await redis.hget(keys.voucher(tenantId, 'RESTART-5'), 'uses')).toBe('1');
    expect(await redis.get(keys.loaded(tenantId))).toBe(before);
    expect(await redis.exists(keys.block(tenantId, blockedMac))).toBe(0);
    await until(async () => (await fetch(`${base}/readyz`)).status === 200, { timeoutMs: 20_000, what: 'the service reaches Redis again' });

    const refused = await verify('RESTART-5', blockedMac);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('device_blocked');
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await verify('RESTART-5'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 409, 409, 409]);
    expect(answers.slice(0, 2).map((a) => a.body.uses_left)).toEqual([1, 0]);
    for (const a of answers.slice(2)) expect(a.body).toEqual({ error: 'voucher_exhausted', max_uses: 5, current_uses: 5 });
    expect(await redis.get(keys.loaded(tenantId))).toBe(after);
    await until(async () => (await pgUses()) === 5, { timeoutMs: 10_000, what: 'five uses in Postgres' });
    // And no more arrive later.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await pgUses()).toBe(5);
  });
});
