import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../engine/index.js';
import { keys } from '../../engine/redis/keys.js';
import { groupBySlot, isClusterUrl, parseClusterUrl, slotOf } from '../../engine/redis/redis-client.js';
import { projectPath } from '../../engine/util/project-root.js';
import type { Redis } from 'ioredis';

/** Keys that belong to no tenant: their own slot, never passed to a script with a tenant's keys (keys.ts says so). */
const UNTENANTED = new Set(['otpFallbackTenants', 'tenantScan']);

/**
 * The static half of "every script single-slot on a Redis Cluster": a
 * script's keys all come from keys.ts (house rule), and every builder there
 * puts the tenant's hash tag first, so all keys of a tenant share one slot
 * and two tenants' keys need not. The cluster test runs the scripts.
 */
describe('Redis keys on a cluster', () => {
  it('every tenant key starts with the tenant hash tag, so all of one tenant\'s keys share its slot', () => {
    const builders = Object.entries(keys).filter(([name]) => !UNTENANTED.has(name));
    expect(builders.length).toBeGreaterThan(50);
    for (const tenant of ['acme', 'ten_01HZX', 'b{race}s']) {
      const slot = slotOf(`{t:${tenant}}`);
      for (const [name, build] of builders) {
        const args = Array.from({ length: Math.max(0, build.length - 1) }, (_, i) => (i % 2 ? 7 : `arg${i}`));
        const key = (build as (...a: unknown[]) => string)(tenant, ...args);
        expect(key.startsWith(`{t:${tenant}}`), `${name}: ${key}`).toBe(true);
        expect(slotOf(key), name).toBe(slot);
      }
    }
    // The tag is the tenant's, not a constant: tenants spread over the slots (so over the masters).
    const slots = new Set(Array.from({ length: 50 }, (_, i) => slotOf(keys.outbox(`tenant-${i}`))));
    expect(slots.size).toBeGreaterThan(45);
  });

  it('no Lua script builds a key itself: no hash tag in a script\'s code (its header may show the key shapes)', () => {
    const dir = projectPath('engine', 'redis', 'lua');
    const files = [...readdirSync(dir).filter((f) => f.endsWith('.lua')), ...readdirSync(`${dir}/includes`).map((f) => `includes/${f}`)];
    expect(files.length).toBeGreaterThan(30);
    const code = (lua: string): string => lua.replace(/--\[\[[\s\S]*?\]\]/g, '').replace(/--.*$/gm, '');
    for (const f of files) expect(code(readFileSync(`${dir}/${f}`, 'utf8')), f).not.toMatch(/\{t:|\{svc\}/);
  });

  it('groups work that spans tenants by slot on a cluster, and not at all on one server', () => {
    const items = ['a', 'b', 'a', 'c', 'b'].map((t, i) => ({ t, i }));
    const cluster = { isCluster: true } as unknown as Redis;
    const single = { isCluster: false } as unknown as Redis;
    const groups = groupBySlot(cluster, items, (x) => keys.outbox(x.t));
    expect(groups.map((g) => g.map((x) => x.i))).toEqual([[0, 2], [1, 4], [3]]);
    expect(groupBySlot(single, items, (x) => keys.outbox(x.t))).toEqual([items]);
    expect(groupBySlot(single, [], (x: string) => x)).toEqual([]);
  });
});

describe('REDIS_URL naming a cluster', () => {
  const env = { DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32) };

  it('reads redis+cluster://[user:password@]host:port,host:port', () => {
    expect(isClusterUrl('redis+cluster://10.0.0.1:7000')).toBe(true);
    expect(isClusterUrl('redis://10.0.0.1:7000')).toBe(false);
    expect(parseClusterUrl('redis+cluster://10.0.0.1:7000,10.0.0.2:7001,[::1]:7002')).toEqual({
      nodes: [{ host: '10.0.0.1', port: 7000 }, { host: '10.0.0.2', port: 7001 }, { host: '::1', port: 7002 }], tls: false,
    });
    expect(parseClusterUrl('rediss+cluster://app:p%40ss@redis-a:6379')).toEqual({ nodes: [{ host: 'redis-a', port: 6379 }], username: 'app', password: 'p@ss', tls: true });
    expect(parseClusterUrl('redis+cluster://:secret@redis-a:6379/')).toMatchObject({ password: 'secret' });
    expect(loadConfig({ ...env, REDIS_URL: 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001' }).redisUrl).toBe('redis+cluster://127.0.0.1:7000,127.0.0.1:7001');
  });

  it('refuses a malformed seed list in one line that does not show the password; takes WAIT on a cluster', () => {
    for (const bad of ['redis+cluster://', 'redis+cluster://host', 'redis+cluster://a:1,b', 'redis+cluster://a:99999', 'redis+cluster://a:1/0']) {
      expect(() => loadConfig({ ...env, REDIS_URL: bad }), bad).toThrow(/REDIS_URL /);
    }
    let message = '';
    try {
      loadConfig({ ...env, REDIS_URL: 'redis+cluster://u:hunter2@a:1,b' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/REDIS_URL has a seed node "b"/);
    expect(message).not.toContain('hunter2');
    // WAIT on a cluster goes to the master holding the tenant's slot (engine/redis/replica-barrier.ts).
    expect(loadConfig({ ...env, REDIS_URL: 'redis+cluster://a:1', REDIS_WAIT_REPLICAS: '1' }).redisWait.replicas).toBe(1);
  });
});
