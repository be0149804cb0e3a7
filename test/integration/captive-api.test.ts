import { describe, expect } from 'vitest';
import { call, type Running, serviceTest } from '../support/fixture.js';

const it = serviceTest();

/** RFC 8908 captive portal API on the portal surface. */
describe('GET /api/v1/hotspot-portal/captive', () => {
  let svc: Running;
  it.beforeAll(({ svc: s_ }) => {
    svc = s_;
  });

  const captive = (q: string): Promise<Response> => fetch(`${svc.base}/api/v1/hotspot-portal/captive?${q}`);

  it('says captive with the portal URL before sign-in, and the session\'s time and bytes left after', async ({ tenant: t, mac: nextMac }) => {
    // A randomised (locally administered) MAC is as good as any.
    const mac = '7A:11:22:33:44:55';
    await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { redirect_url: 'https://venue.example/info' } });
    const before = await captive(`hotspot_id=${t.hotspotId}&mac=${mac}`);
    expect(before.status).toBe(200);
    expect(before.headers.get('content-type')).toBe('application/captive+json');
    expect(before.headers.get('cache-control')).toBe('private');
    const b = await before.json();
    expect(b).toEqual({
      captive: true, 'user-portal-url': `${svc.base}/portal?hotspot_id=${t.hotspotId}&mac=${encodeURIComponent(mac)}`,
      'venue-info-url': 'https://venue.example/info',
    });

    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'CAPTIVE1', max_uses: 5, duration_minutes: 60, session_quota_mb: 100 } });
    const v = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'CAPTIVE1', mac } });
    expect(v.status, JSON.stringify(v.body)).toBe(200);
    const after = await (await captive(`hotspot_id=${t.hotspotId}&mac=${mac.toLowerCase()}`)).json();
    expect(after).toMatchObject({ captive: false, 'venue-info-url': 'https://venue.example/info', 'can-extend-session': false, 'bytes-remaining': 100 * 1_048_576 });
    expect(after['seconds-remaining']).toBeGreaterThan(3590);
    expect(after['seconds-remaining']).toBeLessThanOrEqual(3600);

    // Another device at the same hotspot is still captive, with no session fields.
    const other = await (await captive(`hotspot_id=${t.hotspotId}&mac=${nextMac()}`)).json();
    expect(other.captive).toBe(true);
    expect(other).not.toHaveProperty('seconds-remaining');
  });

  it('refuses an unknown hotspot and a missing one', async () => {
    expect((await captive('hotspot_id=hs_nosuchhotspot00&mac=02:00:00:00:00:01')).status).toBe(404);
    expect((await captive('mac=02:00:00:00:00:01')).status).toBe(400);
  });
});
