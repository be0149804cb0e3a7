import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnService, testEnv, until, type ServiceProcess } from '../support/fixture.js';

/**
 * ACCESS_LOG (issue 24 item 3): one pino line per request with its method,
 * route pattern, status, duration and request id, and nothing from the query
 * string; behind a trusted proxy (TRUSTED_PROXIES) the proxy's X-Request-Id is
 * kept, in the answer and in the line. The service runs as in production
 * (dist/scripts/serve.js) so its real log is what is read.
 */
describe('the access log', () => {
  let svc: ServiceProcess;
  const lines: Record<string, unknown>[] = [];

  beforeAll(async () => {
    svc = await spawnService({ ...process.env, ...testEnv({ ACCESS_LOG: 'true', LOG_LEVEL: 'info', TRUSTED_PROXIES: '127.0.0.1/32' }) });
    createInterface({ input: svc.child.stdout! }).on('line', (line) => {
      try { lines.push(JSON.parse(line) as Record<string, unknown>); } catch { /* not JSON */ }
    });
  });
  afterAll(async () => { await svc?.stop(); });

  const accessLine = (id: string): Record<string, unknown> | undefined => lines.find((l) => l.component === 'access' && l.request_id === id);

  it('writes one line per request, by route pattern, without the query string; a trusted proxy\'s id is kept', async () => {
    const res = await fetch(`${svc.base}/api/v1/tenants/me/stream/audit?token=secret-token-in-the-url`, { headers: { 'x-request-id': 'edge-7f3a.1' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toBe('edge-7f3a.1');
    await until(() => accessLine('edge-7f3a.1') !== undefined, { what: 'the access line' });
    const line = accessLine('edge-7f3a.1')!;
    expect(line).toMatchObject({ level: 30, method: 'GET', route: '/api/v1/tenants/me/stream/audit', status: 401, msg: 'request' });
    expect(line.duration_ms).toEqual(expect.any(Number));
    expect(JSON.stringify(line)).not.toContain('secret-token-in-the-url');
    expect(lines.filter((l) => l.request_id === 'edge-7f3a.1' && l.component === 'access')).toHaveLength(1);
  });

  it('replaces an id that is no sane token, even from a trusted proxy', async () => {
    const res = await fetch(`${svc.base}/healthz`, { headers: { 'x-request-id': 'two words"quoted' } });
    const id = res.headers.get('x-request-id') ?? '';
    expect(id).not.toBe('two words"quoted');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    await until(() => accessLine(id) !== undefined, { what: 'the access line of the new id' });
    expect(accessLine(id)).toMatchObject({ route: '/healthz', status: 200 });
  });

  it('logs an unknown path under a fixed label, never the path, with the proxy\'s id', async () => {
    const res = await fetch(`${svc.base}/v1/no-such-route?code=ABC`, { headers: { 'x-request-id': 'edge-404' } });
    expect(res.status).toBe(404);
    await until(() => accessLine('edge-404') !== undefined, { what: 'the 404 access line' });
    expect(accessLine('edge-404')).toMatchObject({ route: '(unmatched)', status: 404, method: 'other' });
  });
});
