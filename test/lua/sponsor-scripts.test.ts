import { Redis } from 'ioredis';
import { describe, expect, inject } from 'vitest';
import { defineScripts } from '../../engine/redis/scripts.js';
import { newLinkToken, SponsorStore, type NewRequest } from '../../engine/signin/sponsor/sponsor-store.js';
import { freshSessionId } from '../fixtures/lua-voucher.js';
import { keys, luaTenant, luaTest as it, mac } from '../support/lua.js';

const T0 = 1_800_000_000_000;
const HS = 'hs_lua';
const TTL = 30 * 60_000;

/**
 * request-sponsor-7.lua, approve-sponsor-15.lua, reject-sponsor-3.lua: a
 * request is filed within its limits; its link is used at most once across
 * connections (approve or reject, whichever comes first), an approval's use
 * and its session start are one step, and a blocked device or an unloaded
 * Redis leaves the link usable.
 */
describe('sponsor scripts', () => {
  const file = async (store: SponsorStore, t: string, over: Partial<NewRequest> = {}, now = T0) => {
    const { hash } = newLinkToken(t);
    const requestId = `spr_${Math.random().toString(36).slice(2, 18).padEnd(16, '0')}.${t}`;
    const r = await store.file({
      tenantId: t, requestId, tokenHash: hash, hotspotId: HS, mac: mac(1), ip: '10.0.0.9', ssid: 'Guest', guest: 'Ayşe', sponsor: 'ali@host.example',
      gateway: '', lang: 'tr', source: '192.0.2.7', linkTtlMs: TTL, limits: { perIp: 3, perMac: 2, perSponsor: 10 }, ...over,
    }, now);
    return { r, requestId, hash };
  };
  const approve = (store: SponsorStore, t: string, requestId: string, hash: string, now = T0 + 1000, device = mac(1), sessionId = freshSessionId()) => store.approve({
    tenantId: t, requestId, tokenHash: hash, mac: device, hotspotId: HS, ip: '10.0.0.9', ssid: 'Guest', sessionId,
    minutes: 240, idleSec: 0, user: 'ali@host.example', downKbps: 0, upKbps: 0, quotaMb: 0, sessionQuotaMb: 0, profile: '',
  }, now);

  it('files within the limits: per device, then per source address', async ({ redis, tenant: t }) => {
    const store = new SponsorStore(redis);
    expect((await file(store, t)).r).toEqual({ ok: true });
    expect((await file(store, t)).r).toEqual({ ok: true });
    expect((await file(store, t)).r).toEqual({ ok: false, limit: 'mac', retryAfterMs: 3_600_000 });
    expect((await file(store, t, { mac: mac(2) })).r).toEqual({ ok: true });
    expect((await file(store, t, { mac: mac(3) })).r).toEqual({ ok: false, limit: 'ip', retryAfterMs: 3_600_000 });
    expect(await redis.zcard(keys.sponsorRecent(t))).toBe(3);
  });

  it('an approval uses the link once, with the session start; the second is told used and changes nothing', async ({ redis, tenant: t }) => {
    const store = new SponsorStore(redis);
    const { requestId, hash } = await file(store, t);
    const a = await approve(store, t, requestId, hash);
    expect(a).toEqual(['ok', expect.stringMatching(/^sess_/), String(T0 + 1000 + 240 * 60_000), '']);
    expect(await redis.hget(keys.grant(t, HS, mac(1)), 'sid')).toBe(a[1]);
    expect(await approve(store, t, requestId, hash)).toEqual(['used']);
    expect(await store.reject(t, requestId, hash, T0 + 2000)).toBe('used');
    expect(await redis.hget(keys.grant(t, HS, mac(1)), 'sid')).toBe(a[1]);
    expect((await store.get(t, requestId, T0 + 3000))).toMatchObject({ status: 'approved', minutes: 240, sessionId: a[1] });
    // A token for another request, or for another device, is not this link.
    expect(await approve(store, t, requestId, newLinkToken(t).hash)).toEqual(['unknown']);
  });

  it('the same approval again (a resend after a lost answer) is answered as made, and starts nothing more', async ({ redis, tenant: t }) => {
    const store = new SponsorStore(redis);
    const { requestId, hash } = await file(store, t);
    const sid = freshSessionId();
    const a = await approve(store, t, requestId, hash, T0 + 1000, mac(1), sid);
    expect(a).toEqual(['ok', sid, String(T0 + 1000 + 240 * 60_000), '']);
    expect(await approve(store, t, requestId, hash, T0 + 1000, mac(1), sid)).toEqual(a);
    const starts = (await redis.xrange(keys.outbox(t), '-', '+')).filter(([, f]) => f[1] === 'session_start');
    expect(starts).toHaveLength(1);
    // Any other approval of the link (its own session id) is told the link is used.
    expect(await approve(store, t, requestId, hash)).toEqual(['used']);
  });

  it('concurrent approvals and rejections on separate connections: exactly one wins', async ({ redis, tenant: t }) => {
    const clients = Array.from({ length: 6 }, () => { const c = new Redis(inject('redisUrl')); defineScripts(c); return c; });
    try {
      const { requestId, hash } = await file(new SponsorStore(redis), t);
      const answers = await Promise.all(clients.map((c, i) => (i % 2
        ? new SponsorStore(c).reject(t, requestId, hash, T0 + 1000).then((x) => [x])
        : approve(new SponsorStore(c), t, requestId, hash))));
      const firsts = answers.map((x) => String(x[0]));
      expect(firsts.filter((x) => x === 'ok')).toHaveLength(1);
      expect(firsts.filter((x) => x === 'used')).toHaveLength(5);
      const started = await redis.zcard(keys.live(t, HS));
      expect(started).toBe((await new SponsorStore(redis).get(t, requestId, T0 + 2000))!.status === 'approved' ? 1 : 0);
    } finally {
      for (const c of clients) c.disconnect();
    }
  });

  it('expired: refused and nothing started; a blocked device or an unloaded tenant leaves the link usable', async ({ redis, tenant: t }) => {
    const store = new SponsorStore(redis);
    const late = await file(store, t);
    expect(await approve(store, t, late.requestId, late.hash, T0 + TTL)).toEqual(['expired']);
    expect(await store.reject(t, late.requestId, late.hash, T0 + TTL)).toBe('expired');
    expect(await redis.exists(keys.grant(t, HS, mac(1)))).toBe(0);

    const b = await file(store, t, { mac: mac(2) });
    await redis.set(keys.block(t, mac(2)), '1');
    expect(await approve(store, t, b.requestId, b.hash, T0 + 1000, mac(2))).toEqual(['blocked']);
    await redis.del(keys.block(t, mac(2)));
    expect((await approve(store, t, b.requestId, b.hash, T0 + 1000, mac(2)))[0]).toBe('ok');

    const u = await luaTenant(redis, false);
    const c = await file(store, u);
    expect((await approve(store, u, c.requestId, c.hash))[0]).toBe('not_loaded');
    expect((await store.get(u, c.requestId, T0 + 1000))!.status).toBe('pending');
  });
});

