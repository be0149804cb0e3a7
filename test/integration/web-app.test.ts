import { get as httpGet } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { describe, expect } from 'vitest';
import { signOperatorToken } from '../../engine/index.js';
import { call, JWT_SECRET, newTenant, serviceTest, startService } from '../support/fixture.js';

const SECRET = new TextEncoder().encode(JWT_SECRET);
const test = serviceTest();

/** The built console and dashboard (dist/web, `npm run build`) as the server hands them out, and their sign-in. */
describe('web apps', () => {
  const get = (base: string, path: string, encoding = ''): Promise<Response> =>
    fetch(base + path, { headers: encoding ? { 'accept-encoding': encoding } : {} });

  test('each app page is its index.html, revalidated, with a strict CSP; its hashed assets are immutable and precompressed', async ({ svc }) => {
    for (const app of ['console', 'dashboard']) {
      const page = await get(svc.base, `/${app}`, 'identity');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toMatch(/^text\/html/);
      expect(page.headers.get('cache-control')).toBe('no-cache');
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("connect-src 'self'");
      const html = await page.text();
      const script = new RegExp(`src="(/${app}/assets/main-[A-Z0-9]+\\.js)"`).exec(html)?.[1];
      expect(script, html).toBeDefined();

      const br = await fetch(svc.base + script!, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(br.status).toBe(200);
      expect(br.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(br.headers.get('content-type')).toMatch(/^text\/javascript/);
      // fetch decodes what it was told is brotli: a wrong header or a corrupt file fails here.
      expect(br.headers.get('content-encoding')).toBe('br');
      const js = await br.text();
      expect(js.length).toBeGreaterThan(1000);

      // node:http, which leaves the body as sent: the gzip file itself, decoded here.
      const gz = await new Promise<{ enc: string | undefined; body: Buffer }>((resolve, reject) => {
        httpGet(svc.base + script!, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ enc: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        }).on('error', reject);
      });
      expect(gz.enc).toBe('gzip');
      expect(gunzipSync(gz.body).toString()).toBe(js);

      const missing = await get(svc.base, `/${app}/assets/main-NOPE.js`);
      expect(missing.status).toBe(404);
    }
  });

  test('an API key becomes a one-hour admin session token that the public and dashboard APIs accept', async ({ svc, tenant }) => {
    const before = Date.now();
    const r = await call(svc.base, 'POST', '/api/v1/auth/session', { body: { api_key: tenant.apiKey } });
    expect(r.status).toBe(201);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toMatchObject({ token: expect.stringMatching(/^[\w-]+\.[\w-]+\.[\w-]+$/), roles: ['admin'], tenant: { id: tenant.tenantId } });
    const ttl = Date.parse(r.body.expires_at) - before;
    expect(ttl).toBeGreaterThan(3590_000);
    expect(ttl).toBeLessThanOrEqual(3602_000);
    expect((await call(svc.base, 'GET', '/v1/vouchers', { bearer: r.body.token })).status).toBe(200);
    expect((await call(svc.base, 'GET', '/api/v1/tenants/me', { bearer: r.body.token })).body.id).toBe(tenant.tenantId);
  });

  test('a session begun with an API key is refreshed an hour at a time until the key is revoked; no other credential refreshes', async ({ svc, tenant }) => {
    const first = await call(svc.base, 'POST', '/api/v1/auth/session', { body: { api_key: tenant.apiKey } });
    expect(first.body.renewable).toBe(true);
    await new Promise((r) => setTimeout(r, 1100)); // a new iat: a different token
    const before = Date.now();
    const next = await call(svc.base, 'POST', '/api/v1/auth/session/refresh', { bearer: first.body.token });
    expect(next.status).toBe(201);
    expect(next.headers.get('cache-control')).toBe('no-store');
    expect(next.body).toMatchObject({ roles: ['admin'], tenant: { id: tenant.tenantId }, renewable: true });
    expect(next.body.token).not.toBe(first.body.token);
    expect(Date.parse(next.body.expires_at) - before).toBeGreaterThan(3590_000);
    expect((await call(svc.base, 'GET', '/v1/vouchers', { bearer: next.body.token })).status).toBe(200);
    // A refreshed session refreshes again.
    expect((await call(svc.base, 'POST', '/api/v1/auth/session/refresh', { bearer: next.body.token })).status).toBe(201);

    // A pasted JWT never gains time; nor does a stream token, or the API key itself (it needs no session).
    const viewer = await signOperatorToken(SECRET, tenant.tenantId, ['viewer'], 600);
    const pasted = await call(svc.base, 'POST', '/api/v1/auth/session', { body: { api_key: viewer } });
    expect(pasted.body.renewable).toBe(false);
    const stream = await call(svc.base, 'POST', '/api/v1/tenants/me/stream-token', { bearer: first.body.token });
    for (const creds of [{ bearer: pasted.body.token }, { bearer: viewer }, { auth: tenant.apiKey }]) {
      const r = await call(svc.base, 'POST', '/api/v1/auth/session/refresh', creds);
      expect(r.status, JSON.stringify(creds)).toBe(401);
      expect(r.body.error).toBe('unauthorized');
    }
    expect((await call(svc.base, `POST`, `/api/v1/auth/session/refresh?token=${stream.body.token}`)).status).toBe(401);

    // Revoking the key ends it: the token still works until its hour is up, but is not refreshed.
    expect(await svc.service.engine.tenants.revokeApiKey(tenant.tenantId, tenant.apiKey.slice(0, 12))).toBe(true);
    expect((await call(svc.base, 'POST', '/api/v1/auth/session/refresh', { bearer: next.body.token })).status).toBe(401);
  });

  test('a pasted JWT keeps its roles and never outlives itself; bad keys and platform tokens get 401', async ({ svc, tenant }) => {
    const viewer = await signOperatorToken(SECRET, tenant.tenantId, ['viewer'], 600);
    const r = await call(svc.base, 'POST', '/api/v1/auth/session', { body: { api_key: ` ${viewer} ` } });
    expect(r.status).toBe(201);
    expect(r.body.roles).toEqual(['viewer']);
    expect(Date.parse(r.body.expires_at) - Date.now()).toBeLessThanOrEqual(601_000);
    // A viewer session still only reads.
    expect((await call(svc.base, 'POST', '/v1/hotspots', { bearer: r.body.token, body: { name: 'x', timezone: 'UTC' } })).status).toBe(403);

    for (const bad of [`${tenant.apiKey.slice(0, -2)}xx`, 'not-a-token', viewer.slice(0, -3) + 'abc']) {
      const refused = await call(svc.base, 'POST', '/api/v1/auth/session', { body: { api_key: bad } });
      expect(refused.status, bad).toBe(401);
      expect(refused.body.error).toBe('unauthorized');
    }
    expect((await call(svc.base, 'POST', '/api/v1/auth/session', { body: {} })).status).toBe(400);
  });
  test('on their own ports each app is also at /, with the APIs its page calls on the same origin; the main port keeps them', async () => {
    const split = await startService({ CONSOLE_PORT: '0', DASHBOARD_PORT: '0', RADIUS_ENABLED: 'false' });
    try {
      const { ports } = split.service.http;
      const st = await newTenant(split.service);
      for (const app of ['console', 'dashboard'] as const) {
        const base = `http://127.0.0.1:${ports[app]}`;
        for (const path of ['/', `/${app}`]) {
          const page = await get(base, path);
          expect(page.status, `${app} ${path}`).toBe(200);
          expect(await page.text()).toContain(`/${app}/assets/main-`);
        }
        const session = await call(base, 'POST', '/api/v1/auth/session', { body: { api_key: st.apiKey } });
        expect(session.status, app).toBe(201);
        expect((await call(base, 'GET', '/api/v1/tenants/me', { bearer: session.body.token })).body.id).toBe(st.tenantId);
        // The other app's page is not here, nor the portal or the ops routes.
        expect((await get(base, `/${app === 'console' ? 'dashboard' : 'console'}`)).status).toBe(404);
        expect((await get(base, '/healthz')).status).toBe(404);
      }
      const consoleBase = `http://127.0.0.1:${ports.console}`;
      expect((await call(consoleBase, 'GET', '/v1/sessions?status=active', { auth: st.apiKey })).status).toBe(200);
      // The main listener still serves the public and sign-in routes, but no longer the pages.
      expect((await call(split.base, 'POST', '/api/v1/auth/session', { body: { api_key: st.apiKey } })).status).toBe(201);
      expect((await get(split.base, '/console')).status).toBe(404);
      expect((await get(split.base, '/')).status).toBe(404);
    } finally {
      await split.stop();
    }
  });
});
