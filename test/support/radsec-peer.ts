import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { until } from './poll.js';

/**
 * A RadSec NAS for the tests: a throw-away PKI made with openssl (EC P-256, valid two days) for the TLS
 * tests: a CA signing a server certificate for 127.0.0.1/localhost and a NAS
 * client certificate, and a rogue CA signing a client certificate of the
 * same name. `path('nas.pem')` and friends; `remove()` deletes the folder.
 */
export interface TestPki {
  dir: string;
  path(name: string): string;
  /** Another client certificate from the same CA: `name`.pem/.key with subject CN `cn` and, if given, subjectAltName DNS names. */
  issueClient(name: string, cn: string, dnsNames?: string[]): void;
  remove(): void;
}

export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'gw-pki-'));
  const path = (name: string): string => join(dir, name);
  const ssl = (...args: string[]): void => { execFileSync('openssl', args, { stdio: 'ignore' }); };
  const key = (name: string): void => ssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path(`${name}.key`));
  for (const ca of ['ca', 'rogue-ca']) {
    key(ca);
    ssl('req', '-x509', '-new', '-key', path(`${ca}.key`), '-out', path(`${ca}.pem`), '-days', '2', '-subj', `/CN=Test ${ca}`);
  }
  const issue = (name: string, ca: string, cn: string, ext: string): void => {
    key(name);
    ssl('req', '-new', '-key', path(`${name}.key`), '-out', path(`${name}.csr`), '-subj', `/CN=${cn}`);
    writeFileSync(path(`${name}.ext`), ext);
    ssl('x509', '-req', '-in', path(`${name}.csr`), '-CA', path(`${ca}.pem`), '-CAkey', path(`${ca}.key`), '-CAcreateserial',
      '-out', path(`${name}.pem`), '-days', '2', '-extfile', path(`${name}.ext`));
  };
  issue('server', 'ca', 'localhost', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  issue('nas', 'ca', 'nas-1', 'extendedKeyUsage=clientAuth\n');
  issue('rogue', 'rogue-ca', 'nas-1', 'extendedKeyUsage=clientAuth\n');
  const issueClient = (name: string, cn: string, dnsNames: string[] = []): void =>
    issue(name, 'ca', cn, `${dnsNames.length ? `subjectAltName=${dnsNames.map((d) => `DNS:${d}`).join(',')}\n` : ''}extendedKeyUsage=clientAuth\n`);
  return { dir, path, issueClient, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** One TLS connection as a NAS: replies framed by their Length field, in arrival order. */
export class TlsNas {
  readonly replies: Buffer[] = [];
  closed = false;
  private pending = Buffer.alloc(0);
  private constructor(readonly socket: TLSSocket) {
    socket.on('data', (chunk: Buffer) => {
      this.pending = Buffer.concat([this.pending, chunk]);
      while (this.pending.length >= 20 && this.pending.length >= this.pending.readUInt16BE(2)) {
        const len = this.pending.readUInt16BE(2);
        this.replies.push(this.pending.subarray(0, len));
        this.pending = this.pending.subarray(len);
      }
    });
    socket.on('close', () => { this.closed = true; });
  }

  /** Connects with `cert` of `pki` ('nas', 'rogue', one made by issueClient, or none), from `localAddress` if given; rejects if the handshake fails. */
  static open(pki: TestPki, port: number, cert: string | null, localAddress?: string): Promise<TlsNas> {
    const file = pki.path;
    return new Promise((resolve, reject) => {
      const socket = connect({
        // Over a TCP connection of our own, so a test can send from another loopback address.
        socket: netConnect({ host: '127.0.0.1', port, localAddress }), servername: 'localhost', ca: readFileSync(file('ca.pem')),
        ...(cert ? { cert: readFileSync(file(`${cert}.pem`)), key: readFileSync(file(`${cert}.key`)) } : {}),
      });
      socket.once('secureConnect', () => {
        // TLS 1.3: the server judges the client's certificate after the client considers the handshake done;
        // a refusal arrives as an alert right after. A round trip proves the connection was accepted.
        resolve(new TlsNas(socket));
      });
      socket.once('error', reject);
    });
  }

  async next(): Promise<Buffer> {
    await until(() => this.replies.length > 0 || this.closed, { what: 'a RadSec reply' });
    const r = this.replies.shift();
    if (!r) throw new Error('connection closed without a reply');
    return r;
  }

  close(): void {
    this.socket.destroy();
  }
}

