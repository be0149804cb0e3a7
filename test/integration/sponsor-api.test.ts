import { request as httpRequest } from 'node:http';
import { Attr, attributeValue, Code as RadiusCode } from '../../radius/index.js';
import { type DaRequest } from '../radius/dynamic-auth-listener.js';
import { afterAll, expect } from 'vitest';
import type { TestNas } from '../radius/helpers.js';
import { call, dashed, keys, macs, serviceTest, until, type Running } from '../support/fixture.js';
import { addCoaNas } from '../support/loopback-nas.js';
import { SmtpListener } from '../support/smtp-listener.js';
import { freePort } from '../../scripts/local-services.js';
import { Code, eventsOf, LISTED_SPONSOR, linksIn, radiusAnswerFor, sponsorVenue, SPONSOR_DOMAIN, type Venue } from '../support/sponsor-venue.js';

/**
 * Sponsor approval over HTTP against a real service, a real SMTP listener
 * and a test NAS: the link works once (409 after, 410 once expired), even
 * under concurrent approvals; the approval lets the device in at the NAS
 * with no browser involved; sponsors outside the tenant's domains and list
 * are refused; request ids and links are bound to their tenant; the request
 * limits key on the source address and the device; events and JIT approvals.
 */
let port = 0;
const test = serviceTest(async () => {
  port = await freePort();
  return { HTTP_PORT: String(port), PORTAL_PUBLIC_URL: `http://127.0.0.1:${port}` };
});
const nextMac = macs();
let smtp: SmtpListener;
const nases: TestNas[] = [];

test.beforeAll(async () => {
  smtp = await SmtpListener.start();
});
afterAll(async () => {
  for (const n of nases) await n.close();
  await smtp?.close();
});

const sponsorOf = (tag: string): string => `${tag}-${Math.random().toString(36).slice(2, 8)}@${SPONSOR_DOMAIN}`;

async function ask(svc: Running, v: Venue, mac: string, sponsor: string, extra: Record<string, unknown> = {}) {
  return call(svc.base, 'POST', '/api/v1/hotspot-portal/sponsor/request', {
    body: { sponsor_email: sponsor, guest_name: 'Ayşe Yılmaz', mac, hotspot_id: v.t.hotspotId, ssid: 'Misafir', ...extra },
  });
}

/** A form post to the sponsor's page, on a connection of its own (no keep-alive: each call is another TCP connection). */
function decide(url: string, form: Record<string, string>): Promise<{ status: number; text: string }> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: 'POST', agent: false,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), accept: 'text/html', connection: 'close' },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
/** The sponsor's page as a browser opens it (HTML first), or as any other client (`accept` given). */
const pageOf = (url: string, accept = 'text/html,*/*;q=0.8') => fetch(url.replace('?action=approve', '?action=approve&lang=en'), { headers: { accept } })
  .then(async (r) => ({ status: r.status, text: await r.text() }));
const formUrl = (link: string): string => link.split('?')[0]!;

test('the approve link starts the device\'s session once: the NAS accepts the MAC, a second use is 409 and changes nothing', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const mac = nextMac();
  const sponsor = sponsorOf('ali');
  const r = await ask(svc, v, mac, sponsor);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toEqual({ status: 'pending', request_id: expect.stringMatching(/^spr_[0-9a-z]{16}\.tn_/), expires_in: 1800 });
  expect((await call(svc.base, 'GET', `/api/v1/hotspot-portal/sponsor/status?request_id=${r.body.request_id}`)).body).toMatchObject({ status: 'pending' });

  const mail = await smtp.waitFor(sponsor);
  expect(mail.from).toBe('wifi@plaza.example');
  expect(mail.text).toContain('Ayşe Yılmaz');
  expect(mail.text).toContain('Plaza Ofis Lobi');
  const { approve } = linksIn(smtp, sponsor);
  expect(approve.startsWith(`http://127.0.0.1:${port}/portal/sponsor/`)).toBe(true);
  // The token itself is nowhere in Redis: only its hash.
  const token = /\/portal\/sponsor\/([^?]+)/.exec(approve)![1]!;
  const stored = await svc.service.engine.redis.hgetall(keys.sponsorRequest(v.t.tenantId, r.body.request_id));
  expect(Object.values(stored)).not.toContain(token);

  // Opening the link (as a mail scanner would) shows the request and changes nothing.
  const shown = await pageOf(approve);
  expect(shown.status).toBe(200);
  expect(shown.text).toContain('Ayşe Yılmaz asks for access to the Wi-Fi at Plaza Ofis Lobi.');
  expect(shown.text).toContain(`${mac.slice(0, 2)}:**:**:**:**:${mac.slice(-2)}`);
  expect(await radiusAnswerFor(svc, v.nas, mac)).toBe(Code.ACCESS_REJECT);

  const ok = await decide(formUrl(approve), { action: 'approve', minutes: '240', lang: 'en' });
  expect(ok.status, ok.text).toBe(200);
  expect(ok.text).toContain('Approved. Ayşe Yılmaz can use the Wi-Fi for 4 hours.');
  const st = await call(svc.base, 'GET', `/api/v1/hotspot-portal/sponsor/status?request_id=${r.body.request_id}`);
  expect(st.body).toMatchObject({ status: 'authorized', session_id: expect.stringMatching(/^sess_/), uses_left: null, redirect_url: null });
  const minutes = (Date.parse(st.body.expires_at) - Date.now()) / 60_000;
  expect(minutes).toBeGreaterThan(238);
  expect(minutes).toBeLessThanOrEqual(240);
  // No browser took part: the NAS's next Access-Request for the MAC is accepted.
  expect(await radiusAnswerFor(svc, v.nas, mac)).toBe(Code.ACCESS_ACCEPT);
  const grant = await svc.service.engine.redis.hgetall(keys.grant(v.t.tenantId, v.t.hotspotId, mac));
  expect(grant).toMatchObject({ sid: st.body.session_id, method: 'sponsor', user: sponsor });

  // A second use, either button: 409, and the session is the one the first use started.
  for (const action of ['approve', 'reject']) {
    const again = await decide(formUrl(approve), { action, minutes: '480', lang: 'en' });
    expect(again.status).toBe(409);
    expect(again.text).toContain('This request has already been answered. Nothing was changed.');
  }
  expect((await pageOf(approve)).status).toBe(409);
  // A client that is no browser gets the refusal as the error body.
  const asJson = await pageOf(approve, 'application/json');
  expect({ status: asJson.status, body: JSON.parse(asJson.text) }).toEqual({ status: 409, body: { error: 'sponsor_link_used', message: expect.any(String) } });
  expect((await call(svc.base, 'GET', `/api/v1/hotspot-portal/sponsor/status?request_id=${r.body.request_id}`)).body.session_id).toBe(st.body.session_id);
  expect(await svc.service.engine.redis.hget(keys.grant(v.t.tenantId, v.t.hotspotId, mac), 'sid')).toBe(st.body.session_id);

  // Events: requested, approved (with its data), decided; the console lists it approved.
  const ev = svc.service.engine.redis;
  expect(await eventsOf(ev, v.t.tenantId, 'jit.requested')).toEqual([expect.objectContaining({ request_id: r.body.request_id, sponsor })]);
  expect(await eventsOf(ev, v.t.tenantId, 'sponsor.approved')).toEqual([{
    request_id: r.body.request_id, hotspot_id: v.t.hotspotId, mac, sponsor_email: sponsor, guest_name: 'Ayşe Yılmaz', minutes: 240,
  }]);
  expect(await eventsOf(ev, v.t.tenantId, 'jit.decided')).toEqual([{ request_id: r.body.request_id, decision: 'approved' }]);
  const list = await call(svc.base, 'GET', '/v1/sponsor-requests', { auth: v.t.apiKey });
  expect(list.body.data).toEqual([expect.objectContaining({ id: r.body.request_id, status: 'approved', minutes: 240, sponsor_email: sponsor, mac })]);
});

test('concurrent approvals of one link from separate connections start exactly one session', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const mac = nextMac();
  const sponsor = sponsorOf('concurrent');
  const r = await ask(svc, v, mac, sponsor);
  expect(r.status).toBe(200);
  await smtp.waitFor(sponsor);
  const url = formUrl(linksIn(smtp, sponsor).approve);
  const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => decide(url, { action: i % 2 ? 'reject' : 'approve', minutes: '60', lang: 'en' })));
  const codes = answers.map((a) => a.status).sort();
  expect(codes.filter((c) => c === 200)).toHaveLength(1);
  expect(codes.filter((c) => c === 409)).toHaveLength(7);
  const redis = svc.service.engine.redis;
  const approved = await eventsOf(redis, v.t.tenantId, 'sponsor.approved');
  const rejected = await eventsOf(redis, v.t.tenantId, 'sponsor.rejected');
  expect(approved.length + rejected.length).toBe(1);
  const starts = (await eventsOf(redis, v.t.tenantId, 'session.start')).filter((e) => e.mac === mac);
  expect(starts).toHaveLength(approved.length);
});

test('an expired link answers 410 and lets no one in; a rejection is recorded as an auth.failure with reason sponsor_rejected', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const redis = svc.service.engine.redis;
  const mac = nextMac();
  const sponsor = sponsorOf('late');
  const r = await ask(svc, v, mac, sponsor);
  await smtp.waitFor(sponsor);
  const { approve } = linksIn(smtp, sponsor);
  // The link's life ends now (the store's clock is the service's; the request records its end).
  await redis.hset(keys.sponsorRequest(v.t.tenantId, r.body.request_id), 'exp', Date.now() - 1);
  const shown = await pageOf(approve);
  expect(shown.status).toBe(410);
  expect(shown.text).toContain('This link has expired or does not exist. Nothing was changed.');
  expect((await decide(formUrl(approve), { action: 'approve', minutes: '60', lang: 'en' })).status).toBe(410);
  expect((await call(svc.base, 'GET', `/api/v1/hotspot-portal/sponsor/status?request_id=${r.body.request_id}`)).body).toEqual({ status: 'expired' });
  expect(await redis.exists(keys.grant(v.t.tenantId, v.t.hotspotId, mac))).toBe(0);
  // A token that was never issued reads as expired too (nothing to tell a prober).
  expect((await pageOf(approve.replace(/\/sponsor\/./, '/sponsor/x'))).status).toBe(410);

  const mac2 = nextMac();
  const r2 = await ask(svc, v, mac2, LISTED_SPONSOR);
  expect(r2.status, JSON.stringify(r2.body)).toBe(200);
  await until(() => linksIn(smtp, LISTED_SPONSOR).reject.length > 0 && smtp.messages.filter((m) => m.to.includes(LISTED_SPONSOR)).length >= 1, { what: 'mail to the listed sponsor' });
  const no = await decide(formUrl(linksIn(smtp, LISTED_SPONSOR).reject), { action: 'reject', lang: 'en' });
  expect(no.status).toBe(200);
  expect(no.text).toContain('Rejected. Ayşe Yılmaz was not given access.');
  expect((await call(svc.base, 'GET', `/api/v1/hotspot-portal/sponsor/status?request_id=${r2.body.request_id}`)).body).toEqual({ status: 'rejected' });
  expect(await eventsOf(redis, v.t.tenantId, 'sponsor.rejected')).toEqual([{
    request_id: r2.body.request_id, hotspot_id: v.t.hotspotId, mac: mac2, sponsor_email: LISTED_SPONSOR, guest_name: 'Ayşe Yılmaz', reason: 'sponsor_rejected',
  }]);
  await until(async () => (await eventsOf(redis, v.t.tenantId, 'auth.failure')).some((e) => e.reason === 'sponsor_rejected' && e.method === 'sponsor'),
    { what: 'auth.failure sponsor_rejected' });
  // The device it was about, and where it was decided: the portal's sponsor page, not a code.
  expect((await eventsOf(redis, v.t.tenantId, 'auth.failure')).find((e) => e.reason === 'sponsor_rejected'))
    .toEqual({ hotspot_id: v.t.hotspotId, method: 'sponsor', reason: 'sponsor_rejected', source: 'portal', mac: mac2 });
  expect(await radiusAnswerFor(svc, v.nas, mac2)).toBe(Code.ACCESS_REJECT);
});

test('a sponsor outside the allowed domains and list is refused 403; request ids and links are bound to their tenant', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases);
  const other = await sponsorVenue(svc, smtp, nases);
  const mac = nextMac();
  for (const address of [`boss@evil.example`, `x@sub.${SPONSOR_DOMAIN}`, `reception@other.partner.example`]) {
    const r = await ask(svc, v, mac, address);
    expect(r.status, address).toBe(403);
    expect(r.body).toMatchObject({ error: 'sponsor_not_allowed' });
  }
  expect(smtp.messages.some((m) => m.to.includes('boss@evil.example'))).toBe(false);
  // Sponsor approval off: not offered.
  const off = await sponsorVenue(svc, smtp, nases, { enabled: false });
  expect((await ask(svc, off, mac, sponsorOf('off'))).body).toMatchObject({ error: 'method_not_allowed_here' });

  const sponsor = sponsorOf('bound');
  const r = await ask(svc, v, mac, sponsor);
  expect(r.status).toBe(200);
  await smtp.waitFor(sponsor);
  // The same random part under another tenant's name is unknown there.
  const foreign = r.body.request_id.replace(/\.tn_.*$/, `.${other.t.tenantId}`);
  const st = await call(svc.base, 'GET', `/api/v1/hotspot-portal/sponsor/status?request_id=${foreign}`);
  expect(st.status).toBe(404);
  expect(st.body).toMatchObject({ error: 'sponsor_request_not_found' });
  const { approve } = linksIn(smtp, sponsor);
  const foreignLink = approve.replace(/\.tn_[0-9a-z]+\?/, `.${other.t.tenantId}?`);
  expect((await decide(formUrl(foreignLink), { action: 'approve', minutes: '60' })).status).toBe(410);
  // Only the tenant's own list shows it.
  expect((await call(svc.base, 'GET', '/v1/sponsor-requests', { auth: other.t.apiKey })).body.data).toEqual([]);
  // A length the tenant does not offer is refused, and the link stays usable.
  expect((await decide(formUrl(approve), { action: 'approve', minutes: '99999', lang: 'en' })).status).toBe(400);
  expect((await decide(formUrl(approve), { action: 'approve', minutes: '480', lang: 'en' })).status).toBe(200);
});

test('request limits key on the source address and the device; pending requests are the JIT approvals', async ({ svc }) => {
  const v = await sponsorVenue(svc, smtp, nases, { per_mac_hourly: 2, per_ip_hourly: 3 });
  const mac = nextMac();
  for (let i = 0; i < 2; i++) expect((await ask(svc, v, mac, sponsorOf(`m${i}`))).status).toBe(200);
  const limited = await ask(svc, v, mac, sponsorOf('m3'));
  expect(limited.status).toBe(429);
  expect(limited.body).toMatchObject({ error: 'sponsor_rate_limited', retry_after: expect.any(Number) });
  expect(limited.headers.get('retry-after')).toBe(String(limited.body.retry_after));
  // Another device from the same source: the per-address limit (3) is reached by the third request, whatever the body's ip says.
  expect((await ask(svc, v, nextMac(), sponsorOf('a'), { ip: '10.9.9.9' })).status).toBe(200);
  expect((await ask(svc, v, nextMac(), sponsorOf('b'), { ip: '10.9.9.8' })).body).toMatchObject({ error: 'sponsor_rate_limited' });

  const pending = await svc.service.engine.jitApprovals.pending(v.t.tenantId);
  expect(pending).toHaveLength(3);
  expect(pending[0]).toMatchObject({ site_id: v.t.hotspotId, guest: 'Ayşe Yılmaz', sponsor: expect.stringContaining(`@${SPONSOR_DOMAIN}`) });
});

test('at a mac_auth hotspot the approval sends the NAS a CoA-Request naming the device, with the chosen length', async ({ svc }) => {
  const venue = await sponsorVenue(svc, smtp, nases);
  // A hotspot of its own, whose one NAS is the Dynamic Authorization listener (the CoA goes to the hotspot's NAS).
  const hs = await svc.service.engine.hotspots.create(venue.t.tenantId, { name: 'Kat 2', timezone: 'Europe/Istanbul' });
  const put = await call(svc.base, 'PUT', `/v1/hotspots/${hs.id}`, { auth: venue.t.apiKey, body: { portal: { gateway: 'mac_auth' } } });
  expect(put.status, JSON.stringify(put.body)).toBe(200);
  const v: Venue = { ...venue, t: { ...venue.t, hotspotId: hs.id } };
  const { radius, da } = await addCoaNas(svc.base, v.t);
  await radius.close(); // the service's CoA is all this test listens for
  try {
    const mac = nextMac();
    const sponsor = sponsorOf('coa');
    expect((await ask(svc, v, mac, sponsor)).status).toBe(200);
    // A hotspot whose portal has no display name is named to the sponsor by the operator's name for it.
    expect((await smtp.waitFor(sponsor)).text).toContain('Kat 2');
    expect((await pageOf(linksIn(smtp, sponsor).approve)).text).toContain('at Kat 2.');
    expect((await decide(formUrl(linksIn(smtp, sponsor).approve), { action: 'approve', minutes: '60' })).status).toBe(200);
    const coa = await da.waitFor((r: DaRequest) => r.code === RadiusCode.COA_REQUEST && attributeValue(r.packet, Attr.CALLING_STATION_ID)?.toString() === dashed(mac), 5000);
    const timeout = attributeValue(coa.packet, Attr.SESSION_TIMEOUT)!.readUInt32BE(0);
    expect(timeout).toBeLessThanOrEqual(3600);
    expect(timeout).toBeGreaterThan(3600 - 15);
  } finally {
    await da.close();
  }
});
