import type { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect } from 'vitest';
import { call, keys, serviceTest } from '../support/fixture.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';

const test = serviceTest();

/**
 * Redis and Postgres hold the same vouchers whatever goes wrong while they
 * are created: use-voucher reads Redis alone, so a code Redis has and
 * Postgres does not would work without a durable record of it.
 */
describe('voucher creation keeps Redis and Postgres in step', () => {
  let redis: Redis;
  let db: pg.Client;
  test.beforeAll(({ redis: r_, db: d_ }) => { redis = r_; db = d_; });

  const codesInRedis = async (tenant: string): Promise<string[]> => (await redis.keys(keys.voucher(tenant, '*'))).sort();
  const rowsIn = async (tenant: string): Promise<number> =>
    (await db.query('SELECT count(*)::int AS n FROM vouchers WHERE tenant_id = $1', [tenant])).rows[0].n;

  test('a batch whose commit fails leaves no code in Redis', async ({ svc, db, tenant: t }) => {
    // Refused at COMMIT, after every code went into Redis: a deferred check on this batch's notes.
    await db.query(`CREATE OR REPLACE FUNCTION test_refuse_at_commit() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN IF NEW.notes = 'refuse-at-commit' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$`);
    await db.query(`DROP TRIGGER IF EXISTS test_refuse_at_commit ON vouchers`);
    await db.query(`CREATE CONSTRAINT TRIGGER test_refuse_at_commit AFTER INSERT ON vouchers
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_refuse_at_commit()`);
    try {
      const r = await call(svc.base, 'POST', '/api/v1/vouchers', { auth: t.apiKey, body: { count: 200, notes: 'refuse-at-commit' } });
      expect(r.status).toBe(500);
    } finally {
      await db.query('DROP TRIGGER IF EXISTS test_refuse_at_commit ON vouchers');
    }
    expect(await rowsIn(t.tenantId)).toBe(0);
    expect(await codesInRedis(t.tenantId)).toEqual([]);
  });

  test('a batch that cannot be completed in a crowded code space commits nothing, anywhere', async ({ svc, db, tenant: t }) => {
    // 9,990 of the 10,000 four-digit codes are taken: no batch of 500 can be made.
    await db.query(`INSERT INTO vouchers (id, tenant_id, code, source)
      SELECT 'vch_crowd' || lpad(n::text, 12, '0'), $1, lpad(n::text, 4, '0'), 'test' FROM generate_series(0, 9989) AS n`, [t.tenantId]);
    const r = await call(svc.base, 'POST', '/api/v1/vouchers', { auth: t.apiKey, body: { count: 500, format: { charset: 'numeric', length: 4 } } });
    expect(r.status).toBe(409);
    expect(r.body.error).toBe('code_space_exhausted');
    expect(await rowsIn(t.tenantId)).toBe(9_990);
    expect(await codesInRedis(t.tenantId)).toEqual([]);
  });

  test('a code left in Redis by a voucher Postgres does not hold is replaced, not a 409 for ever', async ({ svc, redis, tenant: t }) => {
    // As after a process died between Redis and its commit: the code and a device that used it.
    await redis.hset(keys.voucher(t.tenantId, 'LEFTOVER-1'), 'id', 'vch_ghost', 'max', -1, 'uses', 3, 'exp', 0, 'ssids', '', 'dur', 0,
      'down', 0, 'up', 0, 'quota', 0, 'profile', '', 'code', 'LEFTOVER-1', 'squota', 0);
    await redis.hset(keys.voucherDevices(t.tenantId, 'LEFTOVER-1'), '02:AA:00:00:00:01', 'sess_ghost');
    const v = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'LEFTOVER-1', max_uses: 1 } });
    expect(v.status).toBe(201);
    expect(await redis.hmget(keys.voucher(t.tenantId, 'LEFTOVER-1'), 'id', 'uses', 'max')).toEqual([v.body.id, '0', '1']);
    expect(await redis.exists(keys.voucherDevices(t.tenantId, 'LEFTOVER-1'))).toBe(0);
    const use = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'LEFTOVER-1', mac: '02:AA:00:00:00:01' } });
    expect(use.body).toMatchObject({ status: 'authorized', uses_left: 0 });
  });
});
