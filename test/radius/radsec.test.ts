import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NasRecord } from '../../engine/index.js';
import { AcctStatusType, Code, PacketWriter, RADSEC_SECRET, RadiusServer, RadsecListener } from '../../radius/index.js';
import { freeUdpPort } from '../../scripts/local-services.js';
import { until } from '../support/poll.js';
import { TlsNas, makeTestPki } from '../support/radsec-peer.js';
import { TestHandler, accessRequest, accountingRequest, nasRecord, silentLogger } from './helpers.js';

/**
 * RADIUS over TLS (RFC 6614): a NAS with a client certificate from the
 * configured CA sends its requests over one TLS connection, signed with the
 * secret `radsec`; they are matched to NAS records by the peer's address as
 * datagrams are, and answered on the same connection. Tried with our own TLS
 * client and with a real peer: radsecproxy (Debian) relaying radclient.
 */

const run = promisify(execFile);
const pki = makeTestPki();
const file = (name: string): string => pki.path(name);

/** RFC 2865 §3: MD5(Code + Identifier + Length + Request Authenticator + Attributes + Secret). */
function responseAuthenticatorOk(reply: Buffer, request: Buffer, secret: string): boolean {
  const h = createHash('md5').update(reply.subarray(0, 4)).update(request.subarray(4, 20)).update(reply.subarray(20)).update(secret).digest();
  return h.equals(reply.subarray(4, 20));
}

describe('RadSec (RFC 6614): RADIUS over mutual TLS', () => {
  let nas: NasRecord;
  let handler: TestHandler;
  let server: RadiusServer;
  let listener: RadsecListener;
  let port = 0;
  const open: TlsNas[] = [];
  const nasOver = async (cert: 'nas' | 'rogue' | null = 'nas'): Promise<TlsNas> => {
    const c = await TlsNas.open(pki, port, cert);
    open.push(c);
    return c;
  };

  afterAll(() => pki.remove());
  beforeEach(async () => {
    // A NAS that must sign its UDP Access-Requests with a Message-Authenticator (Blast-RADIUS); over TLS it need not.
    nas = nasRecord({ secret: 'the-udp-secret', requireMessageAuthenticator: true });
    handler = new TestHandler(nas);
    server = new RadiusServer({ handler, authPort: 0, acctPort: 0, host: '127.0.0.1', logger: silentLogger });
    await server.start();
    listener = new RadsecListener({
      server, host: '127.0.0.1', port: 0, logger: silentLogger,
      cert: readFileSync(file('server.pem')), key: readFileSync(file('server.key')), ca: readFileSync(file('ca.pem')),
    });
    port = await listener.start();
  });
  afterEach(async () => {
    for (const c of open.splice(0)) c.close();
    await listener.stop();
    await server.stop();
  });

  it('answers Access-Requests signed with "radsec" on the same connection, framed whatever the TCP segments', async () => {
    const c = await nasOver();
    const reqs = [1, 2, 3].map((id) => accessRequest({ id, secret: RADSEC_SECRET, userName: `guest${id}`, password: 'CODE' }));
    // Two packets in one write, the third split mid-header and mid-body.
    c.socket.write(Buffer.concat([reqs[0]!, reqs[1]!]));
    c.socket.write(reqs[2]!.subarray(0, 3));
    await until(() => handler.accessMsgs.length === 2, { what: 'the first two requests' });
    c.socket.write(reqs[2]!.subarray(3, 30));
    c.socket.write(reqs[2]!.subarray(30));
    const replies = [await c.next(), await c.next(), await c.next()];
    expect(replies.map((r) => [r[0], r[1]])).toEqual([[Code.ACCESS_ACCEPT, 1], [Code.ACCESS_ACCEPT, 2], [Code.ACCESS_ACCEPT, 3]]);
    replies.forEach((r, i) => expect(responseAuthenticatorOk(r, reqs[i]!, RADSEC_SECRET)).toBe(true));
    // The password was hidden with "radsec" and read back with it; the NAS is the record of the peer's address.
    expect(handler.accessMsgs.map((m) => [m.password, m.nas.id])).toEqual([['CODE', nas.id], ['CODE', nas.id], ['CODE', nas.id]]);
  });

  it('carries accounting and Status-Server on the same connection', async () => {
    const c = await nasOver();
    const acct = accountingRequest({ id: 9, secret: RADSEC_SECRET, status: AcctStatusType.START, callingStationId: '02-00-00-00-00-01' });
    c.socket.write(acct);
    const r1 = await c.next();
    expect([r1[0], r1[1], responseAuthenticatorOk(r1, acct, RADSEC_SECRET)]).toEqual([Code.ACCOUNTING_RESPONSE, 9, true]);
    expect(handler.accountingMsgs).toHaveLength(1);
    const status = new PacketWriter().begin(Code.STATUS_SERVER, 10, randomBytes(16)).messageAuthenticator().finishAccessRequest(RADSEC_SECRET);
    c.socket.write(status);
    const r2 = await c.next();
    expect([r2[0], r2[1]]).toEqual([Code.ACCESS_ACCEPT, 10]);
  });

  it("drops a packet signed with the NAS's UDP secret: over TLS the secret is radsec", async () => {
    const c = await nasOver();
    c.socket.write(accessRequest({ id: 4, secret: nas.secret, userName: 'g', password: 'p' }));
    c.socket.write(accountingRequest({ id: 5, secret: nas.secret }));
    await until(() => server.stats().dropped.bad_message_authenticator === 1 && server.stats().dropped.bad_authenticator === 1,
      { what: 'both packets dropped' });
    expect(c.replies).toEqual([]);
    expect(handler.accessMsgs.length + handler.accountingMsgs.length).toBe(0);
  });

  it('a peer address with no NAS record is an unknown NAS', async () => {
    handler.nases.clear();
    const c = await nasOver();
    c.socket.write(accessRequest({ id: 6, secret: RADSEC_SECRET, userName: 'g', password: 'p' }));
    await until(() => server.stats().dropped.unknown_nas === 1, { what: 'unknown NAS dropped' });
    expect(c.replies).toEqual([]);
  });

  it('refuses a client without a certificate or with one from another CA', async () => {
    for (const cert of [null, 'rogue'] as const) {
      // The handshake fails, or (TLS 1.3) the connection is closed right after it: either way nothing is served.
      const c = await TlsNas.open(pki, port, cert).catch(() => null);
      if (c) {
        open.push(c);
        c.socket.on('error', () => undefined);
        c.socket.write(accessRequest({ id: 7, secret: RADSEC_SECRET, userName: 'g', password: 'p' }));
        await until(() => c.closed, { what: `the ${cert ?? 'certificate-less'} connection closed by the server` });
        expect(c.replies).toEqual([]);
      }
    }
    expect(handler.accessMsgs).toEqual([]);
  });

  it('closes a connection whose stream cannot be framed (a Length under 20)', async () => {
    const c = await nasOver();
    c.socket.write(Buffer.from([Code.ACCESS_REQUEST, 1, 0, 4, ...randomBytes(16)]));
    await until(() => c.closed, { what: 'connection closed' });
    expect(handler.accessMsgs).toEqual([]);
  });

  it('serves a real RadSec peer: radclient through radsecproxy (Debian)', async () => {
    const udp = await freeUdpPort();
    const conf = file('radsecproxy.conf');
    writeFileSync(conf, [
      `ListenUDP 127.0.0.1:${udp}`, 'LogLevel 3',
      'tls default {', `  CACertificateFile ${file('ca.pem')}`, `  CertificateFile ${file('nas.pem')}`, `  CertificateKeyFile ${file('nas.key')}`, '}',
      'client radclient {', '  host 127.0.0.1', '  type udp', '  secret local-secret', '}',
      'server engine {', '  host 127.0.0.1', `  port ${port}`, '  type tls', '  secret radsec', '  tls default', '  CertificateNameCheck off', '}',
      'realm * {', '  server engine', '  accountingServer engine', '}', '',
    ].join('\n'));
    // In the foreground (-f), logging to its standard error, kept for the failure message.
    const proxy: ChildProcess = spawn('radsecproxy', ['-f', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    let said = '';
    proxy.stderr!.on('data', (d: Buffer) => { said = (said + d.toString()).slice(-4000); });
    try {
      const radclient = async (kind: 'auth' | 'acct', attrs: string): Promise<string> => {
        // radclient retries on its own while radsecproxy is still connecting; each run is bounded.
        const { stdout } = await run('sh', ['-c', `printf '%s\\n' '${attrs}' | radclient -r 5 -t 2 -x 127.0.0.1:${udp} ${kind} local-secret`], { timeout: 30_000 });
        return stdout;
      };
      await until(async () => /Access-Accept/.test(await radclient('auth', 'User-Name = "guest", User-Password = "CODE"').catch(() => '')),
        { timeoutMs: 30_000, what: 'Access-Accept through radsecproxy' })
        .catch((err: Error) => { throw new Error(`${err.message}; server stats ${JSON.stringify(server.stats())}; radsecproxy said: ${said}`); });
      expect(await radclient('acct', 'User-Name = "guest", Acct-Status-Type = Start, Calling-Station-Id = "02-00-00-00-00-02", Acct-Session-Id = "rs-1"'))
        .toMatch(/Accounting-Response/);
      expect(handler.accessMsgs.some((m) => m.userName === 'guest' && m.password === 'CODE' && m.nas.id === nas.id)).toBe(true);
      expect(handler.accountingMsgs.map((m) => m.acctSessionId)).toContain('rs-1');
    } finally {
      proxy.kill('SIGTERM');
    }
  }, 60_000);
});
