import { afterAll, expect } from 'vitest';
import type { TestNas } from '../radius/helpers.js';
import { call, keys, macs, serviceTest } from '../support/fixture.js';
import type { SmtpListener } from '../support/smtp-listener.js';
import { freePort } from '../../scripts/local-services.js';
import { eventsOf, sponsorVenue, SPONSOR_DOMAIN } from '../support/sponsor-venue.js';

/**
 * A sponsor request whose e-mail cannot be sent (SMTP at a closed port) is
 * withdrawn: 502 sponsor_send_failed, no JIT approval left waiting, and the
 * jit.requested its filing appended is closed by a jit.decided (withdrawn),
 * so a dashboard following stream/jit-approvals does not keep a phantom.
 * Before withdraw-sponsor-4.lua the request was deleted with no event.
 */
const test = serviceTest(async () => {
  const port = await freePort();
  return { HTTP_PORT: String(port), PORTAL_PUBLIC_URL: `http://127.0.0.1:${port}` };
});
const nases: TestNas[] = [];
afterAll(async () => {
  for (const n of nases) await n.close();
});

test('a sponsor e-mail that cannot be sent: 502, no waiting JIT approval, and a jit.decided withdrawn', async ({ svc }) => {
  // Nothing listens on a port just freed: the SMTP connection is refused.
  const closed = { url: `smtp://127.0.0.1:${await freePort()}` } as SmtpListener;
  const v = await sponsorVenue(svc, closed, nases);
  const sponsor = `host-${Math.random().toString(36).slice(2, 8)}@${SPONSOR_DOMAIN}`;
  const r = await call(svc.base, 'POST', '/api/v1/hotspot-portal/sponsor/request', {
    body: { sponsor_email: sponsor, guest_name: 'Ayşe Yılmaz', mac: macs()(), hotspot_id: v.t.hotspotId, ssid: 'Misafir' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(502);
  expect(r.body).toEqual({ error: 'sponsor_send_failed', message: expect.any(String) });

  expect(await svc.service.engine.jitApprovals.pending(v.t.tenantId)).toEqual([]);
  const redis = svc.service.engine.redis;
  const requested = await eventsOf(redis, v.t.tenantId, 'jit.requested');
  expect(requested).toHaveLength(1);
  const id = requested[0]!.request_id as string;
  expect(await eventsOf(redis, v.t.tenantId, 'jit.decided')).toEqual([{ request_id: id, decision: 'withdrawn' }]);
  expect(await redis.exists(keys.sponsorRequest(v.t.tenantId, id))).toBe(0);
  expect(await redis.zscore(keys.sponsorRecent(v.t.tenantId), id)).toBeNull();
});
