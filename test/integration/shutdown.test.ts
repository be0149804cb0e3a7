import { connect } from 'node:net';
import { describe, expect } from 'vitest';
import { call, keys, newTenant, startService, storesTest, until } from '../support/fixture.js';

/**
 * A shutdown (SIGTERM runs Service.stop) lets the HTTP requests being served
 * finish against a running engine, and refuses what still arrives on open
 * connections with 503 rather than running it against an engine going away.
 */
describe('graceful shutdown', () => {
  // Its own service, started here: the test stops it.
  storesTest('a batch of 10,000 vouchers in flight when the service stops is completed and answered', async ({ redis, db }) => {
    const svc = await startService();
    const t = await newTenant(svc.service);
    // A connection opened before the stop, to send a request on after it.
    const port = svc.service.http.ports.main;
    if (port === undefined) throw new Error('the service has no main port');
    const open = connect(port, '127.0.0.1');
    await new Promise((resolve) => open.once('connect', resolve));

    const batch = call(svc.base, 'POST', '/api/v1/vouchers', { auth: t.apiKey, body: { count: 10_000 } });
    // In the handler for sure: its codes are going into Redis, inside its transaction.
    await until(async () => (await redis.scan('0', 'MATCH', keys.voucher(t.tenantId, '*'), 'COUNT', 1000))[1].length > 0, { timeoutMs: 10_000 });
    const stopping = svc.stop();

    // What arrives now on the open connection is refused, and the connection closed.
    const answer = new Promise<string>((resolve) => {
      let text = '';
      open.on('data', (d) => { text += d.toString(); });
      open.on('close', () => resolve(text));
    });
    open.write(`GET /v1/hotspots HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${t.apiKey}\r\n\r\n`);
    const refused = await answer;
    expect(refused).toMatch(/^HTTP\/1\.1 503/);
    expect(refused).toContain('"error":"service_unavailable"');

    const r = await batch;
    expect(r.status).toBe(201);
    await stopping;
    const { rows } = await db.query('SELECT count(*)::int AS n FROM vouchers WHERE tenant_id = $1', [t.tenantId]);
    expect(rows[0].n).toBe(10_000);
  });
});
