import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { outbox, putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

/** extend-session-4.lua: a live session's end moves, counted from the later of its end and now. */
describe('extend-session-4.lua', () => {
  const started = async (redis: Redis, t: string, n: number): Promise<{ sid: string; until: number }> => {
    await putVoucher(redis, t, 'EXT', { id: 'vch_ext', max: 10, minutes: 60 });
    const used = await useVoucher(redis, t, 'EXT', { now: 1_000, mac: mac(n) });
    return { sid: String(used[1]), until: Number(used[2]) };
  };
  let ops = 0;
  const extend = (redis: Redis, t: string, sid: string, m: string, now: number, minutes: number, op = `x${++ops}`) =>
    redis.extendSessionV3(keys.grant(t, 'hs_lua', m), keys.live(t, 'hs_lua'), keys.outbox(t), keys.events(t), sid, now, minutes, 'op_2', op);

  it('adds to the current end while it is ahead, in the grant, the live set and one extend record', async ({ redis, tenant: t }) => {
    const { sid, until } = await started(redis, t, 1);
    expect(until).toBe(1_000 + 60 * 60_000);
    expect(await extend(redis, t, sid, mac(1), 2_000, 60)).toEqual(['extended', String(until + 3_600_000)]);
    expect(await redis.hget(keys.grant(t, 'hs_lua', mac(1)), 'until')).toBe(String(until + 3_600_000));
    expect(await redis.zscore(keys.live(t, 'hs_lua'), sid)).toBe(String(until + 3_600_000));
    const ext = (await outbox(redis, t)).filter((r) => r.type === 'session_extend');
    expect(ext).toEqual([expect.objectContaining({ sid, hs: 'hs_lua', mac: mac(1), at: '2000', minutes: '60', until: String(until + 3_600_000), by: 'op_2' })]);
  });

  it('the same call again (a resend after a lost answer) answers the end it set and adds nothing: one record, one event', async ({ redis, tenant: t }) => {
    const { sid, until } = await started(redis, t, 4);
    const records = async () => (await outbox(redis, t)).filter((r) => r.type === 'session_extend').length;
    const extendEvents = async () => (await redis.xrange(keys.events(t), '-', '+')).filter(([, f]) => f[1] === 'session.extend').length;
    expect(await extend(redis, t, sid, mac(4), 2_000, 30, 'op_once')).toEqual(['extended', String(until + 30 * 60_000)]);
    expect(await extend(redis, t, sid, mac(4), 2_000, 30, 'op_once')).toEqual(['extended', String(until + 30 * 60_000)]);
    expect(await redis.zscore(keys.live(t, 'hs_lua'), sid)).toBe(String(until + 30 * 60_000));
    expect([await records(), await extendEvents()]).toEqual([1, 1]);
    // Another extend, even of the same minutes, is another operation.
    expect(await extend(redis, t, sid, mac(4), 3_000, 30)).toEqual(['extended', String(until + 60 * 60_000)]);
    expect([await records(), await extendEvents()]).toEqual([2, 2]);
  });

  it('counts from now when the end has already passed (the sweep has not ended it yet)', async ({ redis, tenant: t }) => {
    const { sid, until } = await started(redis, t, 2);
    const now = until + 30_000;
    expect(await extend(redis, t, sid, mac(2), now, 15)).toEqual(['extended', String(now + 15 * 60_000)]);
  });

  it("answers {'gone'} for a session that is not live, and writes nothing", async ({ redis, tenant: t }) => {
    const { sid } = await started(redis, t, 3);
    await redis.zrem(keys.live(t, 'hs_lua'), sid);
    const before = await redis.xlen(keys.outbox(t));
    expect(await extend(redis, t, sid, mac(3), 2_000, 60)).toEqual(['gone']);
    expect(await extend(redis, t, 'sess_other', mac(3), 2_000, 60)).toEqual(['gone']);
    expect(await redis.xlen(keys.outbox(t))).toBe(before);
  });
});
