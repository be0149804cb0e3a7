import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { UamCredentials, PORTAL_OUTCOME_TTL_SEC } from '../../engine/index.js';
import { newTenant, startService, type Running } from '../helpers.js';

/** The Redis side of the portal: one-time gateway credentials and kept form outcomes. */
describe('portal state in Redis', () => {
  let svc: Running;
  let redis: Redis;
  beforeAll(async () => {
    svc = await startService();
    redis = new Redis(inject('redisUrl'));
  });
  afterAll(async () => {
    redis.disconnect();
    await svc.stop();
  });

  it('issues one-time credentials bound to tenant, hotspot, MAC and session, under the tenant\'s hash tag, with a short TTL', async () => {
    const uam = new UamCredentials(redis, 2);
    const cred = await uam.issue('tenA', { hotspotId: 'hs_1', mac: '02:00:00:00:00:01', sessionId: 'sess_x' });
    expect(cred.username).toMatch(/^g[0-9a-z]{17,}$/);
    expect(cred.password.length).toBeGreaterThanOrEqual(24);
    expect(await uam.lookup('tenA', cred.username)).toEqual({ password: cred.password, sessionId: 'sess_x', mac: '02:00:00:00:00:01', hotspotId: 'hs_1' });
    // Another tenant does not see it.
    expect(await uam.lookup('tenB', cred.username)).toBeNull();
    expect(await redis.ttl(`{t:tenA}:uam:${cred.username}`)).toBeGreaterThan(0);
    const other = await uam.issue('tenA', { hotspotId: 'hs_1', mac: '02:00:00:00:00:01', sessionId: 'sess_x' });
    expect(other.username).not.toBe(cred.username);
    await new Promise((r) => setTimeout(r, 2100));
    expect(await uam.lookup('tenA', cred.username)).toBeNull();
  });

  it('keeps an outcome for its hotspot and MAC only, with an unguessable id and a TTL', async () => {
    const t = await newTenant(svc.service);
    const portal = svc.service.engine.portal;
    const id = await portal.save(t.tenantId, {
      hs: t.hotspotId, mac: '02:00:00:00:00:02', lang: 'en', ip: '', ssid: '', gateway: '', outcome: { ok: false, status: 404, body: { error: 'voucher_not_found' } },
    });
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect((await portal.load(t.tenantId, id, t.hotspotId, '02-00-00-00-00-02'))?.outcome).toEqual({ ok: false, status: 404, body: { error: 'voucher_not_found' } });
    expect(await portal.load(t.tenantId, id, t.hotspotId, '02:00:00:00:00:03')).toBeNull();
    expect(await portal.load(t.tenantId, id, 'hs_other', '02:00:00:00:00:02')).toBeNull();
    expect(await portal.load(t.tenantId, 'x'.repeat(22), t.hotspotId, '02:00:00:00:00:02')).toBeNull();
    const ttl = await redis.ttl(`{t:${t.tenantId}}:po:${id}`);
    expect(ttl).toBeGreaterThan(PORTAL_OUTCOME_TTL_SEC - 10);
    expect(ttl).toBeLessThanOrEqual(PORTAL_OUTCOME_TTL_SEC);
  });

  it('hands a UAM gateway a credential the RADIUS side can look up for the session', async () => {
    const t = await newTenant(svc.service);
    const portal = svc.service.engine.portal;
    const ref = (await portal.ref(t.hotspotId))!;
    const h = await portal.handback(ref, 'uamip=10.1.0.1&uamport=3990&challenge=00112233445566778899aabbccddeeff', 'sess_abc', '02-00-00-00-00-04', null);
    expect(h).toMatchObject({ method: 'GET', url: 'http://10.1.0.1:3990/logon' });
    const rec = await svc.service.engine.uamCredentials.lookup(t.tenantId, h!.fields.username!);
    expect(rec).toMatchObject({ sessionId: 'sess_abc', mac: '02:00:00:00:00:04', hotspotId: t.hotspotId });
    expect(await portal.handback(ref, '', 'sess_abc', '02:00:00:00:00:04', null)).toBeNull();
  });
});
