import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';

const MIN_TTL = 7320, HOUR_TTL = 90600;

/** record-posture-5.lua: latest verdict, per-verdict device counts, the fail/drift counter and the event, together. */
describe('record-posture-5.lua', () => {
  const record = (redis: Redis, t: string, m: string, verdict: string, now: number, hs = '', reason = '') =>
    redis.recordPostureV1(keys.posture(t), keys.postureCounts(t), keys.activityMinute(t, Math.floor(now / 60_000)),
      keys.activityHour(t, Math.floor(now / 3_600_000)), keys.events(t), m, verdict, now, hs, MIN_TTL, HOUR_TTL, 1000, reason);

  it('moves a device between verdict counts: the old one down, the new one up, never a field at zero', async ({ redis, tenant: t }) => {
    const now = Date.now();
    expect(await record(redis, t, mac(1), 'pass', now)).toBe('');
    expect(await record(redis, t, mac(2), 'pass', now)).toBe('');
    expect(await redis.hgetall(keys.postureCounts(t))).toEqual({ pass: '2' });
    expect(await record(redis, t, mac(1), 'fail', now + 1)).toBe('pass');
    expect(await redis.hgetall(keys.postureCounts(t))).toEqual({ pass: '1', fail: '1' });
    // The same verdict again changes no count.
    expect(await record(redis, t, mac(1), 'fail', now + 2)).toBe('fail');
    expect(await record(redis, t, mac(2), 'drift', now + 3)).toBe('pass');
    expect(await redis.hgetall(keys.postureCounts(t))).toEqual({ fail: '1', drift: '1' });
    expect(await redis.hget(keys.posture(t), mac(2))).toBe(`drift ${now + 3} `);
  });

  it('counts fail and drift (not pass) into the minute and hour buckets, per site when a hotspot is named, with their TTLs', async ({ redis, tenant: t }) => {
    const now = Date.now();
    await record(redis, t, mac(1), 'fail', now, 'hs_a');
    await record(redis, t, mac(2), 'drift', now);
    await record(redis, t, mac(3), 'pass', now, 'hs_a');
    for (const key of [keys.activityMinute(t, Math.floor(now / 60_000)), keys.activityHour(t, Math.floor(now / 3_600_000))]) {
      expect(await redis.hgetall(key)).toEqual({ pfail: '2', 'pfail@hs_a': '1' });
      expect(await redis.ttl(key)).toBeGreaterThan(0);
    }
    expect(await redis.ttl(keys.activityMinute(t, Math.floor(now / 60_000)))).toBeLessThanOrEqual(MIN_TTL);
  });

  it('appends posture.verdict with the verdict, the one before and the site', async ({ redis, tenant: t }) => {
    const now = Date.now();
    await record(redis, t, mac(1), 'pass', now, 'hs_b');
    await record(redis, t, mac(1), 'drift', now + 5, 'hs_b', 'antivirus out of date');
    const entries = await redis.xrange(keys.events(t), '-', '+');
    expect(entries).toHaveLength(2);
    const f = Object.fromEntries(entries[1]![1].reduce<[string, string][]>((a, v, i, all) => (i % 2 ? a : [...a, [v, all[i + 1]!]]), []));
    expect(f).toMatchObject({ type: 'posture.verdict', ts: String(now + 5), site: 'hs_b' });
    expect(JSON.parse(f.data!)).toEqual({ mac: mac(1), verdict: 'drift', previous: 'pass', hotspot_id: 'hs_b', reason: 'antivirus out of date' });
  });
});
