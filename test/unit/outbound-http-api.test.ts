import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundHttp } from '../../engine/net/outbound-http.js';
import { OutboundPolicy, type Resolver } from '../../engine/net/outbound-target.js';
import { ProviderHttp } from '../../engine/signin/providers/provider-http.js';

/**
 * What the one outbound client gives the webhook deliveries beyond the
 * providers' POST: any method, the answer's headers (Retry-After), the
 * duration, a per-origin connection bound, close(); that the providers and
 * a second caller share its keep-alive connections; and over TLS, a name
 * pinned to the address the policy checked with SNI, certificate and Host
 * still the name.
 */
describe('OutboundHttp request API', () => {
  let handler: (req: IncomingMessage, body: string, res: ServerResponse) => void = () => undefined;
  let server: ReturnType<typeof createHttpServer>;
  let base = '';
  let connections = 0;

  beforeAll(async () => {
    server = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    server.on('connection', () => { connections++; });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('a GET without a body; the answer carries its headers and duration, a 429 is an answer', async () => {
    const client = new OutboundHttp();
    let seen: { method?: string; length?: string } = {};
    handler = (req, _body, res) => {
      seen = { method: req.method, length: req.headers['content-length'] };
      res.setHeader('Set-Cookie', ['a=1', 'b=2']);
      res.writeHead(429, { 'Retry-After': '7', 'content-type': 'text/plain' }).end('slow down');
    };
    try {
      const a = await client.request({ url: `${base}/x`, method: 'GET', timeoutMs: 2000 });
      expect(seen).toEqual({ method: 'GET', length: undefined });
      expect(a.status).toBe(429);
      expect(a.headers['retry-after']).toBe('7');
      expect(a.headers['set-cookie']).toBe('a=1, b=2');
      expect(a.body.toString()).toBe('slow down');
      expect(a.durationMs).toBeGreaterThan(0);
      expect(a.durationMs).toBeLessThan(2000);
    } finally {
      client.close();
    }
  });

  it('a Buffer body goes out byte for byte with its length', async () => {
    const client = new OutboundHttp();
    handler = (_req, body, res) => res.writeHead(200).end(body);
    try {
      const a = await client.request({ url: `${base}/x`, method: 'PUT', body: Buffer.from('şğü'), timeoutMs: 2000 });
      expect(a.body.toString('utf8')).toBe('şğü');
    } finally {
      client.close();
    }
  });

  it('the providers and another caller share one keep-alive connection', async () => {
    const shared = new OutboundHttp();
    const ports = new Set<number>();
    handler = (req, _body, res) => { ports.add(req.socket.remotePort!); res.writeHead(200, { 'content-type': 'application/json' }).end('{"code":"00"}'); };
    try {
      const providers = new ProviderHttp(shared);
      expect((await providers.postJson(`${base}/sms`, {}, { a: 1 })).json).toEqual({ code: '00' });
      expect((await shared.request({ url: `${base}/hook`, body: '{}', timeoutMs: 2000 })).status).toBe(200);
      expect((await providers.postJson(`${base}/sms`, {}, { a: 2 })).status).toBe(200);
      expect(ports.size).toBe(1);
    } finally {
      shared.close();
    }
  });

  it('holds at most maxSocketsPerOrigin connections; the rest wait for one within their deadline', async () => {
    const client = new OutboundHttp({ maxSocketsPerOrigin: 2 });
    const held: ServerResponse[] = [];
    const before = connections;
    let arrived!: () => void;
    const two = new Promise<void>((r) => { arrived = r; });
    handler = (_req, body, res) => {
      if (body === 'hold') { held.push(res); if (held.length === 2) arrived(); } else res.writeHead(200).end('ok');
    };
    try {
      const slow = [client.request({ url: base, body: 'hold', timeoutMs: 5000 }), client.request({ url: base, body: 'hold', timeoutMs: 5000 })];
      await two;
      const waiting = client.request({ url: base, body: 'quick', timeoutMs: 5000 });
      const late = await client.request({ url: base, body: 'quick', timeoutMs: 50 }).catch((e: Error) => e);
      expect((late as Error).name).toBe('TimeoutError');
      for (const res of held) res.writeHead(200).end('held');
      expect((await Promise.all(slow)).map((a) => a.body.toString())).toEqual(['held', 'held']);
      expect((await waiting).body.toString()).toBe('ok');
      expect(connections - before).toBe(2);
    } finally {
      client.close();
    }
  });

  it('close() fails what is pending and refuses what comes after', async () => {
    const client = new OutboundHttp();
    let got!: () => void;
    const arrived = new Promise<void>((r) => { got = r; });
    handler = () => got(); // never answers
    const pending = client.request({ url: base, body: '{}', timeoutMs: 10_000 });
    await arrived;
    client.close();
    await expect(pending).rejects.toThrow(/closed/);
    await expect(client.request({ url: base, body: '{}', timeoutMs: 1000 })).rejects.toThrow(/client closed/);
  });

  it('refuses a bad maxSocketsPerOrigin at construction', () => {
    expect(() => new OutboundHttp({ maxSocketsPerOrigin: 0 })).toThrow(/positive integer/);
  });

  describe('TLS to a pinned name', () => {
    let dir = '';
    let https: ReturnType<typeof createHttpsServer>;
    let port = 0;
    let cert = '';
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'ob-tls-'));
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
        '-subj', '/CN=hooks.pinned.test', '-addext', 'subjectAltName=DNS:hooks.pinned.test', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
      cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
      https = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(200).end(JSON.stringify({ sni: (req.socket as TLSSocket).servername, host: req.headers.host })));
      });
      await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
      port = (https.address() as AddressInfo).port;
    });
    afterAll(async () => {
      https.closeAllConnections();
      await new Promise<void>((r) => https.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    });

    it('connects to the address the policy checked, once per connection; SNI, certificate and Host are the name', async () => {
      const calls: string[] = [];
      const resolve: Resolver = async (host) => { calls.push(host); return host === 'hooks.pinned.test' ? [{ address: '127.0.0.1', family: 4 }] : []; };
      const client = new OutboundHttp({ outbound: new OutboundPolicy({ allowPrivate: true, resolve }), ca: cert });
      try {
        const url = `https://hooks.pinned.test:${port}/in`;
        const a = await client.request({ url, body: '{}', timeoutMs: 5000 });
        const b = await client.request({ url, body: '{}', timeoutMs: 5000 });
        expect(JSON.parse(a.body.toString())).toEqual({ sni: 'hooks.pinned.test', host: `hooks.pinned.test:${port}` });
        expect(b.status).toBe(200);
        expect(calls).toEqual(['hooks.pinned.test']);
      } finally {
        client.close();
      }
    });

    it('the same pin without private targets allowed is refused before any connection', async () => {
      const client = new OutboundHttp({ outbound: new OutboundPolicy({ allowPrivate: false, resolve: async () => [{ address: '127.0.0.1', family: 4 }] }), ca: cert });
      try {
        await expect(client.request({ url: `https://hooks.pinned.test:${port}/in`, body: '{}', timeoutMs: 5000 })).rejects.toMatchObject({ name: 'TargetNotAllowedError' });
      } finally {
        client.close();
      }
    });
  });
});
