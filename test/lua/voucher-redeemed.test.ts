import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { EVENT_FIELD } from '../../engine/events/types.js';
import { putVoucher, useVoucher } from '../fixtures/lua-voucher.js';
import { keys, luaTest as it, mac } from '../support/lua.js';

/** The tenant's events as {type, site, data}, oldest first. */
async function events(redis: Redis, t: string): Promise<{ type: string; ts: string; site: string; data: Record<string, unknown> }[]> {
  return (await redis.xrange(keys.events(t), '-', '+')).map(([, f]) => {
    const m: Record<string, string> = {};
    for (let i = 0; i + 1 < f.length; i += 2) m[f[i]!] = f[i + 1]!;
    return { type: m[EVENT_FIELD.type]!, ts: m[EVENT_FIELD.ts]!, site: m[EVENT_FIELD.site]!, data: JSON.parse(m[EVENT_FIELD.data]!) as Record<string, unknown> };
  });
}
const redeemed = async (redis: Redis, t: string) => (await events(redis, t)).filter((e) => e.type === 'voucher.redeemed');

/**
 * use-voucher-18.lua writes voucher.redeemed in the step that spends the use
 * (docs/events.md): once per spent use, never for a device that gets its live
 * session back, nor for a refusal.
 */
describe('use-voucher-18.lua: voucher.redeemed', () => {
  const T0 = 1_800_000_000_000;

  it('one event per spent use, with the voucher, the session and the uses left, after the session.start', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'RED-1', { id: 'vch_red1', max: 2 });
    const r = await useVoucher(redis, t, 'RED-1', { now: T0, mac: mac(1), hotspot: 'hs_a' });
    expect(r.slice(0, 1)).toEqual(['ok']);
    const all = await events(redis, t);
    expect(all.map((e) => e.type)).toEqual(['device.new', 'session.start', 'voucher.redeemed']);
    expect(all[2]).toEqual({
      type: 'voucher.redeemed', ts: String(T0), site: 'hs_a',
      data: { voucher_id: 'vch_red1', code: 'RED-1', session_id: r[1], mac: mac(1), hotspot_id: 'hs_a', uses: 1, max_uses: 2, uses_left: 1 },
    });
    const second = await useVoucher(redis, t, 'RED-1', { now: T0 + 1, mac: mac(2), hotspot: 'hs_a' });
    expect((await redeemed(redis, t)).map((e) => e.data)).toEqual([
      expect.objectContaining({ mac: mac(1), uses: 1, uses_left: 1 }),
      expect.objectContaining({ mac: mac(2), session_id: second[1], uses: 2, uses_left: 0 }),
    ]);
  });

  it('none when the device gets its live session back: no use is spent', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'RED-2', { id: 'vch_red2', max: 3 });
    await useVoucher(redis, t, 'RED-2', { now: T0, mac: mac(1) });
    const again = await useVoucher(redis, t, 'RED-2', { now: T0 + 5_000, mac: mac(1) });
    expect(again[5]).toBe(1); // reused
    expect(again[3]).toBe(1); // still one use
    expect(await redeemed(redis, t)).toHaveLength(1);
  });

  it('none for a refusal: unknown, expired, used up', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'RED-OLD', { id: 'vch_old', max: 5, exp: T0 - 1 });
    await putVoucher(redis, t, 'RED-ONE', { id: 'vch_one', max: 1 });
    expect((await useVoucher(redis, t, 'RED-NONE', { now: T0, mac: mac(1) }))[0]).toBe('not_found');
    expect((await useVoucher(redis, t, 'RED-OLD', { now: T0, mac: mac(1) }))[0]).toBe('expired');
    expect((await useVoucher(redis, t, 'RED-ONE', { now: T0, mac: mac(1) }))[0]).toBe('ok');
    expect((await useVoucher(redis, t, 'RED-ONE', { now: T0, mac: mac(2) }))[0]).toBe('exhausted');
    expect((await redeemed(redis, t)).map((e) => e.data.voucher_id)).toEqual(['vch_one']);
  });

  it('an unlimited voucher says so: max_uses and uses_left null', async ({ redis, tenant: t }) => {
    await putVoucher(redis, t, 'RED-INF', { id: 'vch_inf', max: -1 });
    await useVoucher(redis, t, 'RED-INF', { now: T0, mac: mac(3) });
    expect((await redeemed(redis, t))[0]!.data).toMatchObject({ voucher_id: 'vch_inf', uses: 1, max_uses: null, uses_left: null });
  });
});
