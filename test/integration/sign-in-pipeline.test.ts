import type { Redis } from 'ioredis';
import type pg from 'pg';
import { describe, expect } from 'vitest';
import { HOTSPOT_DEFAULT_TERMS, IdentityMethod } from '../../engine/signin/identity-method.js';
import { call, dashed, keys, type Running, serviceTest, until } from '../support/fixture.js';

const test = serviceTest();

/**
 * The one sign-in pipeline (engine/signin/): a voucher and a guest an earlier
 * step checked (IdentityMethod, as room sign-in uses it through
 * SignInService.via) start their sessions through the same path,
 * land in Postgres the same way (sessions row, audit session_start with the
 * method), and each decision is counted. A voucher_use entry queued by the
 * version before the method-neutral start is still stored, and counted.
 */
describe('sign-in pipeline', () => {
  let svc: Running;
  let db: pg.Client;
  let redis: Redis;

  test.beforeAll(({ svc: s_, db: d_, redis: r_ }) => { svc = s_; db = d_; redis = r_; });

  // As PmsMethod holds it: method `pms`, a day's session when the hotspot sets none.
  const identity = () => new IdentityMethod(svc.service.engine.redis, HOTSPOT_DEFAULT_TERMS, { sessionMinutes: 1440, idleSec: 900 }, 'pms');
  const startIdentity = (req: { hotspotId: string; mac: string; ip: string; ssid: string }, username: string) =>
    svc.service.engine.signIn.via(identity(), req, { method: 'pms', username });
  // method, outcome and reason, one label each (the counter's labelValues).
  const decisions = (label: string): number => svc.service.engine.metrics.value('signin_decisions_total', label.split(' ').join('\u001f'));
  const row = async (sid: string) => (await db.query(
    'SELECT auth_method, username, voucher_id, mac, ssid, ended_at FROM sessions WHERE id = $1', [sid])).rows[0] as Record<string, unknown> | undefined;
  const start = async (tenant: string, sid: string) => (await db.query(
    `SELECT auth_method, username, details FROM audit_records WHERE tenant_id = $1 AND id = $2`, [tenant, `${sid}:start`])).rows[0] as Record<string, unknown> | undefined;

  test('a voucher and a checked identity sign in through one path and are stored alike, each with its method', async ({ tenant: t, mac }) => {
    // Sent in lower case and in dashes; stored and keyed in the engine's one notation.
    const [m1, m2] = [mac(), mac()];
    const created = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'PIPE-1', max_uses: 5 } });
    const vid = (created.body as { id: string }).id;
    const { signIn } = svc.service.engine;
    const acceptsBefore = decisions('voucher accept ');

    const v = await signIn.voucher({ hotspotId: t.hotspotId, code: 'PIPE-1', mac: m1.toLowerCase(), ip: '10.8.0.1', ssid: 'Guest' });
    expect(v).toEqual({ status: 'authorized', session_id: expect.stringMatching(/^sess_/), expires_at: expect.any(String), uses_left: 4, redirect_url: null });
    const before = Date.now();
    const o = await startIdentity({ hotspotId: t.hotspotId, mac: dashed(m2).toLowerCase(), ip: '10.8.0.2', ssid: 'Guest' }, 'room:101');
    // The hotspot sets no session length: the method's default (a day).
    expect(o).toEqual({ status: 'authorized', session_id: expect.stringMatching(/^sess_/), expires_at: expect.any(String), uses_left: null, redirect_url: null });
    expect(Date.parse(o.expires_at) - before).toBeGreaterThan(1440 * 60_000 - 60_000);
    expect(await redis.hget(keys.grant(t.tenantId, t.hotspotId, m2), 'method')).toBe('pms');
    expect(decisions('voucher accept ')).toBe(acceptsBefore + 1);
    expect(decisions('pms accept ')).toBeGreaterThanOrEqual(1);

    await until(async () => (await row(v.session_id)) !== undefined && (await row(o.session_id)) !== undefined);
    expect(await row(v.session_id)).toMatchObject({ auth_method: 'voucher', username: 'PIPE-1', voucher_id: vid, mac: m1, ssid: 'Guest' });
    expect(await row(o.session_id)).toMatchObject({ auth_method: 'pms', username: 'room:101', voucher_id: null, mac: m2 });
    await until(async () => (await start(t.tenantId, o.session_id)) !== undefined && (await start(t.tenantId, v.session_id)) !== undefined);
    expect(await start(t.tenantId, v.session_id)).toMatchObject({ auth_method: 'voucher', username: 'PIPE-1', details: { voucher_id: vid } });
    const checked = await start(t.tenantId, o.session_id);
    expect(checked).toMatchObject({ auth_method: 'pms', username: 'room:101' });
    expect(checked!.details).not.toHaveProperty('voucher_id');
    await until(async () => (await db.query('SELECT current_uses FROM vouchers WHERE id = $1', [vid])).rows[0].current_uses === 1);

    // The same device signs in again: its earlier session is replaced, ended once.
    const again = await startIdentity({ hotspotId: t.hotspotId, mac: m2, ip: '10.8.0.2', ssid: 'Guest' }, 'room:102');
    await until(async () => Boolean((await row(o.session_id))?.ended_at) && (await row(again.session_id)) !== undefined);
    expect((await db.query('SELECT end_reason FROM sessions WHERE id = $1', [o.session_id])).rows[0].end_reason).toBe('replaced');
    expect(await svc.service.engine.audit.verify(t.tenantId)).toMatchObject({ valid: true });
  });

  test('refuses a blocked device and an unknown hotspot; the refusal is a recorded decision', async ({ tenant: t, mac: nextMac }) => {
    const { blocks } = svc.service.engine;
    const [mac, other] = [nextMac(), nextMac()];
    await blocks.block(t.tenantId, mac, '24h', 'op_test', null);
    const blockedBefore = decisions('pms reject device_blocked');
    const req = { hotspotId: t.hotspotId, mac, ip: '', ssid: '' };
    await expect(startIdentity(req, 'room:103')).rejects.toMatchObject({ code: 'device_blocked', status: 403 });
    expect(decisions('pms reject device_blocked')).toBe(blockedBefore + 1);
    await expect(startIdentity({ ...req, mac: other, hotspotId: 'hs_nobody' }, 'room:103')).rejects.toMatchObject({ code: 'hotspot_not_found' });
    await expect(startIdentity({ ...req, mac: 'not-a-mac' }, 'room:103')).rejects.toMatchObject({ code: 'invalid_mac' });
    expect(await redis.exists(keys.grant(t.tenantId, t.hotspotId, other))).toBe(0);
  });

  test('stores a voucher_use entry queued by the previous version as a session start, and counts the use', async ({ tenant: t, mac }) => {
    const m = mac();
    const created = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'OLD-1', max_uses: 3 } });
    const vid = (created.body as { id: string }).id;
    const now = Date.now();
    const sid = `sess_old${now.toString(36)}`;
    // Exactly as use-voucher-8.lua V4 queued it: its type, then the record as JSON with the use's id.
    await redis.xadd(keys.outbox(t.tenantId), '*', 'type', 'voucher_use', 'rec', JSON.stringify({
      type: 'voucher_use', use: `vu_old${now}`, vid, hs: t.hotspotId, mac: m, ip: '10.8.0.9', ssid: 'Guest', sid,
      at: String(now), until: String(now + 3_600_000), user: 'OLD-1', method: 'voucher',
    }));
    await until(async () => (await row(sid)) !== undefined);
    expect(await row(sid)).toMatchObject({ auth_method: 'voucher', username: 'OLD-1', voucher_id: vid, mac: m });
    await until(async () => (await start(t.tenantId, sid)) !== undefined);
    expect(await start(t.tenantId, sid)).toMatchObject({ auth_method: 'voucher', details: { voucher_id: vid } });
    await until(async () => (await db.query('SELECT current_uses FROM vouchers WHERE id = $1', [vid])).rows[0].current_uses === 1);
  });
});
