import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, RADSEC_SECRET, RadiusCrypto, checkFraming } from '../../radius/index.js';
import { TestNas, accessRequest } from '../radius/helpers.js';
import { TlsNas, makeTestPki } from '../support/radsec-peer.js';
import { call, dashed, macs, newTenant, type Running, startService } from '../support/fixture.js';
import { registerOnFreeLoopback } from '../support/loopback-nas.js';

/**
 * RadSec with RADIUS threads (RADIUS_THREADS=2, docs/radius.md "Threads"):
 * the threads own the UDP ports, and the main thread's server, which binds
 * none, still answers RadSec connections; the same NAS is served over both.
 */
const rc = new RadiusCrypto();
const pki = makeTestPki();

describe('RadSec beside RADIUS threads', () => {
  let svc: Running;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let ip = '';
  const secret = `udp-${randomBytes(8).toString('hex')}`;
  const code = `RSTHR-${randomBytes(4).toString('hex').toUpperCase()}`;
  const device = macs();

  beforeAll(async () => {
    svc = await startService({
      RADIUS_THREADS: '2', LOG_LEVEL: process.env.DBG_LOG ?? 'silent',
      RADSEC_CERT_FILE: pki.path('server.pem'), RADSEC_KEY_FILE: pki.path('server.key'), RADSEC_CA_FILE: pki.path('ca.pem'), RADSEC_PORT: '0',
    });
    t = await newTenant(svc.service, 'RadSec Threads Venue');
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null } })).status).toBe(201);
    ip = (await registerOnFreeLoopback(svc.base, t.apiKey, t.hotspotId, (at) => ({ ip: at, secret, coa_port: 3799 }))).ip;
  });
  afterAll(async () => {
    await svc?.stop();
    pki.remove();
  });

  it('a voucher guest is let in over TLS and over UDP, the UDP ports held by the threads alone', async () => {
    expect(svc.service.radiusThreads?.listening).toBe(2);
    expect(svc.service.radius!.ports).toEqual({ auth: 0, acct: 0 });
    const tls = await TlsNas.open(pki, svc.service.radiusPorts.radsec, 'nas', ip);
    try {
      const req = accessRequest({ id: 1, secret: RADSEC_SECRET, userName: code, password: code, callingStationId: dashed(device()) });
      tls.socket.write(req);
      const reply = await tls.next();
      expect(reply[0]).toBe(Code.ACCESS_ACCEPT);
      expect(rc.verifyResponseAuthenticator(reply, checkFraming(reply), req.subarray(4, 20), RADSEC_SECRET)).toBe(true);
    } finally {
      tls.close();
    }
    const udp = await TestNas.open(ip);
    try {
      const req = accessRequest({ id: 2, secret, userName: code, password: code, callingStationId: dashed(device()) });
      const reply = await udp.exchange(req, svc.service.radiusPorts.auth, 5000);
      expect(reply?.[0]).toBe(Code.ACCESS_ACCEPT);
      expect(rc.verifyResponseAuthenticator(reply!, checkFraming(reply!), req.subarray(4, 20), secret)).toBe(true);
    } finally {
      await udp.close();
    }
  });
});
