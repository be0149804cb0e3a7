import { readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NasRecord } from '../../engine/index.js';
import { Code, RADSEC_SECRET, RadiusServer, RadsecListener, certificateNames } from '../../radius/index.js';
import { capturingLogger } from '../support/log-capture.js';
import { until } from '../support/poll.js';
import { TlsNas, makeTestPki } from '../support/radsec-peer.js';
import { TestHandler, accessRequest, nasRecord } from './helpers.js';

/**
 * A NAS client bound to its RadSec client certificate (migration 029,
 * `radsec_cert_name`): every certificate of RADSEC_CA_FILE's CA passes the
 * handshake, but a packet matched to a pinned NAS client is answered only on
 * a connection whose certificate carries that name (its subjectAltName DNS
 * name, else its CN); on another it is dropped, counted, and logged once per
 * connection. The real peer (radsecproxy) is tried in
 * test/integration/radsec-cert-pin.test.ts.
 */
const pki = makeTestPki();
// 'nas' is CN=nas-1 with no DNS name; these come from the same CA.
pki.issueClient('nas-2', 'nas-2');
pki.issueClient('ap-7', 'nas-1', ['AP-7.venue.example', 'ap-7-backup.venue.example']);

describe('RadSec: a NAS client pinned to its certificate name', () => {
  let nas: NasRecord;
  let handler: TestHandler;
  let server: RadiusServer;
  let listener: RadsecListener;
  let captured: ReturnType<typeof capturingLogger>;
  const open: TlsNas[] = [];
  const connect = async (cert: string): Promise<TlsNas> => {
    const c = await TlsNas.open(pki, listener.port, cert);
    open.push(c);
    return c;
  };

  afterAll(() => pki.remove());
  beforeEach(async () => {
    captured = capturingLogger('info');
    nas = nasRecord({ secret: 'the-udp-secret', radsecCertName: 'nas-1' });
    handler = new TestHandler(nas);
    server = new RadiusServer({ handler, authPort: 0, acctPort: 0, host: '127.0.0.1', logger: captured.log });
    await server.start();
    listener = new RadsecListener({
      server, host: '127.0.0.1', port: 0, logger: captured.log,
      cert: readFileSync(pki.path('server.pem')), key: readFileSync(pki.path('server.key')), ca: readFileSync(pki.path('ca.pem')),
    });
    await listener.start();
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.close();
    await listener.stop();
    await server.stop();
  });

  it('answers the certificate that carries the name, and drops, counts and logs once another of the same CA', async () => {
    const other = await connect('nas-2');
    for (const id of [1, 2, 3]) other.socket.write(accessRequest({ id, secret: RADSEC_SECRET, userName: 'g', password: 'CODE' }));
    await until(() => server.stats().dropped.radsec_cert_mismatch === 3, { what: 'three packets dropped for the certificate' });

    const right = await connect('nas');
    const req = accessRequest({ id: 4, secret: RADSEC_SECRET, userName: 'g', password: 'CODE' });
    right.socket.write(req);
    const reply = await right.next();
    expect([reply[0], reply[1]]).toEqual([Code.ACCESS_ACCEPT, 4]);
    expect(other.replies).toEqual([]);
    expect(handler.accessMsgs.map((m) => m.nas.id)).toEqual([nas.id]);

    const lines = captured.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => String(l.msg).startsWith('RadSec packet dropped'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, nas: nas.id, expected: 'nas-1', presented: ['nas-2'] });
    expect(captured.lines.join('\n')).not.toContain(nas.secret);
  });

  it('matches a DNS name of the certificate without case, and then not its CN', async () => {
    nas.radsecCertName = 'ap-7.venue.example';
    const c = await connect('ap-7');
    c.socket.write(accessRequest({ id: 5, secret: RADSEC_SECRET, userName: 'g', password: 'CODE' }));
    expect((await c.next())[0]).toBe(Code.ACCESS_ACCEPT);
    // Its CN is nas-1, but a certificate with DNS names is named by them alone (RFC 6125 §6.4.4).
    nas.radsecCertName = 'nas-1';
    c.socket.write(accessRequest({ id: 6, secret: RADSEC_SECRET, userName: 'g', password: 'CODE' }));
    await until(() => server.stats().dropped.radsec_cert_mismatch === 1, { what: 'the packet dropped' });
    expect(c.replies).toEqual([]);
  });

  it('a NAS client without a pin takes any certificate of the CA, as before', async () => {
    delete nas.radsecCertName;
    const c = await connect('nas-2');
    c.socket.write(accessRequest({ id: 7, secret: RADSEC_SECRET, userName: 'g', password: 'CODE' }));
    expect((await c.next())[0]).toBe(Code.ACCESS_ACCEPT);
  });

  it('reads the names as radsecproxy does: DNS names when there are any, else the CN; lower case', () => {
    expect(certificateNames({ subject: { CN: 'Nas-1' }, subjectaltname: 'IP Address:10.0.0.1' } as never)).toEqual(['nas-1']);
    expect(certificateNames({ subject: { CN: 'nas-1' }, subjectaltname: 'DNS:A.example, IP Address:10.0.0.1, DNS:"b,c.example"' } as never))
      .toEqual(['a.example', 'b,c.example']);
    expect(certificateNames({ subject: { CN: ['x', 'Y'] } } as never)).toEqual(['x', 'y']);
    expect(certificateNames(undefined)).toEqual([]);
  });
});
