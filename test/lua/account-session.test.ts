import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keys } from '../../engine/redis/keys.js';
import { connect, freshTenant, mac, putVoucher, useVoucher } from '../fixtures/lua-voucher.js';

const MB = 1_048_576;
const DAY = '20261122';

/** account-session-2.lua: one Accounting-Request against a live session, its quotas checked atomically. */
describe('account-session-2.lua', () => {
  let redis: Redis;
  beforeAll(() => { redis = connect(); });
  afterAll(() => { redis.disconnect(); });

  /** A live session of device n from a voucher with the given daily quota (MB). */
  const session = async (n: number, quotaMb = 0): Promise<{ t: string; grant: string; daily: string; sid: string }> => {
    const t = await freshTenant(redis);
    await putVoucher(redis, t, 'ACCT', { id: 'vch_acct', max: 10, quotaMb });
    const used = await useVoucher(redis, t, 'ACCT', { now: 1_000, mac: mac(n) });
    expect(used[0]).toBe('ok');
    return { t, grant: keys.grant(t, 'hs_lua', mac(n)), daily: keys.dailyUsage(t, mac(n), DAY), sid: String(used[1]) };
  };
  const account = (s: { grant: string; daily: string }, now: number, acctId: string, tin: number, tout: number, ip = '', ap = '', signal = '') =>
    redis.accountSessionV1(s.grant, s.daily, now, acctId, tin, tout, ip, ap, signal);

  it("answers {'none'} for a device without a session, and writes nothing", async () => {
    const t = await freshTenant(redis);
    const s = { grant: keys.grant(t, 'hs_lua', mac(9)), daily: keys.dailyUsage(t, mac(9), DAY) };
    expect(await account(s, 2_000, 'a1', 10, 10)).toEqual(['none']);
    expect(await redis.exists(s.grant, s.daily)).toBe(0);
  });

  it('adds only the difference of running totals: a retransmission counts nothing, and activity moves only with traffic', async () => {
    const s = await session(1);
    expect(await account(s, 2_000, 'a1', 0, 0)).toEqual(['ok', s.sid, 0, 0, 0, 1_000]);
    expect(await account(s, 3_000, 'a1', 1_000, 2_000, '10.1.0.7', 'AP-North', '-61')).toEqual(['ok', s.sid, 1_000, 2_000, 3_000, 3_000]);
    // The same totals again (another Acct-Delay-Time): nothing added, last activity unchanged.
    expect(await account(s, 4_000, 'a1', 1_000, 2_000)).toEqual(['ok', s.sid, 1_000, 2_000, 3_000, 3_000]);
    expect(await redis.get(s.daily)).toBe('3000');
    expect(await redis.ttl(s.daily)).toBeGreaterThan(172_000);
    expect(await redis.hmget(s.grant, 'ip', 'ap', 'signal', 'last')).toEqual(['10.1.0.7', 'AP-North', '-61', '3000']);
  });

  it('a new Acct-Session-Id counts from its own zero without resetting; counters that go backwards restart', async () => {
    const s = await session(2);
    await account(s, 2_000, 'a1', 500, 500);
    // The device reconnected: the NAS reports a new session id with small totals.
    expect(await account(s, 3_000, 'a2', 100, 50)).toEqual(['ok', s.sid, 600, 550, 1_150, 3_000]);
    // The NAS restarted its counters for the same id: the new totals are counted as new traffic.
    expect(await account(s, 4_000, 'a2', 30, 20)).toEqual(['ok', s.sid, 630, 570, 1_200, 4_000]);
  });

  it('the daily counter is per device and tenant across sessions: reaching the quota answers daily_quota', async () => {
    const s = await session(3, 1);
    expect((await account(s, 2_000, 'a1', MB - 10, 9))[0]).toBe('ok');
    expect(await account(s, 3_000, 'a1', MB - 10, 10)).toEqual(['daily_quota', s.sid, MB - 10, 10, MB]);
  });

  it('a session quota (squota, MB) is checked first and answers session_quota', async () => {
    const s = await session(4, 1);
    await redis.hset(s.grant, 'squota', 1);
    expect(await account(s, 2_000, 'a1', MB, 0)).toEqual(['session_quota', s.sid, MB, 0, MB]);
  });
});
