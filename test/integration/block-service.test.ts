import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import { describe, expect } from 'vitest';
import { BlockService } from '../../engine/sessions/block-service.js';
import { keys, poolTest as it } from '../support/fixture.js';

/**
 * The one owner of the `blocks` table and the Redis block marker: what it
 * writes to each, what it reads back, and the restore into an emptied Redis.
 */
describe('BlockService', () => {
  let pool: pg.Pool;
  let redis: Redis;
  let clock = Date.now();
  let blocks: BlockService;
  const tenant = (): string => `ten_blk${randomBytes(6).toString('hex')}`;

  it.beforeAll(({ pool: p_, redis: r_ }) => {
    pool = p_;
    redis = r_;
    blocks = new BlockService(pool, redis, () => clock);
  });

  it('blocks a MAC in any notation: the marker in Redis (expiring with a timed block) and the row in Postgres', async () => {
    const t = tenant();
    clock = Date.now();
    expect(await blocks.block(t, 'aa-bb-cc-00-00-01', '24h', 'api_key:k1', 'session ses_x')).toEqual({
      mac: 'AA:BB:CC:00:00:01', duration: '24h', until: new Date(clock + 86_400_000).toISOString(),
    });
    expect(await redis.get(keys.block(t, 'AA:BB:CC:00:00:01'))).toBe('24h');
    const ttl = await redis.pttl(keys.block(t, 'AA:BB:CC:00:00:01'));
    expect(ttl).toBeGreaterThan(86_400_000 - 60_000);
    expect(ttl).toBeLessThanOrEqual(86_400_000);
    await blocks.block(t, 'AA:BB:CC:00:00:02', 'permanent', 'api_key:k1', null);
    expect(await redis.pttl(keys.block(t, 'AA:BB:CC:00:00:02'))).toBe(-1);

    const listed = await blocks.list(t);
    expect(listed.map((b) => [b.mac, b.duration, b.reason, b.created_by])).toEqual(expect.arrayContaining([
      ['AA:BB:CC:00:00:01', '24h', 'session ses_x', 'api_key:k1'], ['AA:BB:CC:00:00:02', 'permanent', null, 'api_key:k1'],
    ]));
    expect(listed).toHaveLength(2);
    expect(await blocks.blockedAmong(t, ['AA:BB:CC:00:00:01', 'AA:BB:CC:00:00:03'])).toEqual(new Set(['AA:BB:CC:00:00:01']));
    expect(await blocks.blockedAmong(tenant(), ['AA:BB:CC:00:00:01'])).toEqual(new Set());
  });

  it('refuses what is not a MAC, and an unblock of a device that is not blocked', async () => {
    const t = tenant();
    await expect(blocks.block(t, 'not-a-mac', '7d', 'x', null)).rejects.toMatchObject({ code: 'invalid_mac' });
    await expect(blocks.unblock(t, 'AA:BB:CC:00:00:09')).rejects.toMatchObject({ code: 'block_not_found' });
  });

  it('unblock removes both the row and the marker', async () => {
    const t = tenant();
    await blocks.block(t, 'AA:BB:CC:00:00:04', '7d', 'x', null);
    expect(await blocks.unblock(t, 'aa:bb:cc:00:00:04')).toEqual({ mac: 'AA:BB:CC:00:00:04', unblocked: true });
    expect(await redis.exists(keys.block(t, 'AA:BB:CC:00:00:04'))).toBe(0);
    expect(await blocks.list(t)).toEqual([]);
  });

  it('restores unexpired blocks into an emptied Redis, timed ones with the time they have left; expired ones stay out', async () => {
    const t = tenant();
    clock = Date.now();
    await blocks.block(t, 'AA:BB:CC:00:00:05', 'permanent', 'x', null);
    await blocks.block(t, 'AA:BB:CC:00:00:06', '24h', 'x', null);
    await pool.query(`INSERT INTO blocks (tenant_id, mac, until, duration) VALUES ($1, 'AA:BB:CC:00:00:07', now() - interval '1 minute', '24h')`, [t]);
    await redis.del(keys.block(t, 'AA:BB:CC:00:00:05'), keys.block(t, 'AA:BB:CC:00:00:06'));

    clock += 3_600_000; // an hour later by the service's clock
    await blocks.restoreIntoRedis(t);
    expect(await redis.get(keys.block(t, 'AA:BB:CC:00:00:05'))).toBe('permanent');
    expect(await redis.pttl(keys.block(t, 'AA:BB:CC:00:00:05'))).toBe(-1);
    expect(await redis.get(keys.block(t, 'AA:BB:CC:00:00:06'))).toBe('24h');
    const left = await redis.pttl(keys.block(t, 'AA:BB:CC:00:00:06'));
    expect(left).toBeGreaterThan(23 * 3_600_000 - 60_000);
    expect(left).toBeLessThanOrEqual(23 * 3_600_000);
    expect(await redis.exists(keys.block(t, 'AA:BB:CC:00:00:07'))).toBe(0);
  });
});
