import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { until } from './poll.js';
import { call } from './service.js';

/**
 * A new operator's path from a running service to a guest signed in, as the
 * README's install section walks it: the CLI makes a tenant and its API key,
 * the API a hotspot and a voucher, the guest opens the portal page and signs
 * in with the voucher, and the session is listed. `cli` runs
 * `node dist/scripts/cli.js <args>` wherever the service is installed (a
 * folder, a container) and returns its stdout.
 */
export async function operatorPath(base: string, cli: (args: string[]) => Promise<string>): Promise<{ tenantId: string; sessionId: string }> {
  const created = JSON.parse(await cli(['tenant', 'create', '--name', `Install ${randomBytes(3).toString('hex')}`, '--json'])) as { tenant_id: string; api_key: string };
  const auth = created.api_key;
  const hs = await call(base, 'POST', '/v1/hotspots', { auth, body: { name: 'Lobby', timezone: 'Europe/Istanbul' } });
  expect(hs.status, JSON.stringify(hs.body)).toBe(201);
  const code = `IN-${randomBytes(4).toString('hex').toUpperCase()}`;
  const v = await call(base, 'POST', '/v1/vouchers', { auth, body: { code, max_uses: 1 } });
  expect(v.status, JSON.stringify(v.body)).toBe(201);

  const mac = `02:00:${randomBytes(4).toString('hex').match(/../g)!.join(':')}`.toUpperCase();
  // The portal page comes from the templates the build copied (web/portal).
  const page = await fetch(`${base}/portal?hotspot_id=${hs.body.id}&mac=${mac}&lang=en`);
  expect(page.status).toBe(200);
  expect(await page.text()).toMatch(/<form[^>]*voucher/i);
  // The console is the built bundle (dist/web/console).
  const consolePage = await fetch(`${base}/console`);
  expect(consolePage.status).toBe(200);

  const signIn = await call(base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${hs.body.id}`, { body: { code, mac } });
  expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);
  // The tenant is new: its one session is the guest's.
  let sessions: { id: string; mac: string; hotspot_id: string }[] = [];
  await until(async () => {
    const r = await call(base, 'GET', '/v1/sessions', { auth });
    sessions = r.status === 200 ? r.body.data : [];
    return sessions.length === 1;
  }, { what: 'the guest session listed', seen: () => sessions });
  expect(sessions[0]).toMatchObject({ mac, hotspot_id: hs.body.id });
  return { tenantId: created.tenant_id, sessionId: sessions[0]!.id };
}
