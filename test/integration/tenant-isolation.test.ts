import { describe, expect } from 'vitest';
import { signOperatorToken } from '../../engine/index.js';
import { call, JWT_SECRET, newTenant, type Running, serviceTest } from '../support/fixture.js';
import { registerOnFreeLoopback } from '../support/loopback-nas.js';

const test = serviceTest();

/**
 * Tenant B, with valid credentials of its own, can neither see nor change
 * anything of tenant A: every attempt is a 404 (existence is not revealed)
 * and A's data is unchanged afterwards.
 */
describe('tenant isolation', () => {
  let svc: Running;
  test.beforeAll(({ svc: s_ }) => { svc = s_; });

  async function twoTenants() {
    const a = await newTenant(svc.service, 'Tenant A');
    const b = await newTenant(svc.service, 'Tenant B');
    const voucher = await call(svc.base, 'POST', '/v1/vouchers', { auth: a.apiKey, body: { code: 'A-SECRET-1', max_uses: 3, notes: 'A only' } });
    expect(voucher.status).toBe(201);
    const { answer: nas } = await registerOnFreeLoopback(svc.base, a.apiKey, a.hotspotId, (ip) => ({ ip, secret: 'a-radius-secret' }));
    return { a, b, voucherId: voucher.body.id as string, nasId: nas.body.id as string };
  }

  const expect404 = (r: { status: number; body: any }, code: string, what: string): void => {
    expect(r.status, what).toBe(404);
    expect(r.body.error, what).toBe(code);
  };

  test("B cannot read, delete or list A's vouchers", async ({ svc }) => {
    const { a, b, voucherId } = await twoTenants();
    const before = await call(svc.base, 'GET', `/v1/vouchers/${voucherId}`, { auth: a.apiKey });
    expect(before.status).toBe(200);

    expect404(await call(svc.base, 'GET', `/v1/vouchers/${voucherId}`, { auth: b.apiKey }), 'voucher_not_found', 'read');
    expect404(await call(svc.base, 'DELETE', `/v1/vouchers/${voucherId}`, { auth: b.apiKey }), 'voucher_not_found', 'delete');

    for (const path of ['/v1/vouchers', '/api/v1/vouchers', '/v1/vouchers?status=active', '/v1/vouchers?limit=1000']) {
      const list = await call(svc.base, 'GET', path, { auth: b.apiKey });
      expect(list.status).toBe(200);
      expect(list.body.total, path).toBe(0);
      expect(JSON.stringify(list.body), path).not.toContain(voucherId);
      expect(JSON.stringify(list.body), path).not.toContain('A-SECRET-1');
    }

    // A's voucher is untouched and still works.
    const after = await call(svc.base, 'GET', `/v1/vouchers/${voucherId}`, { auth: a.apiKey });
    expect(after.body).toEqual(before.body);
    const verify = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${a.hotspotId}`, {
      body: { code: 'A-SECRET-1', mac: '02:00:00:00:AB:01' },
    });
    expect(verify.status).toBe(200);
  });

  test("B's own voucher with A's code does not touch A's; B's list shows only its own", async ({ svc }) => {
    const { a, b, voucherId } = await twoTenants();
    const mine = await call(svc.base, 'POST', '/v1/vouchers', { auth: b.apiKey, body: { code: 'A-SECRET-1', max_uses: 1 } });
    expect(mine.status).toBe(201);
    const list = await call(svc.base, 'GET', '/v1/vouchers', { auth: b.apiKey });
    expect(list.body.data.map((v: { id: string }) => v.id)).toEqual([mine.body.id]);
    expect(JSON.stringify(list.body)).not.toContain(voucherId);
    // Deleting B's voucher leaves A's code working.
    expect((await call(svc.base, 'DELETE', `/v1/vouchers/${mine.body.id}`, { auth: b.apiKey })).status).toBe(200);
    expect((await call(svc.base, 'GET', `/v1/vouchers/${voucherId}`, { auth: a.apiKey })).status).toBe(200);
    const verify = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${a.hotspotId}`, {
      body: { code: 'A-SECRET-1', mac: '02:00:00:00:AB:02' },
    });
    expect(verify.status).toBe(200);
  });

  test("B cannot read, update or list A's hotspots", async ({ svc }) => {
    const { a, b } = await twoTenants();
    const before = await call(svc.base, 'GET', `/v1/hotspots/${a.hotspotId}`, { auth: a.apiKey });
    expect(before.status).toBe(200);

    expect404(await call(svc.base, 'GET', `/v1/hotspots/${a.hotspotId}`, { auth: b.apiKey }), 'hotspot_not_found', 'read');
    expect404(await call(svc.base, 'PUT', `/v1/hotspots/${a.hotspotId}`, {
      auth: b.apiKey, body: { name: 'Taken over', redirect_url: 'https://evil.example/' },
    }), 'hotspot_not_found', 'update');

    const list = await call(svc.base, 'GET', '/v1/hotspots', { auth: b.apiKey });
    expect(list.status).toBe(200);
    expect(list.body.data.map((h: { id: string }) => h.id)).toEqual([b.hotspotId]);
    expect(JSON.stringify(list.body)).not.toContain(a.hotspotId);

    expect((await call(svc.base, 'GET', `/v1/hotspots/${a.hotspotId}`, { auth: a.apiKey })).body).toEqual(before.body);
    // The portal still sees A's settings, not B's attempted ones.
    await call(svc.base, 'POST', '/v1/vouchers', { auth: a.apiKey, body: { code: 'A-REDIR', max_uses: 1 } });
    const verify = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${a.hotspotId}`, {
      body: { code: 'A-REDIR', mac: '02:00:00:00:AB:03' },
    });
    expect(verify.body.redirect_url).toBeNull();
  });

  test("B can neither list nor add NAS clients on A's hotspot", async ({ svc }) => {
    const { a, b, nasId } = await twoTenants();
    const before = await call(svc.base, 'GET', `/v1/hotspots/${a.hotspotId}/nas-clients`, { auth: a.apiKey });
    expect(before.body.data.map((n: { id: string }) => n.id)).toEqual([nasId]);

    expect404(await call(svc.base, 'GET', `/v1/hotspots/${a.hotspotId}/nas-clients`, { auth: b.apiKey }), 'hotspot_not_found', 'list');
    // B's add on A's hotspot is refused and leaves no row behind: the address is still free for B's own hotspot.
    const { answer: own } = await registerOnFreeLoopback(svc.base, b.apiKey, b.hotspotId, async (ip) => {
      expect404(await call(svc.base, 'POST', `/v1/hotspots/${a.hotspotId}/nas-clients`, {
        auth: b.apiKey, body: { ip, secret: 'b-radius-secret' },
      }), 'hotspot_not_found', 'add');
      return { ip, secret: 'b-radius-secret' };
    });
    const after = await call(svc.base, 'GET', `/v1/hotspots/${a.hotspotId}/nas-clients`, { auth: a.apiKey });
    expect(after.body).toEqual(before.body);
    expect((await call(svc.base, 'GET', `/v1/hotspots/${b.hotspotId}/nas-clients`, { auth: b.apiKey })).body.data.map((n: { id: string }) => n.id))
      .toEqual([own.body.id]);
  });

  test("a JWT of B gets the same 404s as B's API key", async ({ svc }) => {
    const { a, b, voucherId } = await twoTenants();
    const token = await signOperatorToken(new TextEncoder().encode(JWT_SECRET), b.tenantId, ['admin'], 600);
    expect404(await call(svc.base, 'GET', `/v1/vouchers/${voucherId}`, { bearer: token }), 'voucher_not_found', 'read');
    expect404(await call(svc.base, 'DELETE', `/v1/vouchers/${voucherId}`, { bearer: token }), 'voucher_not_found', 'delete');
    expect404(await call(svc.base, 'GET', `/v1/hotspots/${a.hotspotId}`, { bearer: token }), 'hotspot_not_found', 'read hotspot');
    expect((await call(svc.base, 'GET', `/v1/vouchers/${voucherId}`, { auth: a.apiKey })).status).toBe(200);
  });
  test('a NAS address is one address however it is written: an IPv4-mapped IPv6 form of a taken address is taken too', async ({ svc }) => {
    // RADIUS tells NASes apart by source address alone, so an address is unique over the whole service.
    const { a, b } = await twoTenants();
    const { ip } = await registerOnFreeLoopback(svc.base, a.apiKey, a.hotspotId, (at) => ({ ip: at, secret: 'a-radius-secret' }));
    for (const spelling of [`::ffff:${ip}`, `::FFFF:${ip}`]) {
      const r = await call(svc.base, 'POST', `/v1/hotspots/${b.hotspotId}/nas-clients`, { auth: b.apiKey, body: { ip: spelling, secret: 'b-radius-secret' } });
      expect(r.status, spelling).toBe(409);
      expect(r.body.error).toBe('nas_ip_in_use');
      expect(JSON.stringify(r.body)).not.toContain(a.tenantId);
    }
    // Registered in the mapped form, it is kept (and shown) as the IPv4 address packets come from.
    const { ip: other, answer: mapped } = await registerOnFreeLoopback(svc.base, b.apiKey, b.hotspotId, (at) => ({ ip: `::ffff:${at}`, secret: 'b-radius-secret' }));
    expect(mapped.body.ip).toBe(other);
  });
});
