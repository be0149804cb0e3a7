import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnService, testEnv, until, type ServiceProcess } from '../support/fixture.js';

/**
 * A request id on every log line (issue 24 item 3): a line the engine writes
 * while it serves an HTTP request carries the request's id, the one its
 * answer's X-Request-Id names, not only the router's own lines and the access
 * line. The engine line used here: a delivery callback the engine refuses
 * (engine/signin/providers/delivery-callbacks.ts) is a warn naming the tenant
 * it was for, written after a Postgres round trip, so requests sent at once
 * are interleaved inside the engine. The service runs as in production
 * (dist/scripts/serve.js) so its real log is what is read.
 */
describe('request ids on the engine\'s log lines', () => {
  let svc: ServiceProcess;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    svc = await spawnService({ ...process.env, ...testEnv({ LOG_LEVEL: 'warn', TRUSTED_PROXIES: '127.0.0.1/32' }) });
    createInterface({ input: svc.child.stdout! }).on('line', (line) => {
      try { lines.push(JSON.parse(line) as Record<string, unknown>); } catch { /* not JSON */ }
    });
  });
  afterAll(async () => { await svc?.stop(); });

  const refusedLine = (tenant: string): Record<string, unknown> | undefined =>
    lines.find((l) => l.msg === 'delivery callback refused' && l.tenant_id === tenant);

  const refusedCallback = async (tenant: string, proxyId?: string): Promise<string> => {
    const res = await fetch(`${svc.base}/api/v1/hotspot-portal/otp/delivery/netgsm?tenant_id=${tenant}`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...(proxyId ? { 'x-request-id': proxyId } : {}) }, body: '[]',
    });
    expect(res.status).toBe(401);
    return res.headers.get('x-request-id') ?? '';
  };

  it('an engine warning written while a request is served carries the id of that request\'s answer', async () => {
    const tenant = `ten_reqid_${randomBytes(6).toString('hex')}`;
    const id = await refusedCallback(tenant);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await until(() => refusedLine(tenant) !== undefined, { what: 'the engine\'s warn line' });
    expect(refusedLine(tenant)).toMatchObject({ level: 40, request_id: id });
    // One request_id key on the line, not a child's binding beside the mixin's (a JSON object with a key twice).
    expect(JSON.stringify(refusedLine(tenant)).match(/"request_id"/g)).toHaveLength(1);
  });

  it('a trusted proxy\'s id is the one on the engine\'s line too', async () => {
    const tenant = `ten_reqid_${randomBytes(6).toString('hex')}`;
    expect(await refusedCallback(tenant, 'edge-91c2.7')).toBe('edge-91c2.7');
    await until(() => refusedLine(tenant) !== undefined, { what: 'the engine\'s warn line' });
    expect(refusedLine(tenant)!.request_id).toBe('edge-91c2.7');
  });

  it('requests served at once never swap ids', async () => {
    const tenants = Array.from({ length: 24 }, (_, i) => `ten_reqid_${i}_${randomBytes(6).toString('hex')}`);
    const ids = await Promise.all(tenants.map((t) => refusedCallback(t)));
    expect(new Set(ids).size).toBe(tenants.length);
    await until(() => tenants.every((t) => refusedLine(t) !== undefined), { what: 'every request\'s warn line' });
    expect(tenants.map((t) => refusedLine(t)!.request_id)).toEqual(ids);
  });
});
