import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { keys, luaTest as it } from '../support/lua.js';

const SILENT = 300_000;

/** mark-nas-seen-2.lua: last heard per NAS, forward only, and nas.online once per return from silence. */
describe('mark-nas-seen-2.lua', () => {
  const events = async (redis: Redis, t: string) =>
    (await redis.xrange(keys.events(t), '-', '+')).map(([, f]) => ({ type: f[1], site: f[5], data: JSON.parse(f[7]!) }));

  it('a NAS never heard from, and one back after the silence, each get nas.online once', async ({ redis, tenant: t }) => {
    const now = Date.now();
    expect(await redis.markNasSeenV1(keys.nasSeen(t), keys.events(t), SILENT, 1000, 'nas_a', 'hs_1', now, 'nas_b', 'hs_2', now)).toBe(2);
    // Heard again soon: no event (as when a second process flushes the same sighting).
    expect(await redis.markNasSeenV1(keys.nasSeen(t), keys.events(t), SILENT, 1000, 'nas_a', 'hs_1', now + 15_000)).toBe(0);
    expect(await redis.markNasSeenV1(keys.nasSeen(t), keys.events(t), SILENT, 1000, 'nas_a', 'hs_1', now + 15_000 + SILENT + 1)).toBe(1);
    expect(await redis.hgetall(keys.nasSeen(t))).toEqual({ nas_a: String(now + 15_000 + SILENT + 1), nas_b: String(now) });
    expect(await events(redis, t)).toEqual([
      { type: 'nas.online', site: 'hs_1', data: { nas_id: 'nas_a', hotspot_id: 'hs_1', silent_sec: null } },
      { type: 'nas.online', site: 'hs_2', data: { nas_id: 'nas_b', hotspot_id: 'hs_2', silent_sec: null } },
      { type: 'nas.online', site: 'hs_1', data: { nas_id: 'nas_a', hotspot_id: 'hs_1', silent_sec: 300 } },
    ]);
  });

  it('never moves a time back: a batch that waited behind a newer one changes nothing', async ({ redis, tenant: t }) => {
    const now = Date.now();
    await redis.markNasSeenV1(keys.nasSeen(t), keys.events(t), SILENT, 1000, 'nas_a', 'hs_1', now);
    expect(await redis.markNasSeenV1(keys.nasSeen(t), keys.events(t), SILENT, 1000, 'nas_a', 'hs_1', now - SILENT * 2)).toBe(0);
    expect(await redis.hget(keys.nasSeen(t), 'nas_a')).toBe(String(now));
    expect(await redis.xlen(keys.events(t))).toBe(1);
  });
});
