/**
 * The integration tests' fixture. `const test = serviceTest(env?)` gives a
 * vitest `test` whose tests may ask for:
 *   svc     the service started in this process with testEnv(env) (one per file)
 *   redis   an ioredis client on the shared test Redis (one per file)
 *   db      a connected pg.Client on the shared test Postgres (one per file)
 *   tenant  a fresh tenant with an API key and a hotspot (per test)
 *   voucher an unlimited voucher of that tenant, { id, code } (per test)
 *   mac     a source of fresh MACs, `mac()` (per test; see macs.ts)
 *   keys    engine/redis/keys.ts: build Redis keys only through it
 * e.g. `test('...', async ({ svc, tenant, mac }) => { ... })`. Every fixture is
 * made on first use and closed at the end of its scope; `test.beforeAll` gets
 * the per-file ones. Files with no service use `storesTest` (redis, db, mac, keys),
 * or `poolTest` for engine parts built on a pg.Pool (storesTest and `pool`).
 * Polling: until() from poll.ts; HTTP: call() from service.ts.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { test as base, expect, inject } from 'vitest';
import { createLogger } from '../../engine/index.js';
import { keys } from '../../engine/redis/keys.js';
import { migrate } from '../../engine/store/postgres.js';
import type { Service } from '../../scripts/serve.js';
import { macs } from './macs.js';
import { call, startService, type Running } from './service.js';

export { keys };
export { clearOfMidnight, DAY_SCENARIO_MS, until } from './poll.js';
export { mac, macs, dashed } from './macs.js';
export { call, JWT_SECRET, spawnService, startService, testEnv, type Answer, type Running, type ServiceProcess } from './service.js';

export interface Tenant {
  tenantId: string;
  apiKey: string;
  hotspotId: string;
}

export interface Voucher {
  id: string;
  code: string;
}

/** A fresh tenant with an API key, and a hotspot (Europe/Istanbul). */
export async function newTenant(service: Service, name = 'Test Venue', modules?: string[]): Promise<Tenant> {
  const tenant = await service.engine.tenants.create(`${name} ${Math.random().toString(36).slice(2, 8)}`, modules);
  const { apiKey } = await service.engine.tenants.createApiKey(tenant.id);
  const hs = await service.engine.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'Europe/Istanbul' });
  return { tenantId: tenant.id, apiKey, hotspotId: hs.id };
}

/** An unlimited voucher of the tenant, created through the public API as an operator would. */
export async function newVoucher(base: string, t: Tenant, body: Record<string, unknown> = {}): Promise<Voucher> {
  const code = `FX-${randomBytes(4).toString('hex').toUpperCase()}`;
  const r = await call(base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null, ...body } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.id, code: r.body.code };
}

/** Redis and Postgres of the shared test servers, without a service. */
export const storesTest = base
  .extend('redis', { scope: 'file' }, async ({}, { onCleanup }) => {
    const redis = new Redis(inject('redisUrl'));
    onCleanup(() => { redis.disconnect(); });
    return redis;
  })
  .extend('db', { scope: 'file' }, async ({}, { onCleanup }) => {
    const db = new pg.Client(inject('databaseUrl'));
    await db.connect();
    onCleanup(() => db.end());
    return db;
  })
  .extend('mac', async () => macs())
  .extend('keys', { scope: 'file' }, keys);

/**
 * storesTest and `pool`, a pg.Pool of two on the test Postgres, migrated: no
 * service runs in such a file to migrate it. One per file, ended after.
 */
export const poolTest = storesTest
  .extend('pool', { scope: 'file' }, async ({}, { onCleanup }) => {
    const pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 2 });
    onCleanup(() => pool.end());
    await migrate(pool, createLogger('silent'));
    return pool;
  });

/**
 * storesTest and a service started with testEnv(env), a tenant and a voucher.
 * `env` may be a function, for settings known only once the file runs (a local TSA's URL).
 */
export function serviceTest(env: Record<string, string> | (() => Promise<Record<string, string>>) = {}) {
  return storesTest
    .extend('svc', { scope: 'file' }, async ({}, { onCleanup }): Promise<Running> => {
      const svc = await startService(typeof env === 'function' ? await env() : env);
      onCleanup(() => svc.stop());
      return svc;
    })
    .extend('tenant', async ({ svc }) => newTenant(svc.service))
    .extend('voucher', async ({ svc, tenant }) => newVoucher(svc.base, tenant));
}
