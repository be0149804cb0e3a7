import { describe, expect } from 'vitest';
import type { Redis } from 'ioredis';
import { RedisPersonalData } from '../../engine/privacy/redis-personal-data.js';
import { SubjectKeys } from '../../engine/privacy/subject.js';
import { keys, luaTest as it } from '../support/lua.js';

/** replace-hash-value-1.lua: an erasure's rewrite of a hash value is a compare-and-set. */
describe('replace-hash-value-1.lua', () => {
  it('rewrites a value that is still the one read', async ({ redis, tenant: t }) => {
    const key = keys.webhookBodies(t);
    await redis.hset(key, 'd1', '{"mac":"02:00:00:00:00:01"}');
    expect(await redis.replaceHashValueV1(key, 'd1', '{"mac":"02:00:00:00:00:01"}', '{"mac":"erased-0123456789ab"}')).toBe(1);
    expect(await redis.hget(key, 'd1')).toBe('{"mac":"erased-0123456789ab"}');
  });

  it('leaves a field deleted or changed since it was read: nothing comes back, nothing newer is lost', async ({ redis, tenant: t }) => {
    const key = keys.auditIntents(t);
    await redis.hset(key, 'other', 'x');
    expect(await redis.replaceHashValueV1(key, 'gone', 'old', 'pseudonymised')).toBe(0);
    expect(await redis.hexists(key, 'gone')).toBe(0);
    await redis.hset(key, 'changed', 'newer');
    expect(await redis.replaceHashValueV1(key, 'changed', 'old', 'pseudonymised')).toBe(0);
    expect(await redis.hget(key, 'changed')).toBe('newer');
    expect(await redis.replaceHashValueV1(keys.webhookBodies(t), 'absent', 'old', 'new')).toBe(0);
    expect(await redis.exists(keys.webhookBodies(t))).toBe(0);
  });

  it("an erasure's scrub neither brings back a value deleted after its scan nor rewrites an audit intent", async ({ redis, tenant: t }) => {
    const mac = '02:00:00:00:00:0A';
    const subject = new SubjectKeys(new Uint8Array(32)).of(t, 'mac', mac);
    const bodies = keys.webhookBodies(t);
    const intents = keys.auditIntents(t);
    await redis.hset(bodies, 'delivered', JSON.stringify({ mac }));
    const intent = JSON.stringify({ event: 'device_blocked', mac });
    await redis.hset(intents, 'rid_1', intent);
    // The body is delivered (and dropped) between the scan that read it and the rewrite.
    const racing = new Proxy(redis, {
      get: (target, prop, recv) => (prop === 'hscan'
        ? async (...args: Parameters<Redis['hscan']>) => {
          const page = await target.hscan(...args);
          if (args[0] === bodies) await target.hdel(bodies, 'delivered');
          return page;
        }
        : Reflect.get(target, prop, recv)),
    }) as Redis;
    const out = await new RedisPersonalData(racing).scrub(t, [subject]);
    expect(await redis.hexists(bodies, 'delivered')).toBe(0);
    expect(await redis.hget(intents, 'rid_1')).toBe(intent);
    expect(out).toMatchObject({ values_pseudonymised: 0, held_entries: 1 });
  });
});
