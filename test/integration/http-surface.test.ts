import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createServer, type AddressInfo } from 'node:net';
import { call, newTenant, type Running, serviceTest, spawnService, startService, type Tenant, testEnv } from '../support/fixture.js';

const LIMIT = 2048;
const VERIFY = '/api/v1/hotspot-portal/voucher/verify';

const test = serviceTest({ BODY_LIMIT_BYTES: String(LIMIT) });

/**
 * The HTTP surface's own behaviour: body limit, JSON and schema errors, 404
 * and 405, the operations endpoints, the OpenAPI document, and a portal on a
 * port of its own.
 */
describe('HTTP surface', () => {
  let svc: Running;
  let t: Tenant;
  test.beforeAll(async ({ svc: s_ }) => {
    svc = s_;
    t = await newTenant(svc.service);
  });

  describe('request bodies', () => {
    test('answers a body over BODY_LIMIT_BYTES with 413 JSON, with Content-Length or chunked', async () => {
      const over = JSON.stringify({ code: 'BIG12345', notes: 'x'.repeat(LIMIT) });
      const declared = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, raw: over });
      expect(declared.status).toBe(413);
      expect(declared.headers.get('content-type')).toBe('application/json');
      expect(declared.body).toEqual({ error: 'payload_too_large', message: `Request body exceeds ${LIMIT} bytes` });

      const chunks = [over.slice(0, 1000), over.slice(1000, 2000), over.slice(2000)];
      const res = await fetch(`${svc.base}/v1/vouchers`, {
        method: 'POST',
        headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
        body: new ReadableStream({ start(c) { for (const ch of chunks) c.enqueue(new TextEncoder().encode(ch)); c.close(); } }),
        duplex: 'half',
      } as RequestInit);
      expect(res.status).toBe(413);
      expect((await res.json()).error).toBe('payload_too_large');

      // The guest-facing portal has the same cap, before anything else is looked at.
      const portal = await call(svc.base, 'POST', VERIFY, { raw: JSON.stringify({ code: 'x'.repeat(LIMIT), mac: '02:00:00:00:00:01' }) });
      expect(portal.status).toBe(413);

      // Nothing was created, and a body just under the cap goes through.
      expect((await call(svc.base, 'GET', '/v1/vouchers', { auth: t.apiKey })).body.data.map((v: { code: string }) => v.code)).not.toContain('BIG12345');
      const under = JSON.stringify({ code: 'UNDER123', notes: 'x'.repeat(1900) });
      expect(Buffer.byteLength(under)).toBeLessThanOrEqual(LIMIT);
      expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, raw: under })).status).toBe(201);
    });

    test('answers malformed JSON with 400 invalid_json', async () => {
      for (const raw of ['{"code": ', '{code: "X"}', 'null}', '{"a":1}{']) {
        const r = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, raw });
        expect(r.status, raw).toBe(400);
        expect(r.body, raw).toEqual({ error: 'invalid_json', message: expect.stringContaining('not valid JSON') });
      }
      const portal = await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { raw: '{"code":"A",' });
      expect(portal.status).toBe(400);
      expect(portal.body.error).toBe('invalid_json');
    });

    test('answers schema violations with 400 validation_failed and details naming each field', async () => {
      const cases: [string, string, unknown, { field: string; message: string }[]][] = [
        ['POST', '/v1/vouchers', { max_uses: 'five' }, [{ field: 'max_uses', message: 'has the wrong type or format' }]],
        ['POST', '/v1/vouchers', { expires_at: 'tomorrow' }, [{ field: 'expires_at', message: 'has the wrong type or format' }]],
        ['POST', '/v1/vouchers', { bogus: 1 }, [{ field: 'bogus', message: 'is not a known field' }]],
        ['POST', '/v1/vouchers', { code: 'has space' }, [{ field: 'code', message: expect.stringContaining('pattern') }]],
        ['POST', '/v1/vouchers', { duration_minutes: 0 }, [{ field: 'duration_minutes', message: 'must be >= 1' }]],
        ['POST', '/v1/hotspots', { location: 'x' }, [
          { field: 'name', message: expect.stringContaining('required') }, { field: 'timezone', message: expect.stringContaining('required') },
        ]],
        ['POST', '/api/v1/vouchers', { count: 10_001 }, [{ field: 'count', message: 'must be <= 10000' }]],
        ['POST', '/api/v1/vouchers', { format: { charset: 'hex' } }, [{ field: 'format.charset', message: expect.any(String) }]],
        ['POST', `/v1/hotspots/${'hs_x'}/nas-clients`, { ip: 'not-an-ip', secret: 'short' }, [
          { field: 'ip', message: 'has the wrong type or format' }, { field: 'secret', message: expect.stringContaining('8') },
        ]],
        // Valid RFC 3339 that neither JavaScript nor Postgres can hold: a leap second, year 0, a huge offset.
        ['POST', '/v1/vouchers', { expires_at: '2016-12-31T23:59:60Z' }, [{ field: 'expires_at', message: 'has the wrong type or format' }]],
        ['POST', '/api/v1/vouchers', { count: 1, expires_at: '0000-06-01T00:00:00Z' }, [{ field: 'expires_at', message: 'has the wrong type or format' }]],
        ['GET', '/v1/compliance/audit-chain?date=0000-01-01', undefined, [{ field: 'date', message: expect.stringContaining('format') }]],
        ['GET', '/v1/vouchers?offset=100000000000000000000', undefined, [{ field: 'offset', message: 'must be <= 10000' }]],
        ['GET', '/v1/vouchers?status=bogus&limit=0', undefined, [
          { field: 'status', message: expect.any(String) }, { field: 'limit', message: 'must be >= 1' },
        ]],
      ];
      for (const [method, path, body, details] of cases) {
        const r = await call(svc.base, method, path, { auth: t.apiKey, body });
        const what = `${method} ${path} ${JSON.stringify(body)}`;
        expect(r.status, what).toBe(400);
        expect(r.body, what).toEqual({ error: 'validation_failed', message: expect.any(String), details });
      }
      const missing = await call(svc.base, 'POST', '/v1/hotspots', { auth: t.apiKey });
      expect(missing.status).toBe(400);
      expect(missing.body.error).toBe('validation_failed');
    });
  });

  describe('routing', () => {
    test('answers an unknown route with 404 JSON', async () => {
      for (const path of ['/', '/nope', '/v1/nothing/here', '/v2/vouchers', '/api/v1/hotspot-portal/voucher']) {
        const r = await call(svc.base, 'GET', path);
        expect(r.status, path).toBe(404);
        expect(r.headers.get('content-type')).toBe('application/json');
        expect(r.body, path).toEqual({ error: 'not_found', message: expect.any(String) });
      }
    });

    test('answers a known path with another method with 405 JSON and an Allow header', async () => {
      const cases: [string, string, string][] = [
        ['DELETE', '/v1/hotspots', 'GET, POST'],
        ['PATCH', '/v1/vouchers/vch_x', 'GET, DELETE'],
        ['GET', VERIFY, 'POST'],
        ['POST', '/healthz', 'GET'],
      ];
      for (const [method, path, allow] of cases) {
        const r = await call(svc.base, method, path, { auth: t.apiKey });
        expect(r.status, `${method} ${path}`).toBe(405);
        expect(r.headers.get('allow')).toBe(allow);
        expect(r.body).toEqual({ error: 'method_not_allowed', message: expect.stringContaining(method) });
      }
    });

    test('survives a malformed percent escape in a path parameter', async () => {
      for (const path of ['/v1/vouchers/%zz', '/v1/vouchers/%E0%A4%A', '/v1/hotspots/%']) {
        const r = await call(svc.base, 'GET', path, { auth: t.apiKey });
        expect(r.status, path).toBe(404);
        expect(r.body.error).toMatch(/_not_found$/);
      }
      expect((await call(svc.base, 'GET', '/healthz')).status).toBe(200);
    });
  });

  describe('operations endpoints', () => {
    test('/healthz and /readyz', async () => {
      expect(await call(svc.base, 'GET', '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
      expect(await call(svc.base, 'GET', '/readyz')).toMatchObject({
        status: 200, body: { status: 'ready', checks: { redis: true, postgres: true } },
      });
    });

    test('/metrics is Prometheus text and counts verifications by outcome', async () => {
      const read = async (): Promise<{ text: string; notFound: number }> => {
        const res = await fetch(`${svc.base}/metrics`);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
        const text = await res.text();
        const m = /^guestwifi_voucher_verify_total\{result="not_found"\} (\d+)$/m.exec(text);
        return { text, notFound: m ? Number(m[1]) : 0 };
      };
      const before = await read();
      expect(before.text).toContain('# TYPE guestwifi_voucher_verify_total counter');
      await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'NO-SUCH', mac: '02:00:00:00:00:01' } });
      await call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code: 'NO-SUCH', mac: '02:00:00:00:00:02' } });
      const after = await read();
      expect(after.notFound).toBe(before.notFound + 2);
      // prom-client's exposition: a blank line between metrics, any number of labels.
      for (const line of after.text.trim().split('\n').filter((l) => l !== '')) {
        expect(line).toMatch(/^(# (HELP|TYPE) \w+ .+|\w+(\{\w+="[^"]*"(,\w+="[^"]*")*\})? ([\d.e+-]+|NaN|\+Inf))$/);
      }
    });

    test('/v1/openapi.json describes the API as OpenAPI 3.1.0', async () => {
      const r = await call(svc.base, 'GET', '/v1/openapi.json');
      expect(r.status).toBe(200);
      expect(r.body.openapi).toBe('3.1.0');
      for (const path of ['/v1/vouchers', '/v1/vouchers/{id}', '/v1/hotspots', '/v1/hotspots/{id}/nas-clients', '/api/v1/vouchers', VERIFY]) {
        expect(r.body.paths, path).toHaveProperty([path]);
      }
      expect(Object.keys(r.body.paths[VERIFY])).toEqual(['post']);
      expect(Object.keys(r.body.paths['/v1/hotspots/{id}/nas-clients']).sort()).toEqual(['get', 'post']);
      expect(r.body.paths['/v1/vouchers'].post.responses).toHaveProperty('201');
    });
  });

  describe('a portal on its own port', () => {
    let split: Running;
    beforeAll(async () => { split = await startService({ PORTAL_PORT: '0' }); });
    afterAll(async () => { await split.stop(); });

    test('serves the portal there and nothing else; the main port no longer serves the portal', async () => {
      const ports = split.service.http.ports;
      expect(ports.portal).toEqual(expect.any(Number));
      expect(ports.portal).not.toBe(ports.main);
      const portal = `http://127.0.0.1:${ports.portal}`;
      const st = await newTenant(split.service);
      expect((await call(split.base, 'POST', '/v1/vouchers', { auth: st.apiKey, body: { code: 'SPLIT1', max_uses: 2 } })).status).toBe(201);

      const ok = await call(portal, 'POST', `${VERIFY}?hotspot_id=${st.hotspotId}`, { body: { code: 'SPLIT1', mac: '02:00:00:00:0F:01' } });
      expect(ok.status).toBe(200);
      expect(ok.body.uses_left).toBe(1);

      for (const [method, path] of [['GET', '/v1/hotspots'], ['POST', '/v1/vouchers'], ['GET', '/healthz'], ['GET', '/v1/openapi.json']]) {
        const r = await call(portal, method!, path!, { auth: st.apiKey, body: method === 'POST' ? { code: 'NOPE1' } : undefined });
        expect(r.status, `${method} ${path} on the portal port`).toBe(404);
        expect(r.body.error).toBe('not_found');
      }

      const onMain = await call(split.base, 'POST', `${VERIFY}?hotspot_id=${st.hotspotId}`, { body: { code: 'SPLIT1', mac: '02:00:00:00:0F:02' } });
      expect(onMain.status).toBe(404);
      expect(onMain.body).toEqual({ error: 'not_found', message: expect.any(String) });
      expect((await call(split.base, 'GET', '/v1/hotspots', { auth: st.apiKey })).status).toBe(200);
      // The refused attempt on the main port spent nothing.
      expect((await call(portal, 'POST', `${VERIFY}?hotspot_id=${st.hotspotId}`, { body: { code: 'SPLIT1', mac: '02:00:00:00:0F:03' } })).body.uses_left).toBe(0);
    });

    test('a port already taken is refused at start, by another service or by a second surface', async () => {
      // Without the exclusive flag uSockets binds with SO_REUSEPORT, and a second process binding the
      // same port (a port it names, as a deployment does, not port 0) would share it, the kernel
      // splitting connections between the two.
      const port = await new Promise<number>((resolve) => {
        const probe = createServer().listen(0, '127.0.0.1', () => {
          const p = (probe.address() as AddressInfo).port;
          probe.close(() => resolve(p));
        });
      });
      const refused = async (env: Record<string, string>): Promise<void> => {
        const second = await spawnService({ ...process.env, ...testEnv({ RADIUS_ENABLED: 'false', ...env }) }).catch((err: Error) => err);
        if (!(second instanceof Error)) {
          await second.stop();
          expect.fail(`a second service started on the taken port ${port}`);
        }
        expect(second.message).toMatch(/service exited with 1/);
      };
      const first = await startService({ PORTAL_PORT: String(port), RADIUS_ENABLED: 'false' });
      try {
        await refused({ HTTP_PORT: String(port) });
        await refused({ HTTP_PORT: '0', CONSOLE_PORT: String(port) });
        // Every connection still reaches the first service's portal, and only it.
        for (let i = 0; i < 10; i++) expect((await call(`http://127.0.0.1:${port}`, 'GET', '/healthz')).status).toBe(404);
      } finally {
        await first.stop();
      }
    });
  });
});
