import { connect, type Socket } from 'node:net';
import { beforeAll, describe, expect } from 'vitest';
import { call, newTenant, serviceTest, startService, storesTest, until, type Running, clearOfMidnight, DAY_SCENARIO_MS } from '../support/fixture.js';

/** A raw connection to the service, and everything it has been sent back. */
interface Raw {
  socket: Socket;
  text(): string;
  closed: Promise<void>;
}

async function rawConnection(port: number): Promise<Raw> {
  const socket = connect(port, '127.0.0.1');
  await new Promise((resolve, reject) => { socket.once('connect', resolve); socket.once('error', reject); });
  let text = '';
  socket.on('data', (d) => { text += d.toString(); });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, text: () => text, closed };
}

/** Headers of a POST that promises a body of `length` bytes, and the first part of it. */
const partialUpload = (apiKey: string, length = 1000): string =>
  `POST /v1/hotspots HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n{"name":"`;

/** Issue 18, item 10: the HTTP edge holds against clients that abort, trickle or pile up. */
describe('the HTTP edge', () => {
  storesTest('an aborted upload ends its request, so a graceful stop does not wait out its drain time', async () => {
    const svc = await startService();
    let stopped = false;
    try {
      const t = await newTenant(svc.service);
      const raw = await rawConnection(svc.service.http.ports.main!);
      raw.socket.write(partialUpload(t.apiKey));
      await until(() => svc.service.http.inFlight() === 1);
      raw.socket.destroy();
      // The request ends when its client goes (before the fix it stayed in flight for good).
      await until(() => svc.service.http.inFlight() === 0);
      const started = performance.now();
      await svc.stop();
      stopped = true;
      // The drain waits up to 10 s for requests in flight; with none it returns at once.
      expect(performance.now() - started).toBeLessThan(10_000);
    } finally {
      if (!stopped) await svc.stop();
    }
  });

  storesTest('a body that does not arrive within HTTP_BODY_TIMEOUT_MS is answered 408 request_timeout and the connection closed', async () => {
    const svc = await startService({ HTTP_BODY_TIMEOUT_MS: '300' });
    try {
      const t = await newTenant(svc.service);
      const raw = await rawConnection(svc.service.http.ports.main!);
      raw.socket.write(partialUpload(t.apiKey));
      await raw.closed;
      expect(raw.text()).toMatch(/^HTTP\/1\.1 408 /);
      expect(raw.text()).toContain('"error":"request_timeout"');
      expect(svc.service.http.inFlight()).toBe(0);
    } finally {
      await svc.stop();
    }
  });

  storesTest('headers that never end are cut off (uWS closes a connection whose request is not in within its idle time-out)', async () => {
    const svc = await startService();
    try {
      const raw = await rawConnection(svc.service.http.ports.main!);
      raw.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      await raw.closed;
      expect(raw.text()).toBe('');
    } finally {
      await svc.stop();
    }
  }, 60_000);

  storesTest('one address past HTTP_MAX_CONNECTIONS_PER_ADDRESS open requests gets 429 too_many_connections; a finished one frees its place', async () => {
    const svc = await startService({ HTTP_MAX_CONNECTIONS_PER_ADDRESS: '2' });
    try {
      const t = await newTenant(svc.service);
      const port = svc.service.http.ports.main!;
      const held = [await rawConnection(port), await rawConnection(port)];
      for (const h of held) h.socket.write(partialUpload(t.apiKey));
      await until(() => svc.service.http.inFlight() === 2);
      const over = await call(svc.base, 'GET', '/healthz');
      expect(over.status).toBe(429);
      expect(over.body).toEqual({ error: 'too_many_connections', message: expect.stringContaining('2 requests') });
      held[0]!.socket.destroy();
      await until(() => svc.service.http.inFlight() === 1);
      expect((await call(svc.base, 'GET', '/healthz')).status).toBe(200);
      held[1]!.socket.destroy();
    } finally {
      await svc.stop();
    }
  });
});

const test = serviceTest();

describe('lists and the audit day API', () => {
  // Its records are read back by their UTC day: the file's scenarios run clear of midnight.
  beforeAll(() => clearOfMidnight(DAY_SCENARIO_MS), DAY_SCENARIO_MS + 10_000);
  let svc: Running;
  test.beforeAll(({ svc: s }) => { svc = s; });

  test('offset is bounded at 10,000 (400 beyond) and the voucher list pages on with a cursor', async () => {
    const t = await newTenant(svc.service);
    for (const path of ['/v1/vouchers', '/api/v1/vouchers', '/v1/sessions']) {
      const r = await call(svc.base, 'GET', `${path}?offset=10001`, { auth: t.apiKey });
      expect(r.status, path).toBe(400);
      expect(r.body).toMatchObject({ error: 'validation_failed', details: [{ field: 'offset' }] });
      expect((await call(svc.base, 'GET', `${path}?offset=10000`, { auth: t.apiKey })).status, path).toBe(200);
    }
    for (let i = 0; i < 5; i++) expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { max_uses: 1 } })).status).toBe(201);
    const all = await call(svc.base, 'GET', '/v1/vouchers?limit=10', { auth: t.apiKey });
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const r = await call(svc.base, 'GET', `/v1/vouchers?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { auth: t.apiKey });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(5);
      ids.push(...r.body.data.map((v: { id: string }) => v.id));
      cursor = r.body.next_cursor;
      if (cursor === null) break;
    }
    expect(ids).toEqual(all.body.data.map((v: { id: string }) => v.id));
    expect(all.body.next_cursor).toBeNull();
    // The session list takes a cursor too; one naming no session of the tenant is an empty page, not an error.
    const sessions = await call(svc.base, 'GET', '/v1/sessions?cursor=c2Vzc19ub25l', { auth: t.apiKey });
    expect(sessions.status).toBe(200);
    expect(sessions.body).toMatchObject({ data: [], total: 0, next_cursor: null });
  });

  test('the session list pages on with a cursor: every session once, in the order offsets give', async ({ db }) => {
    const t = await newTenant(svc.service);
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'EDGE-1', max_uses: null } })).status).toBe(201);
    for (let i = 0; i < 5; i++) {
      const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'EDGE-1', mac: `DE:0E:00:00:00:0${i}` } });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
    }
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [t.tenantId])).rows[0].n === 5);
    const all = await call(svc.base, 'GET', '/v1/sessions?limit=10', { auth: t.apiKey });
    const ids: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const r = await call(svc.base, 'GET', `/v1/sessions?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { auth: t.apiKey });
      expect(r.status).toBe(200);
      expect(r.body.total).toBe(5);
      ids.push(...r.body.data.map((x: { id: string }) => x.id));
      cursor = r.body.next_cursor;
      if (cursor === null) break;
    }
    expect(ids).toHaveLength(5);
    expect(ids).toEqual(all.body.data.map((x: { id: string }) => x.id));
  });

  test('the audit day API is paged: limit and cursor give every record once, in chain order', async ({ db }) => {
    const t = await newTenant(svc.service);
    for (let i = 0; i < 5; i++) expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { max_uses: 1 } })).status).toBe(201);
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1', [t.tenantId])).rows[0].n === 5);
    const today = new Date().toISOString().slice(0, 10);
    const seqs: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r = await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${today}&limit=2${cursor ? `&cursor=${cursor}` : ''}`, { auth: t.apiKey });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.chain_valid).toBe(true);
      expect(r.body.count).toBe(r.body.records.length);
      seqs.push(...r.body.records.map((x: { seq: number }) => x.seq));
      cursor = r.body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(3);
    expect(seqs).toEqual([1, 2, 3, 4, 5]);
    expect((await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${today}&limit=5001`, { auth: t.apiKey })).status).toBe(400);
  });
});

describe('/metrics', () => {
  storesTest('with METRICS_PORT it is served there only (behind METRICS_TOKEN), never on the main or the portal port', async () => {
    const token = 'metrics-token-0123456789';
    const svc = await startService({ METRICS_PORT: '0', METRICS_TOKEN: token, PORTAL_PORT: '0' });
    try {
      const { main, portal, metrics } = svc.service.http.ports;
      expect(metrics).toBeGreaterThan(0);
      const at = (port: number, path: string, headers: Record<string, string> = {}): Promise<Response> => fetch(`http://127.0.0.1:${port}${path}`, { headers });
      for (const port of [main!, portal!]) {
        expect((await at(port, '/metrics', { authorization: `Bearer ${token}` })).status).toBe(404);
        expect((await at(port, '/readyz')).status).toBe(404);
      }
      expect((await at(main!, '/healthz')).status).toBe(200);
      const refused = await at(metrics!, '/metrics');
      expect(refused.status).toBe(401);
      expect(await refused.json()).toEqual({ error: 'unauthorized', message: expect.any(String) });
      expect((await at(metrics!, '/metrics', { authorization: 'Bearer wrong-token-0123456789' })).status).toBe(401);
      const ok = await at(metrics!, '/metrics', { authorization: `Bearer ${token}` });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('# TYPE');
      expect((await at(metrics!, '/readyz')).status).toBe(200);
    } finally {
      await svc.stop();
    }
  });
});
