import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenNdsLab, type OpenNdsLab } from '../support/opennds-lab.js';
import { until } from '../support/poll.js';
import { call, startService, type Running } from '../support/service.js';

/**
 * A real gateway in front of the portal: Debian's openNDS 9 (FAS level 1) in
 * network namespaces the lab makes, a guest behind it driven with curl as a
 * browser without JavaScript. The guest's first request is redirected by
 * openNDS to our page, the voucher form is posted, the page hands the guest
 * back to openNDS's opennds_auth/ with the token, and the guest's traffic then
 * passes the gateway to the "internet" (an HTTP server on :80 at the lab's
 * host address). Needs root (namespaces, iptables); the lab installs opennds,
 * dnsmasq and isc-dhcp-client when missing.
 */
const INTERNET = 'the open internet, reached through the gateway';

interface Reply { status: number; headers: Record<string, string>; body: string }

/** curl -i's output (one response: no -L, and no "Expect: 100-continue") as status, lower-cased headers and body. */
function parseCurl(out: string): Reply {
  const at = out.indexOf('\r\n\r\n');
  const lines = out.slice(0, at).split('\r\n');
  const headers: Record<string, string> = {};
  for (const l of lines.slice(1)) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(lines[0]!.split(' ')[1]), headers, body: out.slice(at + 4) };
}

const unescapeHtml = (s: string): string =>
  s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');

describe('openNDS in front of the portal', () => {
  let svc: Running | undefined;
  let lab: OpenNdsLab | undefined;
  let internet: Server | undefined;
  const internetHits: string[] = [];
  const fasKey = randomBytes(12).toString('hex');

  /** A request from the guest's namespace with curl, as a browser without JavaScript sends it. */
  const guestGet = async (url: string, extra: string[] = []): Promise<Reply> => parseCurl(await lab!.guest('curl',
    ['-sS', '-i', '--max-time', '15', '-H', 'Expect:', '-H', 'Accept: text/html,application/xhtml+xml', '-H', 'Accept-Language: en', ...extra, url], 30_000));

  let hotspotId = '', apiKey = '', code = '';

  beforeAll(async () => {
    // 0.0.0.0: the gateway namespace reaches the service at the lab's host address.
    svc = await startService({ HTTP_HOST: '0.0.0.0' });
    const tenant = await svc.service.engine.tenants.create(`openNDS ${randomBytes(3).toString('hex')}`);
    apiKey = (await svc.service.engine.tenants.createApiKey(tenant.id)).apiKey;
    hotspotId = (await svc.service.engine.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'Europe/Istanbul' })).id;
    // openNDS's faskey is the hotspot's gateway secret: the page computes the level 1 token from it.
    const put = await call(svc.base, 'PUT', `/v1/hotspots/${hotspotId}`, { auth: apiKey, body: { portal: { gateway: 'opennds', uam_secret: fasKey } } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    code = `NDS-${randomBytes(4).toString('hex').toUpperCase()}`;
    const v = await call(svc.base, 'POST', '/v1/vouchers', { auth: apiKey, body: { code, max_uses: 1, duration_minutes: 60 } });
    expect(v.status, JSON.stringify(v.body)).toBe(201);

    const port = svc.service.http.ports.main!;
    // gatewayname is the hotspot id and faspath carries no query: the page takes the hotspot from gatewayname.
    lab = await startOpenNdsLab({ servicePort: port, gatewayName: hotspotId, fasKey, fasPath: '/portal' });
    internet = createServer((req, res) => {
      internetHits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/plain' }).end(INTERNET);
    });
    await new Promise<void>((resolve, reject) => { internet!.once('error', reject).listen(80, lab!.hostAddress, () => resolve()); });
  }, 240_000);

  afterAll(async () => {
    // Each step on its own: a failure of one never leaves namespaces, openNDS or the service behind.
    await new Promise<void>((r) => (internet ? internet.close(() => r()) : r()));
    await lab?.stop().catch(() => undefined);
    await svc?.stop().catch(() => undefined);
  }, 60_000);

  it('redirects the guest to our page, signs them in with a voucher, hands back to openNDS, and then lets traffic pass', async () => {
    const origin = `http://${lab!.hostAddress}/news?id=7`;
    const port = svc!.service.http.ports.main!;

    // 1. Before sign-in openNDS holds the guest's traffic and redirects it (307) to our page, FAS level 1.
    const held = await guestGet(origin);
    expect(held.status).toBe(307);
    expect(held.body).not.toContain(INTERNET);
    expect(internetHits).toEqual([]);
    const portalUrl = held.headers.location!;
    expect(portalUrl).toMatch(new RegExp(`^http://${lab!.hostAddress.replace(/\./g, '\\.')}:${port}/portal\\?fas=`));

    // 2. Our page, as openNDS sent the guest to it: the voucher form with the gateway's parameters in hidden fields.
    const page = await guestGet(portalUrl);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<form id="voucher-form"');
    const form = /<form id="voucher-form" method="post" action="([^"]+)">([\s\S]*?)<\/form>/.exec(page.body);
    expect(form, 'voucher form on the page').not.toBeNull();
    const action = unescapeHtml(form![1]!);
    expect(action).toContain(`hotspot_id=${hotspotId}`);
    const hidden = [...form![2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, unescapeHtml(m[2]!)] as const);
    const fields = Object.fromEntries(hidden);
    expect(fields.mac?.toLowerCase()).toBe(lab!.guestMac.toLowerCase());
    expect(fields.gateway).toContain('hid=');

    // A made-up token is refused: openNDS sends the guest back to the page and still holds the traffic.
    const forged = await guestGet(`http://${lab!.gatewayAddress}/opennds_auth/?tok=${'0'.repeat(64)}&redir=${encodeURIComponent(origin)}`);
    expect(forged.status).toBe(307);
    expect(forged.headers.location).toMatch(/\/portal\?fas=/);
    expect((await guestGet(origin)).status).toBe(307);
    expect(internetHits).toEqual([]);

    // 3. The form posted as a browser posts it (form-encoded, HTML preferred): 303 back to the page with the outcome.
    const post = await guestGet(`http://${lab!.hostAddress}:${port}${action}`,
      [...hidden.flatMap(([k, v]) => ['--data-urlencode', `${k}=${v}`]), '--data-urlencode', `code=${code}`]);
    expect(post.status, post.body).toBe(303);
    const done = await guestGet(new URL(post.headers.location!, `http://${lab!.hostAddress}:${port}`).toString());
    expect(done.status).toBe(200);
    expect(done.body).toContain('You are connected');

    // 4. The hand-back the page gives (meta refresh, and the same as a form): openNDS's opennds_auth/ with the token.
    const refresh = /<meta http-equiv="refresh" content="\d+;url=([^"]+)">/.exec(done.body);
    expect(refresh, 'hand-back refresh on the page').not.toBeNull();
    const handback = new URL(unescapeHtml(refresh![1]!));
    expect(`${handback.host}${handback.pathname}`).toBe(`${lab!.gatewayAddress}/opennds_auth/`);
    expect(handback.searchParams.get('redir')).toBe(origin);
    const auth = await guestGet(handback.toString());
    // openNDS accepts the token and sends the guest on to where they were going.
    expect(auth.status, auth.body).toBe(307);
    expect(auth.headers.location).toBe(origin);

    // 5. The guest's traffic now passes the gateway.
    const through = await guestGet(origin);
    expect(through.status).toBe(200);
    expect(through.body).toBe(INTERNET);
    expect(internetHits).toContain('/news?id=7');

    // The engine holds the session for the guest's MAC (listed once the audit sink wrote it).
    await until(async () => (await call(svc!.base, 'GET', '/v1/sessions?status=active', { auth: apiKey })).body.data
      .some((s: { mac: string }) => s.mac.toLowerCase() === lab!.guestMac.toLowerCase()), { what: 'the session listed', timeoutMs: 15_000 });
  }, 120_000);
});
