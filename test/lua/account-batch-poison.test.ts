import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { AccountBatcher, type AccountReport } from '../../engine/sessions/account-batcher.js';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

const DAY = '20261128';
type Status = AccountReport['status'];

/**
 * The accounting batch's blast radius (issue 22, item 2's loose end): the reports an actor
 * thread gathers in one turn go to Redis in one account-sessions-n.lua call, and one bad
 * report (a refused command, a corrupt field) must fail alone: the batch's other reports,
 * a Stop among them, are recorded and answered, and the bad one is answered only once it
 * too is recorded. Each test submits its reports in one turn, so they share one call.
 */
describe('account batch: one poisoned report fails alone', () => {
  /** Live sessions of devices `ns` at hotspot hs_lua. */
  const sessions = async (redis: Redis, t: string, ns: number[]): Promise<string[]> => {
    await putVoucher(redis, t, 'POISON', { id: 'vch_poison', max: 1_000 });
    const sids: string[] = [];
    for (const n of ns) {
      const used = await useVoucher(redis, t, 'POISON', { now: 1_000, mac: mac(n) });
      expect(used[0]).toBe('ok');
      sids.push(String(used[1]));
    }
    return sids;
  };
  const report = (t: string, d: number, tin: number, status: Status = 'interim'): AccountReport => ({
    tenant: t, hs: 'hs_lua', mac: mac(d), day: DAY, nowMs: 9_000, acctId: `a${d}`, inOctets: tin, outOctets: 10, ip: '', ap: 'AP-1', signal: '', status,
  });
  /** The batcher over a client that counts its calls; `failBatch` makes every batch call fail as a whole, unrun. */
  const counted = (redis: Redis, failBatch = false) => {
    const calls = { batch: [] as number[], single: 0 };
    const spy = Object.create(redis) as Redis;
    spy.accountSessionsV2 = (numKeys: number, ...rest: (string | number)[]) => {
      calls.batch.push((numKeys - 1) / 2);
      return failBatch ? Promise.reject(new Error('Command timed out')) : redis.accountSessionsV2(numKeys, ...rest);
    };
    spy.accountSessionV4 = ((...args: Parameters<Redis['accountSessionV4']>) => {
      calls.single++;
      return redis.accountSessionV4(...args);
    }) as Redis['accountSessionV4'];
    return { calls, batcher: new AccountBatcher(spy) };
  };
  const daily = (redis: Redis, t: string, d: number) => redis.get(keys.dailyUsage(t, mac(d), DAY));

  it('a refused command (a daily counter that is not an integer): the other reports of the call, a Stop among them, are recorded and answered; the poisoned one fails, and is answered once repaired', async ({ redis, tenant: t }) => {
    const devices = [1, 2, 3, 4, 5];
    const sids = await sessions(redis, t, devices);
    await redis.set(keys.dailyUsage(t, mac(3), DAY), 'not-a-number');
    const { calls, batcher } = counted(redis);
    const settled = await Promise.allSettled(devices.map((d) => batcher.submit(report(t, d, 100 * d, d === 5 ? 'stop' : 'interim'))));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    // One call for the turn, not retried: the script told the bad report from the good ones itself.
    expect(calls).toEqual({ batch: [5], single: 0 });
    expect(String((settled[2] as PromiseRejectedResult).reason)).toMatch(/not an integer/);
    for (const i of [0, 1, 3, 4]) {
      const d = devices[i]!;
      expect((settled[i] as PromiseFulfilledResult<unknown[]>).value.slice(0, 4)).toEqual(['ok', sids[i], 100 * d, 10]);
      expect(await daily(redis, t, d)).toBe(String(100 * d + 10));
    }
    // The failed report wrote nothing (its counter's INCRBY is its first write)...
    expect(await redis.hmget(keys.grant(t, 'hs_lua', mac(3)), 'bin', 'a:a3')).toEqual(['0', null]);
    // ...so the NAS's retransmission, once the counter is repaired, is recorded whole and answered (a call of its own now).
    await redis.del(keys.dailyUsage(t, mac(3), DAY));
    const again = await batcher.submit(report(t, 3, 300));
    expect(again.slice(0, 4)).toEqual(['ok', sids[2], 300, 10]);
    expect(calls.single).toBe(1);
    expect(await daily(redis, t, 3)).toBe('310');
  });

  it('a Lua error on a corrupt session field fails only its report; the others are recorded as if it had not been in the call', async ({ redis, tenant: t }) => {
    const devices = [11, 12, 13];
    const sids = await sessions(redis, t, devices);
    await redis.hset(keys.grant(t, 'hs_lua', mac(11)), 'bin', 'garbage');
    const { calls, batcher } = counted(redis);
    const settled = await Promise.allSettled(devices.map((d) => batcher.submit(report(t, d, 1_000 + d))));
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(calls).toEqual({ batch: [3], single: 0 });
    expect(String((settled[0] as PromiseRejectedResult).reason)).toMatch(/arithmetic|number/);
    expect((settled[1] as PromiseFulfilledResult<unknown[]>).value.slice(0, 4)).toEqual(['ok', sids[1], 1_012, 10]);
    expect((settled[2] as PromiseFulfilledResult<unknown[]>).value.slice(0, 4)).toEqual(['ok', sids[2], 1_013, 10]);
    // The live-per-AP hash counts the two sessions recorded at AP-1, not the failed one.
    const lap = Object.values(await redis.hgetall(keys.liveByAp(t))).map(Number);
    expect(lap.reduce((a, b) => a + b, 0)).toBe(2);
  });

  it('a call that fails as a whole (a time-out): each report is tried once on its own, so the good ones are answered and only the poisoned one fails', async ({ redis, tenant: t }) => {
    const devices = [21, 22, 23, 24];
    const sids = await sessions(redis, t, devices);
    await redis.set(keys.dailyUsage(t, mac(22), DAY), 'x');
    const { calls, batcher } = counted(redis, true);
    const settled = await Promise.allSettled(devices.map((d) => batcher.submit(report(t, d, 50 + d))));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(calls).toEqual({ batch: [4], single: 4 });
    for (const i of [0, 2, 3]) {
      expect((settled[i] as PromiseFulfilledResult<unknown[]>).value.slice(0, 4)).toEqual(['ok', sids[i], 50 + devices[i]!, 10]);
      expect(await daily(redis, t, devices[i]!)).toBe(String(60 + devices[i]!));
    }
  });

  it('a corrupt live-per-AP count after the daily counter is raised fails nothing: the report is recorded whole, and its retransmission counts its bytes once', async ({ redis, tenant: t }) => {
    const [sid] = await sessions(redis, t, [31]);
    // The session's access point changes (AP-1 -> AP-2) while AP-2's live count is not an integer.
    await redis.hset(keys.liveByAp(t), 'hs_lua|AP-2', 'garbage');
    const { batcher } = counted(redis);
    const first = await batcher.submit(report(t, 31, 500));
    expect(first.slice(0, 4)).toEqual(['ok', sid, 500, 10]);
    const moved = { ...report(t, 31, 700), ap: 'AP-2' };
    expect((await batcher.submit(moved)).slice(0, 4)).toEqual(['ok', sid, 700, 10]);
    expect(await daily(redis, t, 31)).toBe('710');
    // The NAS did not hear the answer and sends the same totals again: nothing is counted twice.
    expect((await batcher.submit(moved)).slice(0, 4)).toEqual(['ok', sid, 700, 10]);
    expect(await daily(redis, t, 31)).toBe('710');
    expect(await redis.hget(keys.grant(t, 'hs_lua', mac(31)), 'ap')).toBe('AP-2');
  });
});
