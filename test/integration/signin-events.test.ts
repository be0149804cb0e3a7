import type { RedisClient as Redis } from '../../engine/redis/redis-client.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, type Engine } from '../../engine/index.js';
import { EVENT_FIELD } from '../../engine/events/types.js';
import { startHttp, type HttpServer } from '../../http/index.js';
import { call, keys, mac as macOf, newTenant, serviceTest, until } from '../support/fixture.js';
import { otpEngine, type RecordingSender } from './otp-fakes.js';

interface Ev { type: string; site: string; data: Record<string, unknown> }

/** The tenant's event stream (XRANGE keys.events), oldest first. */
async function events(redis: Redis, t: string): Promise<Ev[]> {
  return (await redis.xrange(keys.events(t), '-', '+')).map(([, f]) => {
    const m: Record<string, string> = {};
    for (let i = 0; i + 1 < f.length; i += 2) m[f[i]!] = f[i + 1]!;
    return { type: m[EVENT_FIELD.type]!, site: m[EVENT_FIELD.site]!, data: JSON.parse(m[EVENT_FIELD.data]!) as Record<string, unknown> };
  });
}

/** Waits until the stream holds `n` events of `type` (auth.* come through the decision recorder, within its flush). */
async function waitFor(redis: Redis, t: string, type: string, n: number): Promise<Ev[]> {
  let found: Ev[] = [];
  await until(async () => (found = (await events(redis, t)).filter((e) => e.type === type)).length >= n,
    { what: `${n} ${type}`, seen: async () => (await events(redis, t)).map((e) => e.type) });
  return found;
}

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const test = serviceTest();

/**
 * The §6.1 sign-in events produced by real sign-ins through the running
 * service, read from the tenant's stream as a webhook dispatcher reads it.
 */
describe('sign-in events on the tenant stream', () => {
  test('a voucher sign-in: voucher.redeemed and device.new once; refusals: auth.failure with the catalogue code and the device', async ({ svc, redis, tenant: t }) => {
    const mac = (n: number): string => macOf(n, 0x6e);
    const created = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'EVT-ONCE', max_uses: 1 } });
    expect(created.status).toBe(201);
    const verify = (code: string, m: string) => call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code, mac: m } });

    const ok = await verify('EVT-ONCE', mac(1));
    expect(ok.status).toBe(200);
    // The same device again gets its session back: no second redemption, and it is no new device.
    expect((await verify('EVT-ONCE', mac(1))).status).toBe(200);
    expect((await verify('EVT-ONCE', mac(2))).body).toMatchObject({ error: 'voucher_exhausted' });
    expect((await verify('NO-SUCH-CODE', mac(3))).body).toEqual({ error: 'voucher_not_found' });
    expect((await verify('EVT-ONCE', 'not-a-mac')).body).toMatchObject({ error: 'invalid_mac' });

    const redeemed = (await events(redis, t.tenantId)).filter((e) => e.type === 'voucher.redeemed');
    expect(redeemed).toEqual([{
      type: 'voucher.redeemed', site: t.hotspotId,
      data: { voucher_id: created.body.id, code: 'EVT-ONCE', session_id: ok.body.session_id, mac: mac(1), hotspot_id: t.hotspotId, uses: 1, max_uses: 1, uses_left: 0 },
    }]);
    const fresh = (await events(redis, t.tenantId)).filter((e) => e.type === 'device.new');
    expect(fresh).toEqual([{
      type: 'device.new', site: t.hotspotId,
      data: { mac: mac(1), hotspot_id: t.hotspotId, session_id: ok.body.session_id, method: 'voucher', first_seen: expect.any(Number) },
    }]);

    const failures = await waitFor(redis, t.tenantId, 'auth.failure', 3);
    const base = { hotspot_id: t.hotspotId, method: 'voucher', source: 'portal' };
    expect(failures.map((e) => e.data)).toEqual([
      { ...base, reason: 'voucher_exhausted', mac: mac(2) },
      { ...base, reason: 'voucher_not_found', mac: mac(3) },
      // No device to name: the MAC was not one.
      { ...base, reason: 'invalid_mac' },
    ]);
    expect(failures.every((e) => e.site === t.hotspotId)).toBe(true);
    const successes = await waitFor(redis, t.tenantId, 'auth.success', 2);
    expect(successes.map((e) => e.data)).toEqual([{ ...base, mac: mac(1) }, { ...base, mac: mac(1) }]);
  });

  test('a blocked device: auth.failure device_blocked with its MAC, and nothing redeemed', async ({ svc, redis, tenant: t }) => {
    const mac = macOf(9, 0x6f);
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'EVT-BLOCK', max_uses: null } });
    const ok = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'EVT-BLOCK', mac } });
    expect(ok.status).toBe(200);
    const sid = String(ok.body.session_id);
    const blocked = await call(svc.base, 'POST', `/v1/sessions/${sid}/block`, { auth: t.apiKey, body: { duration: '24h' } });
    expect(blocked.status, JSON.stringify(blocked.body)).toBe(200);
    const again = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'EVT-BLOCK', mac } });
    expect(again.body).toMatchObject({ error: 'device_blocked' });
    const failures = await waitFor(redis, t.tenantId, 'auth.failure', 1);
    expect(failures.map((e) => e.data)).toEqual([{ hotspot_id: t.hotspotId, method: 'voucher', source: 'portal', reason: 'device_blocked', mac }]);
    expect((await events(redis, t.tenantId)).filter((e) => e.type === 'voucher.redeemed')).toHaveLength(1);
  });
});

/** OTP sign-in through the engine and its HTTP routes (recording senders: no carrier), on its own Redis database. */
describe('OTP sign-in events', () => {
  let engine: Engine;
  let http: HttpServer;
  let base: string;
  let senders: Record<'sms' | 'msgapp' | 'email', RecordingSender>;

  beforeAll(async () => {
    ({ engine, senders } = await otpEngine(Date.now));
    http = await startHttp(engine, createLogger('silent'));
    base = `http://127.0.0.1:${http.ports.main}`;
  });
  afterAll(async () => {
    http?.close();
    await engine?.close();
  });

  it('a wrong code is auth.failure otp_invalid with the device; the right one announces the new device', async () => {
    const v = await newTenant({ engine } as never);
    const put = await call(base, 'PUT', '/v1/settings/sign-in', {
      auth: v.apiKey, body: { methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', credentials_ref: `env://${v.tenantId.toUpperCase()}_NETGSM` } },
    });
    expect(put.status).toBe(200);
    const mac = macOf(5, 0x70);
    const phone = '+905321000077';
    expect((await call(base, 'POST', '/api/v1/hotspot-portal/sms/request', { body: { phone, mac, hotspot_id: v.hotspotId } })).status).toBe(200);
    const code = senders.sms.last(phone);
    const wrong = code === '000000' ? '111111' : '000000';
    const verify = (c: string) => call(base, 'POST', `/api/v1/hotspot-portal/sms/verify?hotspot_id=${v.hotspotId}`, { body: { phone, code: c, mac } });
    expect((await verify(wrong)).body).toMatchObject({ error: 'otp_invalid' });
    expect((await verify(code)).status).toBe(200);

    const failures = await waitFor(engine.redis, v.tenantId, 'auth.failure', 1);
    expect(failures.map((e) => e.data)).toEqual([{ hotspot_id: v.hotspotId, method: 'sms_otp', source: 'otp', reason: 'otp_invalid', mac }]);
    const fresh = (await events(engine.redis, v.tenantId)).filter((e) => e.type === 'device.new');
    expect(fresh.map((e) => e.data)).toEqual([expect.objectContaining({ mac, method: 'sms_otp', hotspot_id: v.hotspotId })]);
  });
});

/**
 * A Redis that lost the tenant (emptied, or failed over to an empty replica):
 * the load that follows brings the known devices back from Postgres's
 * sessions with the vouchers, so a returning device is not announced again.
 */
describe('known devices after Redis lost the tenant', () => {
  test('a device Postgres knows is not new again; one it does not know is', async ({ svc, redis, db, tenant: t, voucher }) => {
    const [known, other] = [macOf(1, 0x71), macOf(2, 0x71)];
    const verify = (m: string) => call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: voucher.code, mac: m } });
    const first = await verify(known);
    expect(first.status).toBe(200);
    const firstSeen = (await events(redis, t.tenantId)).find((e) => e.type === 'device.new')!.data.first_seen;
    await until(async () => (await db.query('SELECT 1 FROM sessions WHERE id = $1', [first.body.session_id])).rowCount === 1, { what: 'the session in Postgres' });

    // Every key of the tenant gone, as from a new server: the next sign-in finds no loaded marker and loads.
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', `{t:${t.tenantId}}:*`, 'COUNT', 1000);
      if (found.length) await redis.del(...found);
      cursor = next;
    } while (cursor !== '0');

    expect((await verify(known)).status).toBe(200);
    expect((await verify(other)).status).toBe(200);
    const fresh = (await events(redis, t.tenantId)).filter((e) => e.type === 'device.new');
    expect(fresh.map((e) => e.data.mac)).toEqual([other]);
    // The first-seen time Postgres holds (the session's start), not the reload's.
    expect(await redis.hget(keys.knownDevices(t.tenantId), known)).toBe(String(firstSeen));
  });
});
