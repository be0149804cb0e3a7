import { createHmac, randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, expect, inject } from 'vitest';
import type { TestNas } from '../radius/helpers.js';
import { call, macs, newVoucher, serviceTest } from '../support/fixture.js';
import { SmtpListener } from '../support/smtp-listener.js';
import { freePort } from '../../scripts/local-services.js';
import { linksIn, sponsorVenue, SPONSOR_DOMAIN } from '../support/sponsor-venue.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Every webhook event type of the specification, each made by a real flow
 * through the running service (a voucher sign-in, a refused code, an
 * operator's disconnect, a sponsor's approval and rejection from the links
 * of a real e-mail) and delivered, signed, to one subscription that names
 * all eight.
 */
const EIGHT = ['session.start', 'session.end', 'auth.success', 'auth.failure', 'voucher.redeemed', 'sponsor.approved', 'sponsor.rejected', 'device.new'];
const SECRET = 'eight-events-secret-0123456789';

let port = 0;
const test = serviceTest(async () => {
  port = await freePort();
  // A Redis database of its own, as in webhooks.test.ts: no other test file's process holds these deliveries.
  return {
    REDIS_URL: `${inject('redisUrl')}/11`, HTTP_PORT: String(port), PORTAL_PUBLIC_URL: `http://127.0.0.1:${port}`,
    SECRETS_KEY: randomBytes(32).toString('base64'), WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_POLL_MS: '20',
  };
});
const nextMac = macs();
let smtp: SmtpListener;
let rx: WebhookReceiver;
const nases: TestNas[] = [];

test.beforeAll(async () => {
  smtp = await SmtpListener.start();
  rx = await WebhookReceiver.start();
});
afterAll(async () => {
  for (const n of nases) await n.close();
  await smtp?.close();
  await rx?.close();
});

/** The sponsor's page's form post (approve or reject), as the sponsor's browser sends it. */
function decide(link: string, action: 'approve' | 'reject'): Promise<number> {
  const body = new URLSearchParams({ action, minutes: '60', lang: 'en' }).toString();
  return new Promise((resolve, reject) => {
    const req = httpRequest(link.split('?')[0]!, {
      method: 'POST', agent: false,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), accept: 'text/html' },
    }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); });
    req.on('error', reject);
    req.end(body);
  });
}

test('each of the eight event types comes from a real flow and is delivered, signed', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const t = v.t;
  const made = await call(svc.base, 'POST', '/v1/webhooks', { auth: t.apiKey, body: { url: rx.url, events: EIGHT, secret: SECRET } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);

  // A voucher sign-in of a device never seen: session.start, auth.success, voucher.redeemed, device.new.
  const voucher = await newVoucher(svc.base, t);
  const guest = nextMac();
  const signedIn = await call(svc.base, 'POST', '/api/v1/hotspot-portal/voucher/verify', { body: { hotspot_id: t.hotspotId, code: voucher.code, mac: guest } });
  expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
  // A code that does not exist: auth.failure. The operator ends the session: session.end.
  const refused = await call(svc.base, 'POST', '/api/v1/hotspot-portal/voucher/verify', { body: { hotspot_id: t.hotspotId, code: 'NO-SUCH-CODE-8', mac: guest } });
  expect(refused.status).toBe(404);
  expect((await call(svc.base, 'DELETE', `/v1/sessions/${signedIn.body.session_id}`, { auth: t.apiKey })).status).toBe(200);

  // A host approves one visitor and rejects another, from the links of the e-mails they received.
  const ask = async (sponsor: string, mac: string): Promise<string> => {
    const r = await call(svc.base, 'POST', '/api/v1/hotspot-portal/sponsor/request', { body: { sponsor_email: sponsor, guest_name: 'Deniz Kaya', mac, hotspot_id: t.hotspotId } });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await smtp.waitFor(sponsor);
    return r.body.request_id as string;
  };
  const approver = `ayse-${randomBytes(3).toString('hex')}@${SPONSOR_DOMAIN}`;
  const rejecter = `mehmet-${randomBytes(3).toString('hex')}@${SPONSOR_DOMAIN}`;
  const visitor = nextMac();
  const approvedId = await ask(approver, visitor);
  expect(await decide(linksIn(smtp, approver).approve, 'approve')).toBe(200);
  const rejectedId = await ask(rejecter, nextMac());
  expect(await decide(linksIn(smtp, rejecter).reject, 'reject')).toBe(200);

  const answered = () => rx.requests.filter((r) => r.answered === 200 && r.path === new URL(rx.url).pathname);
  const types = () => new Set(answered().map((r) => JSON.parse(r.body).type as string));
  await rx.when(() => EIGHT.every((e) => types().has(e)), 'all eight event types delivered', 30_000);

  const bodies = answered().map((r) => ({ r, b: JSON.parse(r.body) }));
  for (const { r, b } of bodies) {
    expect(b).toMatchObject({ id: expect.stringMatching(/^evt_/), type: expect.any(String), tenant_id: t.tenantId, created_at: expect.any(String), data: expect.any(Object) });
    expect(r.headers['x-signature-256']).toBe(`sha256=${createHmac('sha256', SECRET).update(r.body).digest('hex')}`);
  }
  const one = (type: string, match: (d: Record<string, unknown>) => boolean = () => true): Record<string, unknown> => {
    const found = bodies.find(({ b }) => b.type === type && match(b.data));
    expect(found, `${type} delivered`).toBeDefined();
    return found!.b.data as Record<string, unknown>;
  };
  expect(one('voucher.redeemed')).toMatchObject({ code: voucher.code, session_id: signedIn.body.session_id, mac: guest, hotspot_id: t.hotspotId });
  expect(one('device.new', (d) => d.mac === guest)).toMatchObject({ hotspot_id: t.hotspotId, session_id: signedIn.body.session_id, method: 'voucher' });
  expect(one('session.start', (d) => d.mac === guest)).toMatchObject({ session_id: signedIn.body.session_id, method: 'voucher' });
  expect(one('auth.success', (d) => d.method === 'voucher')).toMatchObject({ hotspot_id: t.hotspotId });
  expect(one('auth.failure', (d) => d.reason === 'voucher_not_found')).toMatchObject({ hotspot_id: t.hotspotId, method: 'voucher' });
  expect(one('session.end', (d) => d.session_id === signedIn.body.session_id)).toMatchObject({ mac: guest });
  expect(one('sponsor.approved')).toMatchObject({ request_id: approvedId, mac: visitor, sponsor_email: approver, minutes: 60 });
  expect(one('sponsor.rejected')).toMatchObject({ request_id: rejectedId, sponsor_email: rejecter });
  // The approved visitor's session and first sight were announced too.
  expect(one('session.start', (d) => d.mac === visitor)).toMatchObject({ method: 'sponsor' });
  one('device.new', (d) => d.mac === visitor);
});
