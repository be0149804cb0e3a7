import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createLogger, Engine, loadConfig } from '../../engine/index.js';
import { keys, OUTBOX_GROUP } from '../../engine/redis/keys.js';
import { testEnv } from '../support/fixture.js';

/**
 * A start prepares every tenant's Redis side (its outbox stream and the
 * sink's consumer group), however many tenants there are: tenants made
 * elsewhere (another process on another Redis, a restore of Postgres) get
 * theirs, more than one batch of concurrent calls deep, and a second start
 * finds them there (BUSYGROUP) and goes on. Redis database 16 is this
 * file's alone.
 */
const REDIS_URL = `${inject('redisUrl')}/16`;
const TENANTS = 300;

describe('a start prepares every tenant in Redis', () => {
  const prefix = `tn_start${randomBytes(4).toString('hex')}_`;
  const db = new pg.Client(inject('databaseUrl'));
  const redis = new Redis(REDIS_URL);
  afterAll(async () => {
    await db.query('DELETE FROM tenants WHERE id LIKE $1', [`${prefix}%`]).catch(() => undefined);
    await db.end();
    redis.disconnect();
  });

  const start = async (): Promise<void> => {
    const engine = new Engine(loadConfig(testEnv({ REDIS_URL })), createLogger('silent'), { sink: false, actors: false, webhooks: false });
    try {
      await engine.start();
    } finally {
      await engine.close();
    }
  };

  it('every tenant in Postgres gets its outbox group, and a second start changes nothing', async () => {
    await start(); // the schema, should this file run first
    await db.connect();
    // Rows only, as another process or a restore would leave them: no stream, no group on this Redis.
    await db.query(`INSERT INTO tenants (id, name, modules) SELECT $1 || g, 'Start ' || g, '{vouchers}' FROM generate_series(1, $2::int) g`, [prefix, TENANTS]);
    const ids = Array.from({ length: TENANTS }, (_, i) => `${prefix}${i + 1}`);
    expect(await redis.exists(keys.outbox(ids[0]!))).toBe(0);

    const groups = async (): Promise<number> => {
      let n = 0;
      for (const id of ids) {
        const info = (await redis.xinfo('GROUPS', keys.outbox(id))) as unknown[][];
        if (info.some((g) => g[1] === OUTBOX_GROUP)) n++;
      }
      return n;
    };
    for (const n of [1, 2]) {
      await start();
      expect(await groups(), `start ${n}`).toBe(TENANTS);
    }
  });
});
