import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeUdpPort } from '../../scripts/local-services.js';
import { makeTestPki } from '../support/radsec-peer.js';
import { call, dashed, macs, newTenant, type Running, startService, until } from '../support/fixture.js';
import { registerOnFreeLoopback } from '../support/loopback-nas.js';

/**
 * A NAS client bound to its RadSec client certificate (issue 24, migration
 * 029), against the real peer: radsecproxy (Debian) relaying radclient, from
 * the NAS client's own address (SourceTLS). The record names `NAS-1`; the
 * proxy with the CA's certificate for CN nas-1 is answered, the proxy with
 * the same CA's certificate for nas-2, from the same address, is not: its
 * packets are dropped and counted (radsec_cert_mismatch).
 */
const run = promisify(execFile);
const pki = makeTestPki();
pki.issueClient('nas-2', 'nas-2');


/** radsecproxy relaying UDP on a port of its own to the service's RadSec port, with `cert`, from `source`. */
async function radsecproxy(cert: string, source: string, port: number): Promise<{ udp: number; stop(): void; said(): string }> {
  const udp = await freeUdpPort();
  const conf = pki.path(`radsecproxy-${cert}.conf`);
  writeFileSync(conf, [
    `ListenUDP 127.0.0.1:${udp}`, `SourceTLS ${source}`, 'LogLevel 3',
    'tls default {', `  CACertificateFile ${pki.path('ca.pem')}`, `  CertificateFile ${pki.path(`${cert}.pem`)}`, `  CertificateKeyFile ${pki.path(`${cert}.key`)}`, '}',
    'client radclient {', '  host 127.0.0.1', '  type udp', '  secret local-secret', '}',
    'server engine {', '  host 127.0.0.1', `  port ${port}`, '  type tls', '  secret radsec', '  tls default', '  CertificateNameCheck off', '}',
    'realm * {', '  server engine', '  accountingServer engine', '}', '',
  ].join('\n'));
  // In the foreground (-f), logging to its standard error, kept for a failure's message.
  const proxy: ChildProcess = spawn('radsecproxy', ['-f', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let said = '';
  proxy.stderr!.on('data', (d: Buffer) => { said = (said + d.toString()).slice(-4000); });
  return { udp, stop: () => proxy.kill('SIGTERM'), said: () => said };
}

/** One radclient Access-Request through a proxy; its output, or '' when it got no answer. */
async function radclient(udp: number, attrs: string): Promise<string> {
  const { stdout } = await run('sh', ['-c', `printf '%s\\n' '${attrs}' | radclient -r 2 -t 2 -x 127.0.0.1:${udp} auth local-secret`], { timeout: 30_000 })
    .catch(() => ({ stdout: '' }));
  return stdout;
}

describe('RadSec: the client certificate bound to its NAS client, through radsecproxy', () => {
  let svc: Running;
  let t: Awaited<ReturnType<typeof newTenant>>;
  let ip = '';
  const code = `PIN-${randomBytes(4).toString('hex').toUpperCase()}`;
  const device = macs();

  beforeAll(async () => {
    svc = await startService({
      RADSEC_CERT_FILE: pki.path('server.pem'), RADSEC_KEY_FILE: pki.path('server.key'), RADSEC_CA_FILE: pki.path('ca.pem'), RADSEC_PORT: '0',
    });
    t = await newTenant(svc.service, 'RadSec Pin Venue');
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, max_uses: null } })).status).toBe(201);
    // A loopback address no other test file holds: the first NAS client registered there wins it.
    const pinned = await registerOnFreeLoopback(svc.base, t.apiKey, t.hotspotId, (at) => ({ ip: at, secret: 'udp-only-secret', radsec_cert_name: 'NAS-1' }));
    ip = pinned.ip;
    expect(pinned.answer.body.radsec_cert_name).toBe('NAS-1');
  });
  afterAll(async () => {
    await svc?.stop();
    pki.remove();
  });

  it('the API keeps the name, lists it, and refuses one with control characters', async () => {
    const list = await call(svc.base, 'GET', `/v1/hotspots/${t.hotspotId}/nas-clients`, { auth: t.apiKey });
    expect((list.body.data as { ip: string; radsec_cert_name: string | null }[]).find((n) => n.ip === ip)?.radsec_cert_name).toBe('NAS-1');
    const bad = await call(svc.base, 'POST', `/v1/hotspots/${t.hotspotId}/nas-clients`,
      { auth: t.apiKey, body: { ip: '127.0.0.9', secret: 'udp-only-secret', radsec_cert_name: 'nas\n1' } });
    expect(bad.status).toBe(400);
  });

  it('answers the proxy whose certificate carries the name and drops the one with another certificate of the same CA', async () => {
    const port = svc.service.radiusPorts.radsec;
    const stats = () => svc.service.radius!.stats();
    const stranger = await radsecproxy('nas-2', ip, port);
    const right = await radsecproxy('nas', ip, port);
    try {
      const attrs = (mac: string): string => `User-Name = "${code}", User-Password = "${code}", Calling-Station-Id = "${dashed(mac)}"`;
      const before = stats().dropped.radsec_cert_mismatch;
      // radclient retries on its own while the proxy connects; the packets that reach the service are dropped.
      const refused = radclient(stranger.udp, attrs(device()));
      await until(() => stats().dropped.radsec_cert_mismatch > before, { timeoutMs: 30_000, what: 'the nas-2 proxy\'s packet dropped' })
        .catch((err: Error) => { throw new Error(`${err.message}; stats ${JSON.stringify(stats())}; radsecproxy said: ${stranger.said()}`); });
      expect(await refused).not.toMatch(/Access-Accept/);

      await until(async () => /Access-Accept/.test(await radclient(right.udp, attrs(device()))),
        { timeoutMs: 30_000, what: 'Access-Accept through the nas-1 proxy' })
        .catch((err: Error) => { throw new Error(`${err.message}; stats ${JSON.stringify(stats())}; radsecproxy said: ${right.said()}`); });
    } finally {
      stranger.stop();
      right.stop();
    }
  }, 90_000);
});
