import type { Redis } from 'ioredis';
import { activityKeys } from '../../engine/events/activity-keys.js';
import { describe, expect } from 'vitest';
import { serverRunId } from '../../engine/redis/scripts.js';
import { keys, luaTenant, luaTest as it, mac } from '../support/lua.js';
import { outbox, putVoucher, useVoucher, type UseArgs } from '../fixtures/lua-voucher.js';

/**
 * The voucher use scripts against a real Redis, with the clock passed in:
 * the only place a use is counted, so every refusal must leave the counter,
 * the devices hash, the grant and the outbox exactly as they were.
 */
describe('use-voucher-18.lua', () => {
  let redis: Redis;
  it.beforeAll(({ redis: r }) => { redis = r; });

  const use = (t: string, code: string, a: UseArgs): Promise<unknown[]> => useVoucher(redis, t, code, a);
  /**
   * An 'ok' answer's common part: ok, session id, grant until, current uses,
   * max uses, reused. use-voucher-18 adds the replaced session to a new use.
   */
  const ok = (r: unknown[]): unknown[] => {
    expect(r[0], JSON.stringify(r)).toBe('ok');
    expect(r).toHaveLength(r[5] === 0 ? 7 : 6);
    return r.slice(0, 6);
  };
  const uses = (t: string, code: string): Promise<string | null> => redis.hget(keys.voucher(t, code), 'uses');

  it('answers not_loaded with the server run_id and changes nothing when the tenant loaded marker is missing', async () => {
    const t = await luaTenant(redis, false);
    const runId = await serverRunId(redis);
    expect(await putVoucher(redis, t, 'NL1', { id: 'vch_nl1', max: 5 })).toBe(1);
    const now = Date.now();
    expect(await use(t, 'NL1', { now, mac: mac(1) })).toEqual(['not_loaded', runId]);
    expect(await uses(t, 'NL1')).toBe('0');
    expect(await redis.exists(keys.grant(t, 'hs_lua', mac(1)), keys.voucherDevices(t, 'NL1'), keys.live(t, 'hs_lua'))).toBe(0);
    expect(await outbox(redis, t)).toEqual([]);

    // The marker is all that was missing.
    await redis.set(keys.loaded(t), runId);
    ok(await use(t, 'NL1', { now, mac: mac(1) }));
  });

  it('answers not_loaded while the marker names another Redis server (a restart or failover), ok once it names this one', async ({ tenant: t }) => {
    const runId = await serverRunId(redis);
    expect(await redis.get(keys.loaded(t))).toBe(runId);
    await putVoucher(redis, t, 'RID', { id: 'vch_rid', max: 5 });
    const now = Date.now();
    ok(await use(t, 'RID', { now, mac: mac(1) }));

    // What a restarted Redis holds: the marker from before, written by the server that ran then.
    // Also the marker of the V2 script (a time stamp) and one holding this id in another case.
    for (const stale of ['0123456789abcdef0123456789abcdef01234567', String(Date.now()), runId.toUpperCase(), `${runId} `]) {
      await redis.set(keys.loaded(t), stale);
      expect(await use(t, 'RID', { now, mac: mac(2) }), stale).toEqual(['not_loaded', runId]);
      // Not even a blocked device learns anything before the load.
      await redis.set(keys.block(t, mac(3)), 'permanent');
      expect(await use(t, 'RID', { now, mac: mac(3) })).toEqual(['not_loaded', runId]);
    }
    expect(await uses(t, 'RID')).toBe('1');
    expect(await redis.exists(keys.grant(t, 'hs_lua', mac(2)))).toBe(0);
    expect(await outbox(redis, t)).toHaveLength(1);

    await redis.set(keys.loaded(t), runId);
    expect(ok(await use(t, 'RID', { now, mac: mac(2) }))).toEqual(['ok', expect.any(String), expect.any(String), 2, 5, 0]);
    expect(await use(t, 'RID', { now, mac: mac(3) })).toEqual(['blocked']);
  });

  it('answers not_found for a code the tenant does not hold, also when another tenant holds it', async ({ tenant: a }) => {
    const b = await luaTenant(redis);
    await putVoucher(redis, a, 'ONLYA', { id: 'vch_a', max: 1 });
    expect(await use(b, 'ONLYA', { now: Date.now(), mac: mac(1) })).toEqual(['not_found']);
    expect(await use(a, 'onlya', { now: Date.now(), mac: mac(1) })).toEqual(['not_found']);
    expect(await outbox(redis, b)).toEqual([]);
    expect(await uses(a, 'ONLYA')).toBe('0');
  });

  it('counts a use: raises the counter, writes the grant and the devices entry', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'OK1', { id: 'vch_ok1', max: 3, downKbps: 2000, upKbps: 1000, quotaMb: 500, profile: 'basic' });
    const now = Date.now();
    const r = await use(t, 'OK1', { now, mac: mac(7), hotspot: 'hs_x', ip: '10.0.0.7', ssid: 'Guest', minutes: 30 });
    const until = now + 30 * 60_000;
    expect(ok(r)).toEqual(['ok', expect.stringMatching(/^sess_/), String(until), 1, 3, 0]);
    const sid = r[1] as string;
    expect(await uses(t, 'OK1')).toBe('1');
    expect(await redis.hget(keys.voucherDevices(t, 'OK1'), mac(7))).toBe(sid);
    const grantKey = keys.grant(t, 'hs_x', mac(7));
    expect(await redis.hgetall(grantKey)).toMatchObject({
      sid, until: String(until), method: 'voucher', vid: 'vch_ok1',
      down: '2000', up: '1000', quota: '500', profile: 'basic', ip: '10.0.0.7', ssid: 'Guest', created: String(now),
    });
    expect(r[6]).toBe('');
    expect(await redis.hmget(grantKey, 'user', 'hs', 'mac')).toEqual(['OK1', 'hs_x', mac(7)]);
    // The session is watched: in the hotspot's live set, scored by its end, and findable by id.
    expect(await redis.zscore(keys.live(t, 'hs_x'), sid)).toBe(String(until));
    expect(await redis.get(keys.sessionRef(t, sid))).toBe(`hs_x ${mac(7)}`);
  });

  it("uses the voucher's own session minutes over the caller's default", async ({ tenant: t }) => {
    await putVoucher(redis, t, 'DUR', { id: 'vch_dur', max: 1, minutes: 90 });
    const now = Date.now();
    expect(ok(await use(t, 'DUR', { now, mac: mac(1), minutes: 5 }))[2]).toBe(String(now + 90 * 60_000));
  });

  it("carries the voucher's session quota into the grant, and none when the voucher sets none", async ({ tenant: t }) => {
    const now = Date.now();
    const squota = (m: string): Promise<string | null> => redis.hget(keys.grant(t, 'hs_lua', m), 'squota');

    await putVoucher(redis, t, 'SQ', { id: 'vch_sq', max: 5, quotaMb: 500, sessionQuotaMb: 25 });
    ok(await use(t, 'SQ', { now, mac: mac(1) }));
    expect(await redis.hmget(keys.grant(t, 'hs_lua', mac(1)), 'squota', 'quota')).toEqual(['25', '500']);

    await putVoucher(redis, t, 'NOSQ', { id: 'vch_nosq', max: 5 });
    ok(await use(t, 'NOSQ', { now, mac: mac(3) }));
    expect(await squota(mac(3))).toBe('0');
    // The method is the last argument now that the quota fallback is gone.
    expect(await redis.hget(keys.grant(t, 'hs_lua', mac(3)), 'method')).toBe('voucher');

    // A definition written before vouchers had a session quota has no squota field: none.
    await putVoucher(redis, t, 'OLD', { id: 'vch_old', max: 5 });
    await redis.hdel(keys.voucher(t, 'OLD'), 'squota');
    ok(await use(t, 'OLD', { now, mac: mac(5) }));
    expect(await squota(mac(5))).toBe('0');
  });

  it('is valid up to expires_at - 1 ms and expired from expires_at on', async ({ tenant: t }) => {
    const exp = Date.now() + 3_600_000;
    await putVoucher(redis, t, 'EXP', { id: 'vch_exp', max: 10, exp });

    ok(await use(t, 'EXP', { now: exp - 1, mac: mac(1) }));
    expect(await use(t, 'EXP', { now: exp, mac: mac(2) })).toEqual(['expired', String(exp)]);
    expect(await use(t, 'EXP', { now: exp + 1, mac: mac(3) })).toEqual(['expired', String(exp)]);
    // Expiry also ends the reuse of a live grant: the device that got in at exp - 1 is refused at exp.
    expect(await use(t, 'EXP', { now: exp, mac: mac(1) })).toEqual(['expired', String(exp)]);

    expect(await uses(t, 'EXP')).toBe('1');
    expect(await outbox(redis, t)).toHaveLength(1);
    expect(await redis.exists(keys.grant(t, 'hs_lua', mac(2)))).toBe(0);
  });

  it('never expires with expires_at 0', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'NEVER', { id: 'vch_never', max: 1, exp: 0 });
    ok(await use(t, 'NEVER', { now: Date.now() + 50 * 365 * 86_400_000, mac: mac(1) }));
  });

  it('is exhausted at max_uses: the refused device changes nothing', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'EXH', { id: 'vch_exh', max: 2 });
    const now = Date.now();
    expect(ok(await use(t, 'EXH', { now, mac: mac(1) }))).toEqual(['ok', expect.any(String), expect.any(String), 1, 2, 0]);
    expect(ok(await use(t, 'EXH', { now, mac: mac(2) }))).toEqual(['ok', expect.any(String), expect.any(String), 2, 2, 0]);
    expect(await use(t, 'EXH', { now, mac: mac(3) })).toEqual(['exhausted', 2, 2]);
    expect(await use(t, 'EXH', { now: now + 1, mac: mac(4) })).toEqual(['exhausted', 2, 2]);

    expect(await uses(t, 'EXH')).toBe('2');
    expect(await redis.hkeys(keys.voucherDevices(t, 'EXH'))).toEqual([mac(1), mac(2)]);
    expect(await redis.exists(keys.grant(t, 'hs_lua', mac(3)))).toBe(0);
    expect(await outbox(redis, t)).toHaveLength(2);
  });

  it('accepts only the listed SSIDs, matched whole and case-sensitively', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'SSID', { id: 'vch_ssid', max: 100, ssids: ['Guest', 'Lobby-5G'] });
    const now = Date.now();
    ok(await use(t, 'SSID', { now, mac: mac(1), ssid: 'Guest' }));
    ok(await use(t, 'SSID', { now, mac: mac(2), ssid: 'Lobby-5G' }));
    for (const [i, ssid] of ['Staff', '', 'Gues', 'Guest2', 'guest', 'Lobby', 'Guest\nLobby-5G', 'Guest\n'].entries()) {
      expect(await use(t, 'SSID', { now, mac: mac(10 + i), ssid }), `ssid ${JSON.stringify(ssid)}`).toEqual(['ssid']);
    }
    expect(await uses(t, 'SSID')).toBe('2');
    expect(await outbox(redis, t)).toHaveLength(2);

    // Without a restriction every SSID, or none, is fine.
    await putVoucher(redis, t, 'ANY', { id: 'vch_any', max: 100 });
    ok(await use(t, 'ANY', { now, mac: mac(1), ssid: 'Staff' }));
    ok(await use(t, 'ANY', { now, mac: mac(2), ssid: '' }));
  });

  it('gives the same device its live session back without counting a use', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'SAME', { id: 'vch_same', max: 1 });
    const now = Date.now();
    const first = ok(await use(t, 'SAME', { now, mac: mac(1), minutes: 10 }));
    expect(first).toEqual(['ok', expect.any(String), String(now + 600_000), 1, 1, 0]);
    // Single use, yet the same device may come back while its grant lasts (a browser retry, a reconnect).
    for (const at of [now + 1, now + 300_000, now + 600_000 - 1]) {
      expect(ok(await use(t, 'SAME', { now: at, mac: mac(1), minutes: 10 }))).toEqual(['ok', first[1], first[2], 1, 1, 1]);
    }
    // Another device is refused.
    expect(await use(t, 'SAME', { now: now + 2, mac: mac(2) })).toEqual(['exhausted', 1, 1]);
    // Once the grant has ended the device needs a new use, and there is none left.
    expect(await use(t, 'SAME', { now: now + 600_000, mac: mac(1), minutes: 10 })).toEqual(['exhausted', 1, 1]);
    expect(await uses(t, 'SAME')).toBe('1');
    expect(await outbox(redis, t)).toHaveLength(1);
  });

  it('counts a new use for the same device once its grant has ended', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'AGAIN', { id: 'vch_again', max: 3 });
    const now = Date.now();
    const first = await use(t, 'AGAIN', { now, mac: mac(1), minutes: 10 });
    const until = now + 600_000;
    expect(first[2]).toBe(String(until));
    const second = await use(t, 'AGAIN', { now: until, mac: mac(1), minutes: 10 });
    expect(ok(second)).toEqual(['ok', expect.stringMatching(/^sess_/), String(until + 600_000), 2, 3, 0]);
    expect(second[1]).not.toBe(first[1]);
    // The old session, past its end but still in the live set (no sweep yet), is ended here as a time-out
    // at its end time, before the new use, and named for the caller to forget.
    expect(second[6]).toBe(first[1]);
    expect(await redis.hget(keys.voucherDevices(t, 'AGAIN'), mac(1))).toBe(second[1]);
    expect(await redis.hget(keys.grant(t, 'hs_lua', mac(1)), 'sid')).toBe(second[1]);
    const records = await outbox(redis, t);
    expect(records.map((r) => [r.type, r.sid])).toEqual([['session_start', first[1]], ['session_end', first[1]], ['session_start', second[1]]]);
    expect(records[1]).toMatchObject({ reason: 'session_timeout', at: String(until) });
    expect(await redis.zscore(keys.live(t, 'hs_lua'), String(first[1]))).toBeNull();
  });

  it('ends the live session a new code replaces, once, with the bytes and details its grant held', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'OLD', { id: 'vch_old', max: 3 });
    await putVoucher(redis, t, 'NEW', { id: 'vch_new', max: 3 });
    const now = Date.now();
    const first = await use(t, 'OLD', { now, mac: mac(1), ip: '10.0.0.7', ssid: 'Guest', minutes: 60 });
    await redis.hset(keys.grant(t, 'hs_lua', mac(1)), 'bin', 5_000, 'bout', 700);
    const second = await use(t, 'NEW', { now: now + 1_000, mac: mac(1), ip: '10.0.0.8', ssid: 'Guest', minutes: 60 });
    expect(second[6]).toBe(first[1]);
    const ends = (await outbox(redis, t)).filter((r) => r.type === 'session_end');
    expect(ends).toEqual([{
      type: 'session_end', sid: first[1], hs: 'hs_lua', mac: mac(1), at: String(now + 1_000), reason: 'replaced',
      bin: '5000', bout: '700', ip: '10.0.0.7', ssid: 'Guest', user: 'OLD', method: 'voucher', by: '',
    }]);
    // The old session is no longer live; a later end of it (a racing sweep) finds it gone.
    expect(await redis.zscore(keys.live(t, 'hs_lua'), String(first[1]))).toBeNull();
    expect(await redis.endSessionV3(keys.grant(t, 'hs_lua', mac(1)), keys.live(t, 'hs_lua'), keys.sessionRef(t, String(first[1])), keys.outbox(t),
      ...activityKeys(t, now + 2_000),
      String(first[1]), now + 2_000, 'session_timeout', 'hs_lua', mac(1), '', '')).toEqual(['gone']);
  });

  it('counts a new use when the grant was removed (the session ended early)', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'GONE', { id: 'vch_gone', max: 2 });
    const now = Date.now();
    await use(t, 'GONE', { now, mac: mac(1) });
    await redis.del(keys.grant(t, 'hs_lua', mac(1)));
    expect(ok(await use(t, 'GONE', { now: now + 1, mac: mac(1) }))).toEqual(['ok', expect.any(String), expect.any(String), 2, 2, 0]);
  });

  it('never runs out with max_uses -1 and reports max -1', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'UNL', { id: 'vch_unl', max: -1 });
    const now = Date.now();
    for (let i = 1; i <= 40; i++) {
      expect(ok(await use(t, 'UNL', { now, mac: mac(i) }))).toEqual(['ok', expect.any(String), expect.any(String), i, -1, 0]);
    }
    expect(await uses(t, 'UNL')).toBe('40');
    expect(await outbox(redis, t)).toHaveLength(40);
  });

  it('writes exactly one outbox record per counted use: the session start, carrying the voucher', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'OUT', { id: 'vch_out', max: 2, ssids: ['Guest'] });
    const now = Date.now();
    const a = await use(t, 'OUT', { now, mac: mac(1), hotspot: 'hs_one', ip: '10.0.0.1', ssid: 'Guest', minutes: 15 });
    ok(await use(t, 'OUT', { now: now + 5, mac: mac(1), hotspot: 'hs_one', ssid: 'Guest' })); // reused
    expect(await use(t, 'OUT', { now: now + 6, mac: mac(2), hotspot: 'hs_one', ssid: 'Staff' })).toEqual(['ssid']);
    expect(await use(t, 'NOPE', { now: now + 7, mac: mac(2), hotspot: 'hs_one', ssid: 'Guest' })).toEqual(['not_found']);
    const b = await use(t, 'OUT', { now: now + 8, mac: mac(2), hotspot: 'hs_two', ip: '10.0.0.2', ssid: 'Guest', minutes: 15 });
    expect(await use(t, 'OUT', { now: now + 9, mac: mac(3), hotspot: 'hs_one', ssid: 'Guest' })).toEqual(['exhausted', 2, 2]);

    const extra = { user: 'OUT', method: 'voucher' };
    const records = await outbox(redis, t);
    expect(records).toEqual([
      { type: 'session_start', vid: 'vch_out', hs: 'hs_one', mac: mac(1), ip: '10.0.0.1', ssid: 'Guest', sid: a[1], at: String(now), until: String(now + 900_000), ...extra },
      { type: 'session_start', vid: 'vch_out', hs: 'hs_two', mac: mac(2), ip: '10.0.0.2', ssid: 'Guest', sid: b[1], at: String(now + 8), until: String(now + 8 + 900_000), ...extra },
    ]);
    // Its type, then the record as JSON with text values only (engine/store/outbox-record.ts).
    for (const [, fields] of await redis.xrange(keys.outbox(t), '-', '+')) {
      expect(fields).toEqual(['type', 'session_start', 'rec', expect.any(String)]);
      expect(Object.values(JSON.parse(fields[3]!) as object).every((v) => typeof v === 'string')).toBe(true);
    }
  });
});

describe('use-voucher-18.lua: block list', () => {
  let redis: Redis;
  it.beforeAll(({ redis: r }) => { redis = r; });

  it('refuses a blocked device before anything else and changes nothing', async ({ tenant: t }) => {
    await putVoucher(redis, t, 'BLK', { id: 'vch_blk', max: 5 });
    await redis.set(keys.block(t, mac(1)), 'permanent');
    const now = Date.now();
    expect(await useVoucher(redis, t, 'BLK', { now, mac: mac(1) })).toEqual(['blocked']);
    // Even an unknown code answers blocked: a blocked device learns nothing about codes.
    expect(await useVoucher(redis, t, 'NOPE', { now, mac: mac(1) })).toEqual(['blocked']);
    expect(await redis.hget(keys.voucher(t, 'BLK'), 'uses')).toBe('0');
    expect(await redis.exists(keys.grant(t, 'hs_lua', mac(1)), keys.live(t, 'hs_lua'))).toBe(0);
    expect(await outbox(redis, t)).toEqual([]);
    expect((await useVoucher(redis, t, 'BLK', { now, mac: mac(2) }))[0]).toBe('ok');
  });
});
