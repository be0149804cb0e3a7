import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { keys, luaTest as it } from '../support/lua.js';
import { outbox } from '../fixtures/lua-voucher.js';

/** commit-audit-2.lua: an operator change's record queued and its intent cleared in one step (engine/audit/audit-log.ts). */
describe('commit-audit-2.lua', () => {
  const commit = (redis: Redis, t: string, rid: string, mustHold: '0' | '1', event = 'hotspot_updated') =>
    redis.commitAuditV1(keys.outbox(t), keys.auditIntents(t), rid, mustHold, event, '1000', 'api_key:gw_1', 'hs_1', '', '{"a":1}');

  it("a change's commit queues its record and clears its intent", async ({ redis, tenant: t }) => {
    await redis.hset(keys.auditIntents(t), 'op_1', '{}');
    expect(await commit(redis, t, 'op_1', '0')).toBe(1);
    expect(await redis.hlen(keys.auditIntents(t))).toBe(0);
    expect(await outbox(redis, t)).toEqual([{ type: 'audit', rid: 'op_1', event: 'hotspot_updated', at: '1000', by: 'api_key:gw_1', hs: 'hs_1', mac: '', details: '{"a":1}' }]);
  });

  it('a recovery queues nothing for an intent already ended (committed or recovered by another process)', async ({ redis, tenant: t }) => {
    expect(await commit(redis, t, 'op_2', '1', 'operator_change_unconfirmed')).toBe(0);
    expect(await outbox(redis, t)).toEqual([]);
    await redis.hset(keys.auditIntents(t), 'op_3', '{}');
    expect(await commit(redis, t, 'op_3', '1', 'operator_change_unconfirmed')).toBe(1);
    expect(await commit(redis, t, 'op_3', '1', 'operator_change_unconfirmed')).toBe(0);
    expect((await outbox(redis, t)).map((r) => r.rid)).toEqual(['op_3']);
  });
});
