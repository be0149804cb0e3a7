import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { keys, luaTest as it, mac } from '../support/lua.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

const MB = 1_048_576;
const DAY = '20261122';
/** The tenant a key is tagged with ({t:<tenant>}): the activity keys go with the grant's tenant. */
const tenantOf = (key: string): string => /^\{t:([^}]+)\}/.exec(key)![1]!;

/** account-session-3.lua: one Accounting-Request against a live session, its quotas checked atomically. */
describe('account-session-3.lua', () => {
  /** A live session of device n from a voucher with the given daily quota (MB). */
  const session = async (redis: Redis, t: string, n: number, quotaMb = 0): Promise<{ grant: string; daily: string; sid: string }> => {
    await putVoucher(redis, t, 'ACCT', { id: 'vch_acct', max: 10, quotaMb });
    const used = await useVoucher(redis, t, 'ACCT', { now: 1_000, mac: mac(n) });
    expect(used[0]).toBe('ok');
    return { grant: keys.grant(t, 'hs_lua', mac(n)), daily: keys.dailyUsage(t, mac(n), DAY), sid: String(used[1]) };
  };
  const accountRaw = (redis: Redis, s: { grant: string; daily: string }, now: number, acctId: string, tin: number, tout: number, ip = '', ap = '', signal = '',
    status: 'start' | 'interim' | 'stop' = 'interim') =>
    redis.accountSessionV4(s.grant, s.daily, keys.liveByAp(tenantOf(s.grant)), now, acctId, tin, tout, ip, ap, signal, status);
  /** The reply without its two byte deltas (the test below checks those). */
  const account = async (...a: Parameters<typeof accountRaw>) => (await accountRaw(...a)).slice(0, 7);

  it('returns the bytes each request added: the difference, 0 for a retransmit, all of it after the counters went back', async ({ redis, tenant: t }) => {
    const s = await session(redis, t, 7);
    expect((await accountRaw(redis, s, 2_000, 'a1', 1_000, 2_000)).slice(7)).toEqual([1_000, 2_000]);
    expect((await accountRaw(redis, s, 3_000, 'a1', 1_000, 2_000)).slice(7)).toEqual([0, 0]);
    expect((await accountRaw(redis, s, 4_000, 'a1', 1_200, 2_000)).slice(7)).toEqual([200, 0]);
    expect((await accountRaw(redis, s, 5_000, 'a1', 500, 100)).slice(7)).toEqual([500, 100]);
    // The daily counter has its lifetime from its first write.
    expect(await redis.ttl(s.daily)).toBeGreaterThan(172_000);
  });

  it("answers {'none'} for a device without a session, and writes nothing", async ({ redis, tenant: t }) => {
    const s = { grant: keys.grant(t, 'hs_lua', mac(9)), daily: keys.dailyUsage(t, mac(9), DAY) };
    expect(await account(redis, s, 2_000, 'a1', 10, 10)).toEqual(['none']);
    expect(await redis.exists(s.grant, s.daily)).toBe(0);
  });

  it('adds only the difference of running totals: a retransmission counts nothing, and activity moves only with traffic', async ({ redis, tenant: t }) => {
    const s = await session(redis, t, 1);
    expect(await account(redis, s, 2_000, 'a1', 0, 0)).toEqual(['ok', s.sid, 0, 0, 0, 1_000, 1]);
    expect(await account(redis, s, 3_000, 'a1', 1_000, 2_000, '10.1.0.7', 'AP-North', '-61')).toEqual(['ok', s.sid, 1_000, 2_000, 3_000, 3_000, 1]);
    // The same totals again (another Acct-Delay-Time): nothing added, last activity unchanged.
    expect(await account(redis, s, 4_000, 'a1', 1_000, 2_000)).toEqual(['ok', s.sid, 1_000, 2_000, 3_000, 3_000, 1]);
    expect(await redis.get(s.daily)).toBe('3000');
    expect(await redis.ttl(s.daily)).toBeGreaterThan(172_000);
    expect(await redis.hmget(s.grant, 'ip', 'ap', 'signal', 'last')).toEqual(['10.1.0.7', 'AP-North', '-61', '3000']);
  });

  it('a new Acct-Session-Id counts from its own zero without resetting; counters that go backwards restart', async ({ redis, tenant: t }) => {
    const s = await session(redis, t, 2);
    await account(redis, s, 2_000, 'a1', 500, 500);
    // The device reconnected: the NAS starts a new session id with small totals.
    expect(await account(redis, s, 3_000, 'a2', 100, 50, '', '', '', 'start')).toEqual(['ok', s.sid, 600, 550, 1_150, 3_000, 1]);
    // The NAS restarted its counters for the same id: the new totals are counted as new traffic.
    expect(await account(redis, s, 4_000, 'a2', 30, 20)).toEqual(['ok', s.sid, 630, 570, 1_200, 4_000, 1]);
  });

  it('the daily counter is per device and tenant across sessions: reaching the quota answers daily_quota', async ({ redis, tenant: t }) => {
    const s = await session(redis, t, 3, 1);
    expect((await account(redis, s, 2_000, 'a1', MB - 10, 9))[0]).toBe('ok');
    expect(await account(redis, s, 3_000, 'a1', MB - 10, 10)).toEqual(['daily_quota', s.sid, MB - 10, 10, MB, 3_000, 1]);
  });

  it('a session quota (squota, MB) is checked first and answers session_quota', async ({ redis, tenant: t }) => {
    const s = await session(redis, t, 4, 1);
    await redis.hset(s.grant, 'squota', 1);
    expect(await account(redis, s, 2_000, 'a1', MB, 0)).toEqual(['session_quota', s.sid, MB, 0, MB, 2_000, 1]);
  });
  it('a roam between two NASes counts each Acct-Session-Id once, however their reports interleave; only the current one can stop the session', async ({ redis, tenant: t }) => {
    const s = await session(redis, t, 5);
    expect(await account(redis, s, 2_000, 'ap1', 100, 0, '10.1.0.1', 'AP-1', '', 'start')).toEqual(['ok', s.sid, 100, 0, 100, 2_000, 1]);
    // The device moves to AP-2, its own NAS, which starts its own session id.
    expect(await account(redis, s, 3_000, 'ap2', 5, 0, '10.1.0.2', 'AP-2', '', 'start')).toEqual(['ok', s.sid, 105, 0, 105, 3_000, 1]);
    // AP-1's late interim and its Stop: only their growth counts, and they are not the current id.
    expect(await account(redis, s, 4_000, 'ap1', 140, 0, '10.1.0.1', 'AP-1')).toEqual(['ok', s.sid, 145, 0, 145, 4_000, 0]);
    expect(await account(redis, s, 5_000, 'ap1', 150, 0, '', '', '', 'stop')).toEqual(['ok', s.sid, 155, 0, 155, 5_000, 0]);
    expect(await account(redis, s, 6_000, 'ap2', 15, 0)).toEqual(['ok', s.sid, 165, 0, 165, 6_000, 1]);
    // 150 on AP-1 and 15 on AP-2: 165 in all, the daily counter too; the console fields are AP-2's.
    expect(await redis.get(s.daily)).toBe('165');
    expect(await redis.hmget(s.grant, 'aid', 'ip', 'ap', 'a:ap1', 'a:ap2')).toEqual(['ap2', '10.1.0.2', 'AP-2', '150 0', '15 0']);
    // AP-1 retransmits its Stop with another Acct-Delay-Time: nothing more is counted.
    expect(await account(redis, s, 7_000, 'ap1', 150, 0, '', '', '', 'stop')).toEqual(['ok', s.sid, 165, 0, 165, 6_000, 0]);
    // The Stop of the current id is the one that ends the session (the caller ends it).
    expect(await account(redis, s, 8_000, 'ap2', 20, 0, '', '', '', 'stop')).toEqual(['ok', s.sid, 170, 0, 170, 8_000, 1]);
  });

  it('reads the totals a grant kept before there was a field per Acct-Session-Id', async ({ redis, tenant: t }) => {
    const s = await session(redis, t, 6);
    await redis.hset(s.grant, 'aid', 'old', 'ain', 700, 'aout', 300, 'bin', 700, 'bout', 300);
    expect(await account(redis, s, 2_000, 'old', 750, 300)).toEqual(['ok', s.sid, 750, 300, 50, 2_000, 1]);
    expect(await redis.hmget(s.grant, 'ain', 'aout', 'a:old')).toEqual([null, null, '750 300']);
  });
});
