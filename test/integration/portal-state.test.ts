import type { Redis } from 'ioredis';
import { describe, expect } from 'vitest';
import { parseGatewayParams, UamCredentials, PORTAL_OUTCOME_TTL_SEC } from '../../engine/index.js';
import { dashed, keys, type Running, serviceTest } from '../support/fixture.js';

const it = serviceTest();

/** The Redis side of the portal: one-time gateway credentials and kept form outcomes. */
describe('portal state in Redis', () => {
  let svc: Running;
  let redis: Redis;
  it.beforeAll(({ svc: s_, redis: r_ }) => {
    svc = s_;
    redis = r_;
  });

  it('issues one-time credentials bound to tenant, hotspot, MAC and session, under the tenant\'s hash tag, with a short TTL', async ({ mac: nextMac }) => {
    const uam = new UamCredentials(redis, 2);
    const mac = nextMac();
    const cred = await uam.issue('tenA', { hotspotId: 'hs_1', mac, sessionId: 'sess_x' });
    expect(cred.username).toMatch(/^g[0-9a-z]{17,}$/);
    expect(cred.password.length).toBeGreaterThanOrEqual(24);
    expect(await uam.lookup('tenA', cred.username)).toEqual({ password: cred.password, sessionId: 'sess_x', mac, hotspotId: 'hs_1' });
    // Another tenant does not see it.
    expect(await uam.lookup('tenB', cred.username)).toBeNull();
    expect(await redis.ttl(keys.uamCredential('tenA', cred.username))).toBeGreaterThan(0);
    const other = await uam.issue('tenA', { hotspotId: 'hs_1', mac, sessionId: 'sess_x' });
    expect(other.username).not.toBe(cred.username);
    await new Promise((r) => setTimeout(r, 2100));
    expect(await uam.lookup('tenA', cred.username)).toBeNull();
  });

  it('keeps an outcome for its hotspot and MAC only, with an unguessable id and a TTL', async ({ tenant: t, mac: nextMac }) => {
    const portal = svc.service.engine.portal;
    const mac = nextMac();
    const id = await portal.save(t.tenantId, {
      hs: t.hotspotId, mac, lang: 'en', ip: '', ssid: '', gateway: '', outcome: { ok: false, status: 404, body: { error: 'voucher_not_found' } },
    });
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    // The MAC in another notation (dashes, as a gateway may send it) finds it.
    expect((await portal.load(t.tenantId, id, t.hotspotId, dashed(mac)))?.outcome).toEqual({ ok: false, status: 404, body: { error: 'voucher_not_found' } });
    expect(await portal.load(t.tenantId, id, t.hotspotId, nextMac())).toBeNull();
    expect(await portal.load(t.tenantId, id, 'hs_other', mac)).toBeNull();
    expect(await portal.load(t.tenantId, 'x'.repeat(22), t.hotspotId, mac)).toBeNull();
    const ttl = await redis.ttl(keys.portalOutcome(t.tenantId, id));
    expect(ttl).toBeGreaterThan(PORTAL_OUTCOME_TTL_SEC - 10);
    expect(ttl).toBeLessThanOrEqual(PORTAL_OUTCOME_TTL_SEC);
  });

  it('hands a UAM gateway a credential the RADIUS side can look up for the session', async ({ tenant: t, mac: nextMac }) => {
    const portal = svc.service.engine.portal;
    const mac = nextMac();
    const ref = (await portal.ref(t.hotspotId))!;
    const gw = parseGatewayParams(new URLSearchParams('uamip=10.1.0.1&uamport=3990&challenge=00112233445566778899aabbccddeeff'))!;
    const h = await svc.service.engine.portalSignIn.handback(ref, gw, 'sess_abc', mac, null);
    expect(h).toMatchObject({ method: 'GET', url: 'http://10.1.0.1:3990/logon' });
    const rec = await svc.service.engine.uamCredentials.lookup(t.tenantId, h!.fields.username!);
    expect(rec).toMatchObject({ sessionId: 'sess_abc', mac, hotspotId: t.hotspotId });
  });
});
