/**
 * The test/lua fixture: `import { luaTest as test } from '../support/lua.js'`,
 * then `test('...', async ({ redis, tenant }) => { ... })`.
 *   redis   an ioredis client on the shared test Redis with every script
 *           defined (engine/redis/scripts.ts), one per file, disconnected after
 *   tenant  a tenant id nobody else uses, its loaded marker set to this
 *           server's run_id as a load from Postgres leaves it; its keys are
 *           deleted after the test
 *   keys    engine/redis/keys.ts (never build a key by hand)
 * More tenants in one test: `await luaTenant(redis)` (not cleaned up).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { test as base, inject } from 'vitest';
import { keys } from '../../engine/redis/keys.js';
import { defineScripts, serverRunId } from '../../engine/redis/scripts.js';

export { keys };
export { mac, macs } from './macs.js';

/** A tenant id nobody else uses; unless `loaded` is false, marked loaded on this server. */
export async function luaTenant(redis: Redis, loaded = true): Promise<string> {
  const t = `tn_lua${randomBytes(6).toString('hex')}`;
  if (loaded) await redis.set(keys.loaded(t), await serverRunId(redis));
  return t;
}

/** Deletes every key of a tenant: they all carry its hash tag, so one pattern finds them. */
async function dropTenant(redis: Redis, t: string): Promise<void> {
  const tag = keys.loaded(t).slice(0, -':loaded'.length);
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${tag.replace(/[{}[\]*?\\]/g, '\\$&')}:*`, 'COUNT', 1000);
    if (found.length) await redis.del(...found);
    cursor = next;
  } while (cursor !== '0');
}

export const luaTest = base
  .extend('redis', { scope: 'file' }, async ({}, { onCleanup }) => {
    const redis = new Redis(inject('redisUrl'));
    defineScripts(redis);
    onCleanup(() => { redis.disconnect(); });
    return redis;
  })
  .extend('tenant', async ({ redis }, { onCleanup }) => {
    const t = await luaTenant(redis);
    onCleanup(() => dropTenant(redis, t));
    return t;
  })
  .extend('keys', { scope: 'file' }, keys);
