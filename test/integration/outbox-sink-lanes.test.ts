import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createLogger } from '../../engine/index.js';
import { Metrics } from '../../engine/metrics.js';
import { OutboxSink } from '../../engine/store/outbox-sink.js';
import type { Pool } from '../../engine/store/postgres.js';
import { eventually } from '../helpers.js';

/**
 * Waiting session ends (session_ends_early) belong to no lane: lane 0 applies
 * them whatever tenants hash to it. A sink none of whose tenants fall on lane
 * 0 (one tenant, half the time) must still apply them.
 */
describe('outbox sink lanes', () => {
  let redis: Redis;
  let pool: pg.Pool;

  beforeAll(() => {
    redis = new Redis(inject('redisUrl'));
    pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 2 });
  });
  afterAll(async () => {
    redis.disconnect();
    await pool.end();
  });

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
});
