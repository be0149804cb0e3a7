import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { loadConfig } from '../../engine/index.js';
import { serviceTest } from '../support/fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'gw-tls-'));
const cert = join(dir, 'cert.pem');
const key = join(dir, 'key.pem');

let made = false;
/** A self-signed certificate for 127.0.0.1, made once when first needed with openssl (nothing checked in). */
const selfSigned = (): { TLS_CERT_FILE: string; TLS_KEY_FILE: string } => {
  if (!made) {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    made = true;
  }
  return { TLS_CERT_FILE: cert, TLS_KEY_FILE: key };
};

/** The service on HTTPS with that certificate. */
const it = serviceTest(async () => selfSigned());

/** HTTPS served by the service itself when given a certificate (RFC 8908 wants the portal over TLS). */
describe('TLS', () => {
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the portal page over HTTPS, trusted through exactly that certificate', async ({ svc, tenant: t, mac }) => {
    const port = svc.service.http.ports.main!;
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: `/portal?hotspot_id=${t.hotspotId}&mac=${mac()}&lang=en`, ca: readFileSync(cert) }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => { body += c; });
        res.on('end', () => resolve({ status: res.statusCode!, text: body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(200);
    expect(text).toContain('<html lang="en">');
    // Plain HTTP on that port gets no page.
    await expect(fetch(`http://127.0.0.1:${port}/portal`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
  });

  it('wants both files or neither, each readable', () => {
    selfSigned(); // the files must exist even when this test runs alone
    const env = { REDIS_URL: 'redis://127.0.0.1:6379', DATABASE_URL: 'postgres://u@127.0.0.1/db', JWT_SECRET: 'x'.repeat(32) };
    expect(loadConfig(env).tls).toBeUndefined();
    expect(loadConfig({ ...env, TLS_CERT_FILE: cert, TLS_KEY_FILE: key }).tls).toEqual({ certFile: cert, keyFile: key });
    expect(() => loadConfig({ ...env, TLS_CERT_FILE: cert })).toThrow(/TLS_CERT_FILE and TLS_KEY_FILE go together/);
    expect(() => loadConfig({ ...env, TLS_CERT_FILE: cert, TLS_KEY_FILE: join(dir, 'missing.pem') })).toThrow(/TLS_KEY_FILE=.*missing\.pem.* is not a readable file \(ENOENT\)/);
  });
});
