import { describe, expect } from 'vitest';
import { DEFAULT_MODULES } from '../../engine/index.js';
import { call, newTenant, serviceTest, startService, until, type Running, type Tenant } from '../support/fixture.js';
import { openStream, type SseConnection } from '../support/sse-client.js';

const ME = '/api/v1/tenants/me';
const test = serviceTest({ STREAM_MAX_PER_PRINCIPAL: '3', STREAM_MAX_PER_TENANT: '5' });

const dashboardTenant = (svc: Running): Promise<Tenant> => newTenant(svc.service, 'Cap Venue', [...DEFAULT_MODULES, 'dashboard']);

/** Issue 18, item 8: one credential, one tenant, one process can hold only so many dashboard streams; closing one frees its place. */
describe('stream caps', () => {
  const open: SseConnection[] = [];
  test.afterEach(() => { for (const c of open.splice(0)) c.close(); });

  const stream = async (base: string, headers: Record<string, string>, path = `${ME}/stream/incidents`): Promise<SseConnection> => {
    const c = await openStream(base, path, headers);
    open.push(c);
    return c;
  };
  const mint = async (base: string, apiKey: string): Promise<string> => {
    const r = await call(base, 'POST', `${ME}/stream-token`, { auth: apiKey });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    return r.body.token;
  };
  const refusedAsTooMany = (c: SseConnection): void => {
    expect(c.status, c.body).toBe(429);
    const body = JSON.parse(c.body);
    expect(body).toEqual({ error: 'too_many_streams', message: expect.stringContaining('at most') });
  };

  test('a credential past STREAM_MAX_PER_PRINCIPAL gets 429 too_many_streams, its stream tokens included; a closed stream frees its place', async ({ svc }) => {
    const t = await dashboardTenant(svc);
    const key = { 'x-api-key': t.apiKey };
    const held = [await stream(svc.base, key), await stream(svc.base, key, `${ME}/stream/audit`), await stream(svc.base, key, `${ME}/stream/all`)];
    for (const c of held) expect(c.status).toBe(200);
    refusedAsTooMany(await stream(svc.base, key));
    // A stream token minted by the same key is the same credential: minting in a loop does not escape the cap.
    refusedAsTooMany(await stream(svc.base, {}, `${ME}/stream/incidents?token=${await mint(svc.base, t.apiKey)}`));
    // Another credential of the tenant is not held back by this one's streams.
    const other = await svc.service.engine.tenants.createApiKey(t.tenantId);
    expect((await stream(svc.base, { 'x-api-key': other.apiKey })).status).toBe(200);

    held[0]!.close();
    // The place comes back once the server has seen the client go: wait for that event, not a time.
    let again: SseConnection | undefined;
    await until(async () => {
      const c = await stream(svc.base, key);
      if (c.status === 200) again = c;
      else c.close();
      return again !== undefined;
    }, { timeoutMs: 10_000 });
    expect(again!.status).toBe(200);
  });

  test('a tenant past STREAM_MAX_PER_TENANT gets 429 whichever credential asks; other tenants are not affected', async ({ svc }) => {
    const t = await dashboardTenant(svc);
    const creds = [t.apiKey, ...await Promise.all([1, 2].map(async () => (await svc.service.engine.tenants.createApiKey(t.tenantId)).apiKey))];
    // 5 streams: 3 + 2 over two keys, under each key's own cap of 3.
    for (const [i, k] of [0, 0, 0, 1, 1].entries()) expect((await stream(svc.base, { 'x-api-key': creds[k]! })).status, `stream ${i}`).toBe(200);
    refusedAsTooMany(await stream(svc.base, { 'x-api-key': creds[2]! }));
    const u = await dashboardTenant(svc);
    expect((await stream(svc.base, { 'x-api-key': u.apiKey })).status).toBe(200);
  });

  test('the process past STREAM_MAX_PER_PROCESS gets 429 for every tenant', async () => {
    const svc = await startService({ STREAM_MAX_PER_PROCESS: '2' });
    try {
      const [a, b] = [await dashboardTenant(svc), await dashboardTenant(svc)];
      expect((await stream(svc.base, { 'x-api-key': a.apiKey })).status).toBe(200);
      expect((await stream(svc.base, { 'x-api-key': b.apiKey })).status).toBe(200);
      refusedAsTooMany(await stream(svc.base, { 'x-api-key': b.apiKey }));
      const metrics = await (await fetch(`${svc.base}/metrics`)).text();
      expect(metrics).toMatch(/guestwifi_stream_refused_total\{limit="process"\} 1/);
    } finally {
      for (const c of open.splice(0)) c.close();
      await svc.stop();
    }
  });
});
