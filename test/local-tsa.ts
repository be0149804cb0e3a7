import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A time-stamp authority on 127.0.0.1 made of `openssl ts -reply`: a
 * self-signed signing certificate (no CA; extendedKeyUsage critical
 * timeStamping, as RFC 3161 §2.3 requires), an `openssl ts` configuration,
 * and an HTTP server that answers each application/timestamp-query with the
 * TimeStampResp openssl writes. Requests are answered one at a time: openssl
 * rewrites its serial file on each reply.
 */
export interface LocalTsa {
  url: string;
  /** The signing certificate, the trust anchor for `openssl ts -verify -CAfile`. */
  certFile: string;
  dir: string;
  /** Replies served (granted or not). */
  requests: number;
  /** When set, every request gets HTTP 503, as from an authority that is down. */
  down: boolean;
  /** When set, every request gets the last reply again, as from a replaying cache. */
  replay: boolean;
  close(): Promise<void>;
}

export async function startLocalTsa(): Promise<LocalTsa> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-tsa-'));
  const certFile = join(dir, 'tsa.crt');
  await run('openssl', [
    'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '2',
    '-keyout', join(dir, 'tsa.key'), '-out', certFile, '-subj', '/CN=Test Time-Stamp Authority',
    '-addext', 'extendedKeyUsage=critical,timeStamping',
    '-addext', 'keyUsage=critical,digitalSignature',
  ]);
  writeFileSync(join(dir, 'serial'), '01\n');
  const config = join(dir, 'tsa.cnf');
  writeFileSync(config, [
    '[ tsa ]',
    'default_tsa = local_tsa',
    '[ local_tsa ]',
    `dir = ${dir}`,
    'serial = $dir/serial',
    'crypto_device = builtin',
    'signer_cert = $dir/tsa.crt',
    'certs = $dir/tsa.crt',
    'signer_key = $dir/tsa.key',
    'signer_digest = sha256',
    'default_policy = 1.3.6.1.4.1.99999.1',
    'digests = sha256, sha384, sha512',
    'accuracy = secs:1',
    'ordering = no',
    'tsa_name = yes',
    'ess_cert_id_chain = no',
    'ess_cert_id_alg = sha256',
    '',
  ].join('\n'));

  let queue: Promise<unknown> = Promise.resolve();
  let n = 0;
  let last: Buffer | null = null;
  const tsa: LocalTsa = {
    url: '', certFile, dir, requests: 0, down: false, replay: false,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }).finally(() => rmSync(dir, { recursive: true, force: true })),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (tsa.down) {
        res.writeHead(503).end();
        return;
      }
      if (req.method !== 'POST' || req.headers['content-type'] !== 'application/timestamp-query') {
        res.writeHead(415).end();
        return;
      }
      if (tsa.replay && last) {
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(last);
        return;
      }
      const id = ++n;
      const query = join(dir, `q${id}.tsq`);
      const reply = join(dir, `r${id}.tsr`);
      queue = queue.then(async () => {
        try {
          writeFileSync(query, Buffer.concat(chunks));
          await run('openssl', ['ts', '-reply', '-config', config, '-queryfile', query, '-out', reply]);
          tsa.requests++;
          last = readFileSync(reply);
          res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(last);
        } catch (err) {
          res.writeHead(500).end(String(err));
        }
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  tsa.url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/tsa`;
  return tsa;
}
