import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../engine/index.js';
import { Metrics } from '../../engine/metrics.js';
import { deadLettersBetween, OutboxSink } from '../../engine/store/outbox-sink.js';
import { migrate, type Pool } from '../../engine/store/postgres.js';
import { eventually } from '../helpers.js';

/**
 * Parts of the outbox sink seen on their own: the lanes, and the dead letters
 * as the daily summary reads them.
 */
describe('outbox sink', () => {
  let redis: Redis;
  let pool: pg.Pool;

  beforeAll(async () => {
    redis = new Redis(inject('redisUrl'));
    pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 2 });
    await migrate(pool, createLogger('silent')); // no service runs in this file to do it
  });
  afterAll(async () => {
    redis.disconnect();
    await pool.end();
  });

  // Waiting session ends (session_ends_early) belong to no lane: lane 0 applies them whatever
  // tenants hash to it, also when none does (one tenant, half the time).
  it('applies waiting ends though no tenant stream is on lane 0', async () => {
    const statements: string[] = [];
    const watched = { query: (...args: Parameters<pg.Pool['query']>) => { statements.push(String(args[0])); return pool.query(...args); } } as unknown as Pool;
    const sink = new OutboxSink(redis, watched, async () => [], `test-lanes-${process.pid}`, createLogger('silent'), new Metrics());
    sink.start();
    try {
      await eventually(async () => statements.some((q) => q.includes('session_ends_early')), 5_000, () => statements);
    } finally {
      await sink.stop();
    }
  });
  it("dead letters belong to the day their record was queued, not the day Postgres refused it", async () => {
    const tenant = `tn_dl${Date.now().toString(36)}`;
    const day = Date.parse('2026-11-20T00:00:00Z');
    const key = `{t:${tenant}}:outbox:dead`;
    // Queued at 23:59:59 on the 20th, refused after midnight; queued and refused on the 21st.
    await redis.xadd(key, `${day + 86_400_000 + 5_000}-0`, 'stream_id', `${day + 86_399_000}-0`, 'type', 'voucher_use', 'sid', 'sess_a', 'hs', 'hs_1', 'error', 'x');
    await redis.xadd(key, `${day + 86_400_000 + 9_000}-0`, 'stream_id', `${day + 86_400_000 + 8_000}-0`, 'type', 'session_end', 'sid', 'sess_b', 'hs', 'hs_1', 'error', 'y');
    const ids = async (from: number) => (await deadLettersBetween(redis, tenant, from, from + 86_400_000)).map((d) => d.sessionId);
    expect(await ids(day)).toEqual(['sess_a']);
    expect(await ids(day + 86_400_000)).toEqual(['sess_b']);
    await redis.del(key);
  });
});
