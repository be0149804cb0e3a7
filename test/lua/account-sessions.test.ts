import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { AccountBatcher, MAX_REPORTS_PER_CALL, type AccountReport } from '../../engine/sessions/account-batcher.js';
import { keys, luaTenant, luaTest as it, mac } from '../support/lua.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

const MB = 1_048_576;
const DAY = '20261122';
type Status = 'start' | 'interim' | 'stop';
type Row = [acctId: string, tin: number, tout: number, ip?: string, ap?: string, signal?: string, status?: Status];

/**
 * account-sessions-n.lua: a batch of one tenant's Accounting-Requests in one
 * call, each recorded as account-session-3.lua records it; and the
 * AccountBatcher that gathers an event-loop turn's reports into such calls.
 */
describe('account-sessions-n.lua', () => {
  /** Live sessions of devices `ns` at hotspot hs_lua, from one voucher (daily quota in MB). */
  const sessions = async (redis: Redis, t: string, ns: number[], quotaMb = 0): Promise<string[]> => {
    await putVoucher(redis, t, 'BATCH', { id: 'vch_batch', max: 1_000, quotaMb });
    const sids: string[] = [];
    for (const n of ns) {
      const used = await useVoucher(redis, t, 'BATCH', { now: 1_000, mac: mac(n) });
      expect(used[0]).toBe('ok');
      sids.push(String(used[1]));
    }
    return sids;
  };
  const single = (redis: Redis, t: string, n: number, now: number, [aid, tin, tout, ip = '', ap = '', signal = '', status = 'interim']: Row) =>
    redis.accountSessionV4(keys.grant(t, 'hs_lua', mac(n)), keys.dailyUsage(t, mac(n), DAY), keys.liveByAp(t), now, aid, tin, tout, ip, ap, signal, status);
  const batch = (redis: Redis, t: string, now: number, reports: [n: number, row: Row][]) => {
    const ks: string[] = [keys.liveByAp(t)];
    const argv: (string | number)[] = [];
    for (const [n, [aid, tin, tout, ip = '', ap = '', signal = '', status = 'interim']] of reports) {
      ks.push(keys.grant(t, 'hs_lua', mac(n)), keys.dailyUsage(t, mac(n), DAY));
      argv.push(now, aid, tin, tout, ip, ap, signal, status);
    }
    return redis.accountSessionsV2(ks.length, ...ks, ...argv);
  };
  /** What Redis holds of a tenant's devices after accounting: grants' accounting fields, daily counters, live per AP. */
  const state = async (redis: Redis, t: string, ns: number[]) => ({
    grants: await Promise.all(ns.map((n) => redis.hmget(keys.grant(t, 'hs_lua', mac(n)), 'bin', 'bout', 'last', 'aid', 'ip', 'ap', 'signal', 'a:a1', 'a:a2'))),
    daily: await Promise.all(ns.map((n) => redis.get(keys.dailyUsage(t, mac(n), DAY)))),
    lap: await redis.hgetall(keys.liveByAp(t)),
  });

  const script: [n: number, row: Row][][] = [
    [[1, ['a1', 100, 200, '10.0.0.1', 'AP-1', '-60', 'start']], [2, ['a1', 0, 0, '10.0.0.2', 'AP-1', '', 'start']], [3, ['a1', 5, 5]]],
    [[1, ['a1', 1_100, 2_200, '', '', '-55']], [2, ['a1', 40, 50, '', 'AP-2']], [3, ['a1', 5, 5]], [9, ['a1', 1, 1]]],
    [[1, ['a1', 1_100, 2_200]], [2, ['a2', 7, 0, '10.0.0.9', 'AP-2', '', 'start']], [3, ['a1', 2, 2]]],
    [[1, ['a1', MB, 0, '', '', '', 'stop']], [2, ['a1', 60, 50]], [3, ['a1', 12, 2]]],
  ];

  it('records each report of a batch exactly as account-session-3.lua records it alone, in order, with the same replies', async ({ redis, tenant: a }) => {
    const b = await luaTenant(redis);
    const ns = [1, 2, 3];
    const sa = await sessions(redis, a, ns, 1);
    const sb = await sessions(redis, b, ns, 1);
    let now = 2_000;
    for (const turn of script) {
      now += 1_000;
      const alone: unknown[] = [];
      for (const [n, row] of turn) alone.push(await single(redis, a, n, now, row));
      const together = await batch(redis, b, now, turn);
      // Session ids differ per tenant: compare the replies with each tenant's own.
      const norm = (r: unknown, sids: string[]) => JSON.stringify(r).replaceAll(sids[0]!, 'S1').replaceAll(sids[1]!, 'S2').replaceAll(sids[2]!, 'S3');
      expect(norm(together, sb)).toBe(norm(alone, sa));
    }
    expect(await state(redis, b, [...ns, 9])).toEqual(await state(redis, a, [...ns, 9]));
    // The Stop past the 1 MB daily quota answers it; device 9 has no session here.
    expect((await single(redis, a, 9, now, ['a1', 1, 1]))[0]).toBe('none');
  });

  it("a device's totals never go backwards in a batch, even when an older report of it comes after a newer one", async ({ redis, tenant: t }) => {
    await sessions(redis, t, [5]);
    const bin = async () => Number(await redis.hget(keys.grant(t, 'hs_lua', mac(5)), 'bin'));
    await batch(redis, t, 2_000, [[5, ['a1', 500, 0]], [5, ['a1', 900, 0]]]);
    expect(await bin()).toBe(900);
    // The 700 report overtaken by the 900 one (a retransmission late on the network): read as a NAS that restarted
    // its counters (account-report.lua), it adds, and the session's totals only grow.
    await batch(redis, t, 3_000, [[5, ['a1', 700, 0]], [5, ['a1', 1_000, 0]]]);
    expect(await bin()).toBeGreaterThanOrEqual(1_000);
  });

  it('refuses a key and argument count that does not make whole reports, writing nothing', async ({ redis, tenant: t }) => {
    await sessions(redis, t, [4]);
    const g = keys.grant(t, 'hs_lua', mac(4));
    await expect(redis.accountSessionsV2(3, keys.liveByAp(t), g, keys.dailyUsage(t, mac(4), DAY), 1, 'a1', 5, 5, '', '', ''))
      .rejects.toThrow(/8n ARGV/);
    await expect(redis.accountSessionsV2(2, keys.liveByAp(t), g, 1, 'a1', 5, 5, '', '', '', 'interim')).rejects.toThrow(/1 \+ 2n KEYS/);
    expect(await redis.hget(g, 'bin')).toBe('0');
  });

  it('AccountBatcher: the reports of one turn go in one call per tenant, each caller gets its own reply, a big turn is split', async ({ redis, tenant: t }) => {
    const u = await luaTenant(redis);
    const n = MAX_REPORTS_PER_CALL + 5;
    const devices = Array.from({ length: n }, (_, i) => 100 + i);
    const sids = await sessions(redis, t, devices);
    const usids = await sessions(redis, u, [1]);
    const calls = { batch: [] as number[], single: 0 };
    const spy = Object.create(redis) as Redis;
    spy.accountSessionsV2 = (numKeys: number, ...rest: (string | number)[]) => {
      calls.batch.push((numKeys - 1) / 2);
      return redis.accountSessionsV2(numKeys, ...rest);
    };
    spy.accountSessionV4 = ((...args: Parameters<Redis['accountSessionV4']>) => {
      calls.single++;
      return redis.accountSessionV4(...args);
    }) as Redis['accountSessionV4'];
    const batcher = new AccountBatcher(spy);
    const report = (tenant: string, d: number, tin: number): AccountReport => ({
      tenant, hs: 'hs_lua', mac: mac(d), day: DAY, nowMs: 5_000, acctId: 'a1', inOctets: tin, outOctets: 1, ip: '', ap: '', signal: '', status: 'interim',
    });
    const replies = await Promise.all([
      ...devices.map((d, i) => batcher.submit(report(t, d, 1_000 + i))),
      batcher.submit(report(u, 1, 42)),
    ]);
    // One tenant's turn: a full call and the rest; the other tenant's lone report through the single script.
    expect(calls).toEqual({ batch: [MAX_REPORTS_PER_CALL, 5], single: 1 });
    devices.forEach((_, i) => expect(replies[i]!.slice(0, 4)).toEqual(['ok', sids[i], 1_000 + i, 1]));
    expect(replies[n]!.slice(0, 4)).toEqual(['ok', usids[0], 42, 1]);
    // A later turn is a call of its own.
    await batcher.submit(report(t, 100, 2_000));
    expect(calls.single).toBe(2);
  });

  it('AccountBatcher: a call whose answer is lost is tried again one report at a time, and the retry adds nothing twice', async ({ redis, tenant: t }) => {
    const sids = await sessions(redis, t, [7, 8]);
    const calls = { batch: 0, single: 0 };
    const spy = Object.create(redis) as Redis;
    spy.accountSessionsV2 = (numKeys: number, ...rest: (string | number)[]) => {
      calls.batch++;
      // Redis ran the batch, but its answer is lost (a dropped connection).
      return redis.accountSessionsV2(numKeys, ...rest).then(() => { throw new Error('connection lost'); });
    };
    spy.accountSessionV4 = ((...args: Parameters<Redis['accountSessionV4']>) => {
      calls.single++;
      return redis.accountSessionV4(...args);
    }) as Redis['accountSessionV4'];
    const batcher = new AccountBatcher(spy);
    const report = (d: number): AccountReport => ({
      tenant: t, hs: 'hs_lua', mac: mac(d), day: DAY, nowMs: 5_000, acctId: 'a1', inOctets: 300, outOctets: 30, ip: '', ap: '', signal: '', status: 'interim',
    });
    const replies = await Promise.all([batcher.submit(report(7)), batcher.submit(report(8))]);
    expect(calls).toEqual({ batch: 1, single: 2 });
    // Recorded once, not twice: the retry finds the totals already there and adds nothing.
    expect(replies.map((r) => r.slice(0, 4))).toEqual([['ok', sids[0], 300, 30], ['ok', sids[1], 300, 30]]);
    expect(replies.map((r) => r.slice(7))).toEqual([[0, 0], [0, 0]]);
    expect(await redis.get(keys.dailyUsage(t, mac(7), DAY))).toBe('330');
  });
});
