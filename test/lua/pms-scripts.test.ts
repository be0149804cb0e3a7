import { describe, expect } from 'vitest';
import { until } from '../support/poll.js';
import { keys, luaTest as test } from '../support/lua.js';

/**
 * The room sign-in scripts (engine/redis/lua/*-pms-*.lua) against a real
 * Redis: the link's lease, the check-out that excludes a racing sign-in, and
 * the guessing windows a match gives its place back to.
 */
describe('PMS scripts', () => {
  test('hold-pms-lease-1: one holder; renewed by it; another refused until it lapses; released only by its holder', async ({ redis, tenant }) => {
    const k = keys.pmsLease(tenant, 'hs_1');
    // A lease of a minute while another process must be refused (one of 300 ms could lapse in a stall of a busy machine
    // before the refusal, and node-b would take it); its last renewal is a short one.
    expect(await redis.holdPmsLeaseV1(k, 'node-a', 'hold', 60_000)).toBe(1);
    expect(await redis.holdPmsLeaseV1(k, 'node-b', 'hold', 300)).toBe(0);
    expect(await redis.holdPmsLeaseV1(k, 'node-a', 'hold', 60_000)).toBe(1); // renewal
    expect(await redis.holdPmsLeaseV1(k, 'node-b', 'release', 0)).toBe(0);
    expect(await redis.get(k)).toBe('node-a');
    // node-a renews for 300 ms and then stops (a dead process): node-b takes the link once the lease lapses.
    expect(await redis.holdPmsLeaseV1(k, 'node-a', 'hold', 300)).toBe(1);
    await until(async () => (await redis.holdPmsLeaseV1(k, 'node-b', 'hold', 300)) === 1, { what: 'takeover after the lease lapsed' });
    expect(await redis.get(k)).toBe('node-b');
    expect(await redis.holdPmsLeaseV1(k, 'node-b', 'release', 0)).toBe(1);
    expect(await redis.exists(k)).toBe(0);
  });

  test('check-out-pms-guest-3 and attach-pms-session-2 exclude each other: a session is attached and ended, or refused', async ({ redis, tenant }) => {
    const g = keys.pmsGuests(tenant, 'hs_1');
    const room = keys.pmsRoom(tenant, 'hs_1', '101');
    const sess = keys.pmsSessions(tenant, 'hs_1', 'R1');
    await redis.multi().hset(g, 'R1', JSON.stringify({ rn: '101', gn: 'KÖHLER', gf: '', gs: 0 })).sadd(room, 'R1').exec();
    expect(await redis.attachPmsSessionV1(g, sess, 'R1', 'sess_a')).toBe(1);
    // A stale room (the guest moved meanwhile): nothing removed, the caller reads again.
    expect(await redis.checkOutPmsGuestV2(g, keys.pmsRoom(tenant, 'hs_1', '999'), sess, 'R1', '999', 60_000)).toEqual(['moved']);
    expect(await redis.checkOutPmsGuestV2(g, room, sess, 'R1', '101', 60_000)).toEqual(['out', 'sess_a']);
    expect(await redis.exists(g, room)).toBe(0);
    // The sign-in that lost the race: nothing attached, it ends its session itself.
    expect(await redis.attachPmsSessionV1(g, sess, 'R1', 'sess_b')).toBe(0);
    expect(await redis.smembers(sess)).toEqual(['sess_a']);
    // The same check-out again (a resent command, a repeated GO), room known or not: the same sessions to end, not 'gone'.
    expect(await redis.checkOutPmsGuestV2(g, room, sess, 'R1', '101', 60_000)).toEqual(['out', 'sess_a']);
    expect(await redis.checkOutPmsGuestV2(g, keys.pmsRoom(tenant, 'hs_1', ''), sess, 'R1', '', 60_000)).toEqual(['out', 'sess_a']);
    const ttl = await redis.pttl(sess);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    // Once the set has lapsed, the reservation is simply gone.
    await redis.del(sess);
    expect(await redis.checkOutPmsGuestV2(g, room, sess, 'R1', '101', 60_000)).toEqual(['gone']);
  });

  test('reserve-pms-guess-3: a device past its limit is refused with the true wait, counted as a refusal, nothing added', async ({ redis, tenant }) => {
    const d = keys.pmsGuessesByDevice(tenant, 'hs_1', '02:00:00:00:00:01');
    const a = keys.pmsGuessesByAddress(tenant, '192.0.2.7');
    const r = keys.guessRefusals(tenant, 1);
    const now = 1_000_000;
    for (let i = 0; i < 3; i++) expect(await redis.reservePmsGuessV1(d, a, r, now + i, 60_000, 3, 10, `m${i}`, 'hs_1', 60_000)).toEqual(['ok']);
    expect(await redis.reservePmsGuessV1(d, a, r, now + 10, 60_000, 3, 10, 'm9', 'hs_1', 60_000)).toEqual(['too_many_attempts', 60_000 - 10, 'device']);
    expect(await redis.zcard(d)).toBe(3);
    expect(await redis.hget(r, 'hs_1')).toBe('1');
    // A match gives its place back (the caller's ZREM): the device may try again.
    await redis.zrem(d, 'm2');
    expect(await redis.reservePmsGuessV1(d, a, r, now + 11, 60_000, 3, 10, 'm10', 'hs_1', 60_000)).toEqual(['ok']);
    // The address limit, on its own.
    const d2 = keys.pmsGuessesByDevice(tenant, 'hs_1', '02:00:00:00:00:02');
    for (let i = 0; i < 6; i++) await redis.reservePmsGuessV1(keys.pmsGuessesByDevice(tenant, 'hs_1', `x${i}`), a, r, now + 20 + i, 60_000, 3, 10, `n${i}`, 'hs_1', 60_000);
    const out = await redis.reservePmsGuessV1(d2, a, r, now + 40, 60_000, 3, 10, 'n99', 'hs_1', 60_000);
    expect(out[0]).toBe('too_many_attempts');
    expect(out[2]).toBe('address');
  });
});
