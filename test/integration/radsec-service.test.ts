import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, RADSEC_SECRET, RadiusCrypto, checkFraming } from '../../radius/index.js';
import { accessRequest } from '../radius/helpers.js';
import { TlsNas, makeTestPki } from '../support/radsec-peer.js';
import { call, dashed, macs, newTenant, type Running, startService, until } from '../support/fixture.js';
import { registerOnFreeLoopback, strangerLoopback } from '../support/loopback-nas.js';

/**
 * RadSec in the running service (issue 24's contract): RADSEC_CERT_FILE,
 * RADSEC_KEY_FILE and RADSEC_CA_FILE turn it on beside UDP; a connection's
 * packets are matched to the tenant's NAS client by the peer's address, as
 * a datagram would be, and a voucher guest is let in over TLS.
 */
const rc = new RadiusCrypto();
const pki = makeTestPki();

describe('RadSec in the service', () => {
  let svc: Running;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let ip = '';
  const code = `RADSEC-${randomBytes(4).toString('hex').toUpperCase()}`;
  const device = macs();

  beforeAll(async () => {
    svc = await startService({
      RADSEC_CERT_FILE: pki.path('server.pem'), RADSEC_KEY_FILE: pki.path('server.key'), RADSEC_CA_FILE: pki.path('ca.pem'), RADSEC_PORT: '0',
    });
    t = await newTenant(svc.service, 'RadSec Venue');
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null } })).status).toBe(201);
    // A loopback address no other test file holds: the first NAS client registered there wins it.
    ip = (await registerOnFreeLoopback(svc.base, t.apiKey, t.hotspotId, (at) => ({ ip: at, secret: 'udp-only-secret', coa_port: 3799 }))).ip;
  });
  afterAll(async () => {
    await svc?.stop();
    pki.remove();
  });

  it('listens beside UDP and lets a voucher guest in over TLS from the NAS client\'s address', async () => {
    const port = svc.service.radiusPorts.radsec;
    expect(port).toBeGreaterThan(0);
    const nas = await TlsNas.open(pki, port, 'nas', ip);
    try {
      const mac = device();
      const req = accessRequest({ id: 1, secret: RADSEC_SECRET, userName: code, password: code, callingStationId: dashed(mac) });
      nas.socket.write(req);
      const reply = await nas.next();
      expect(reply[0]).toBe(Code.ACCESS_ACCEPT);
      expect(rc.verifyResponseAuthenticator(reply, checkFraming(reply), req.subarray(4, 20), RADSEC_SECRET)).toBe(true);
      await until(async () => {
        const r = await call(svc.base, 'GET', '/v1/sessions?status=active&limit=100', { auth: t.apiKey });
        return (r.body.data as { mac: string }[]).some((s) => s.mac === mac);
      }, { what: 'the RadSec guest\'s session' });
    } finally {
      nas.close();
    }
  });

  it('a connection from an address with no NAS client gets no answer', async () => {
    // A loopback address of its own: a certificate from the right CA is not enough without a NAS client there
    // (127.0.0.1 is another file's NAS client, and would rightly be served as that NAS).
    const stranger = strangerLoopback();
    const nas = await TlsNas.open(pki, svc.service.radiusPorts.radsec, 'nas', stranger);
    try {
      const before = svc.service.radius!.stats().dropped.unknown_nas;
      nas.socket.write(accessRequest({ id: 2, secret: RADSEC_SECRET, userName: code, password: code }));
      await until(() => svc.service.radius!.stats().dropped.unknown_nas > before, { what: 'the packet dropped as an unknown NAS' });
      expect(nas.replies).toEqual([]);
    } finally {
      nas.close();
    }
  });
});
