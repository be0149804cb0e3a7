import type pg from 'pg';
import { describe, expect } from 'vitest';
import { VoucherService } from '../../engine/vouchers/voucher-service.js';
import type { Pool } from '../../engine/store/postgres.js';
import { call, keys, serviceTest } from '../support/fixture.js';

const test = serviceTest();

/**
 * Loading a tenant's vouchers into Redis (after a Redis restart) while an
 * operator deletes one: the load must not bring the deleted code back.
 */
describe('voucher reload against a concurrent delete', () => {
  test('a voucher deleted after the load read it does not work again', async ({ svc, tenant: t }) => {
    const v = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'RELOAD-DEL', max_uses: null } });
    expect(v.status).toBe(201);
    const engine = svc.service.engine;
    // The loader's page read (its first query: the run_id comes from Redis) returns the voucher
    // live; the operator's delete commits right after it.
    const real = engine.pool;
    let deleted = false;
    let calls = 0;
    const racing = {
      query: async (...args: Parameters<pg.Pool['query']>) => {
        const r = await real.query(...args);
        if (++calls === 1) {
          deleted = true;
          expect((await call(svc.base, 'DELETE', `/v1/vouchers/${v.body.id}`, { auth: t.apiKey })).status).toBe(200);
        }
        return r;
      },
    } as unknown as Pool;
    await new VoucherService(racing, engine.redis, Date.now).loadIntoRedis(t.tenantId);
    expect(deleted).toBe(true);
    expect(await engine.redis.exists(keys.voucher(t.tenantId, 'RELOAD-DEL'))).toBe(0);
    const verify = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'RELOAD-DEL', mac: '5F:00:00:00:00:01' } });
    expect(verify.body).toEqual({ error: 'voucher_not_found' });
  });
});
