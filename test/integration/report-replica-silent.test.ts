import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, mac, newTenant, newVoucher, startService, type Running } from '../support/fixture.js';

/**
 * DATABASE_REPLICA_URL naming a host that takes the connection and never answers (a machine gone
 * half-way, a black hole): the reports answer 503 once the replica pool's connect time-out (5 s) has
 * passed, not after the system's TCP time-out, and sign-ins do not wait on it at all.
 */
describe('reports on a replica that never answers', () => {
  let silent: Server;
  const held: Socket[] = [];
  let svc: Running;

  beforeAll(async () => {
    silent = createServer((s) => { held.push(s); s.on('error', () => undefined); });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as AddressInfo).port;
    svc = await startService({ DATABASE_REPLICA_URL: `postgres://postgres@127.0.0.1:${port}/guestwifi` });
  });
  afterAll(async () => {
    await svc?.stop();
    for (const s of held) s.destroy();
    await new Promise((r) => silent.close(r));
  });

  it('a report is a 503 within the connect time-out; a sign-in meanwhile is answered as ever', async () => {
    const t = await newTenant(svc.service, 'Silent Replica Venue');
    const v = await newVoucher(svc.base, t);
    const started = Date.now();
    const report = call(svc.base, 'GET', '/v1/reports/sessions?from=2026-05-05&to=2026-05-05', { auth: t.apiKey });
    const signIn = await call(svc.base, 'POST', '/api/v1/hotspot-portal/voucher/verify', { body: { hotspot_id: t.hotspotId, code: v.code, mac: mac(2, 0x72) } });
    expect(signIn.status, JSON.stringify(signIn.body)).toBe(200);
    const r = await report;
    expect(r.status, JSON.stringify(r.body)).toBe(503);
    expect(r.body).toMatchObject({ error: 'service_unavailable' });
    // The pool's 5 s, not the minutes of a TCP connect time-out (generous for a loaded machine's scheduling).
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(held.length).toBeGreaterThan(0);
  });
});
