import { describe, expect } from 'vitest';
import { AuditLog } from '../../engine/audit/audit-log.js';
import { keys, serviceTest } from '../support/fixture.js';

const test = serviceTest();

/**
 * A long request (a slow CSV upload) keeps its change's intent fresh, so the
 * sweep does not record it as operator_change_unconfirmed while it still
 * runs (which would then skip the real record as already stored); a refresh
 * never brings back an intent already ended.
 */
describe('audit intent refresh', () => {
  test('a refreshed intent is stale five minutes after its last refresh, not after its start; a late refresh revives nothing', async ({ svc, tenant, redis }) => {
    let now = Date.now();
    const log = new AuditLog(svc.service.engine.redis, () => now);
    const pending = await log.begin(tenant.tenantId, { by: 'api_key:test', route: 'POST /v1/vouchers/import', params: [] });
    now += 4 * 60_000;
    await pending.refresh();
    now += 4 * 60_000; // eight minutes after the start, four after the refresh
    expect(await log.recoverStale(tenant.tenantId)).toBe(0);
    expect(await redis.hlen(keys.auditIntents(tenant.tenantId))).toBe(1);
    now += 2 * 60_000; // six minutes after the refresh: the request is taken for dead
    expect(await log.recoverStale(tenant.tenantId)).toBe(1);
    await pending.refresh();
    expect(await redis.hlen(keys.auditIntents(tenant.tenantId))).toBe(0);
  });

  test('a refresh after the commit does not bring the intent back', async ({ svc, tenant, redis }) => {
    const log = new AuditLog(svc.service.engine.redis, Date.now);
    const pending = await log.begin(tenant.tenantId, { by: 'api_key:test', route: 'POST /v1/vouchers/import', params: [] });
    await pending.refresh();
    await pending.commit('voucher_import', { batch_id: 'vbt_test', imported: 1, invalid: 0 });
    await pending.refresh();
    expect(await redis.hlen(keys.auditIntents(tenant.tenantId))).toBe(0);
  });
});
