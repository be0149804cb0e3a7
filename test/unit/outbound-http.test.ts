import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OutboundHttp, type OutboundAnswer } from '../../engine/net/outbound-http.js';

/** The positional call these tests were written with, on request(). */
const post = (c: OutboundHttp, url: string, headers: Record<string, string>, body: string, timeoutMs: number, maxBodyBytes: number): Promise<OutboundAnswer> =>
  c.request({ url, headers, body, timeoutMs, maxBodyBytes });

/**
 * The service's outbound HTTP/1.1 client against node's own HTTP server (the answers
 * a provider's server may give: a length, chunks, interim answers) and against
 * raw sockets for what node's server never sends (a body ended by close).
 */
describe('OutboundHttp', () => {
  let handler: (req: IncomingMessage, body: string, res: ServerResponse) => void = () => undefined;
  const connections = new Set<Socket>();
  let http: ReturnType<typeof createHttpServer>;
  let base = '';
  const client = new OutboundHttp();

  beforeAll(async () => {
    http = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => handler(req, Buffer.concat(chunks).toString('utf8'), res));
    });
    http.on('connection', (s: Socket) => { connections.add(s); s.on('close', () => connections.delete(s)); });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterEach(() => client.closeIdle());
  afterAll(async () => {
    client.closeIdle();
    await new Promise<void>((r) => http.close(() => r()));
  });

  const text = (a: { body: Buffer }): string => a.body.toString('utf8');

  it('sends the method, path, query, headers and body; reads a Content-Length answer', async () => {
    let seen: { method?: string; url?: string; headers?: IncomingMessage['headers']; body?: string } = {};
    handler = (req, body, res) => {
      seen = { method: req.method, url: req.url, headers: req.headers, body };
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"code":"00","jobid":"7"}');
    };
    const a = await post(client, `${base}/sms/rest/v2/otp?x=1`, { authorization: 'Basic dTpw', 'content-type': 'application/json' }, '{"msg":"kod şu"}', 2000, 1024);
    expect(a.status).toBe(201);
    expect(JSON.parse(text(a))).toEqual({ code: '00', jobid: '7' });
    expect(seen).toMatchObject({ method: 'POST', url: '/sms/rest/v2/otp?x=1', body: '{"msg":"kod şu"}' });
    expect(seen.headers).toMatchObject({ authorization: 'Basic dTpw', 'content-type': 'application/json', host: base.slice(7) });
    expect(Number(seen.headers!['content-length'])).toBe(Buffer.byteLength('{"msg":"kod şu"}'));
  });

  it('reads a chunked answer and reuses the connection for the next request', async () => {
    const ports = new Set<number>();
    handler = (req, _body, res) => {
      ports.add(req.socket.remotePort!);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"code":');
      setTimeout(() => res.end('"00"}'), 5);
    };
    for (let i = 0; i < 3; i++) {
      const a = await post(client, `${base}/x`, {}, '{}', 2000, 1024);
      expect(JSON.parse(text(a))).toEqual({ code: '00' });
    }
    expect(ports.size).toBe(1);
  });

  it('many requests at once each get their own answer', async () => {
    handler = (_req, body, res) => res.writeHead(200).end(body.toUpperCase());
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => post(client, `${base}/x`, {}, `n${i}`, 5000, 1024)));
    expect(answers.map(text)).toEqual(Array.from({ length: 100 }, (_, i) => `N${i}`));
  });

  it('skips an interim 100 answer', async () => {
    handler = (_req, _body, res) => {
      res.writeContinue();
      res.writeHead(503).end('busy');
    };
    const a = await post(client, `${base}/x`, {}, '{}', 2000, 1024);
    expect([a.status, text(a)]).toEqual([503, 'busy']);
  });

  it('refuses an answer larger than the bound, chunked or not', async () => {
    handler = (_req, _body, res) => res.writeHead(200).end('x'.repeat(2048));
    await expect(post(client, `${base}/x`, {}, '{}', 2000, 1024)).rejects.toThrow(/larger than 1024/);
    handler = (_req, _body, res) => { res.writeHead(200); res.write('x'.repeat(800)); res.end('y'.repeat(800)); };
    await expect(post(client, `${base}/x`, {}, '{}', 2000, 1024)).rejects.toThrow(/larger than 1024/);
  });

  it('with cutLongBody, an answer larger than the bound stands as its status, its body cut, its connection not reused', async () => {
    const ports: number[] = [];
    const cut = () => client.request({ url: `${base}/x`, body: '{}', timeoutMs: 2000, maxBodyBytes: 1024, cutLongBody: true });
    handler = (req, _body, res) => { ports.push(req.socket.remotePort!); res.writeHead(200).end('x'.repeat(4096)); };
    const a = await cut();
    expect([a.status, a.body.length]).toEqual([200, 0]); // the length said too much: nothing waited for
    handler = (req, _body, res) => { ports.push(req.socket.remotePort!); res.writeHead(201); res.write('x'.repeat(800)); res.end('y'.repeat(800)); };
    const b = await cut();
    expect([b.status, b.body.length]).toEqual([201, 800]); // the chunks up to the bound
    handler = (req, _body, res) => { ports.push(req.socket.remotePort!); res.writeHead(200).end('ok'); };
    expect(text(await cut())).toBe('ok');
    expect(new Set(ports).size).toBe(3);
  });

  it('gives up at the deadline with a TimeoutError, and the next request works', async () => {
    handler = () => undefined; // never answers
    const err = await post(client, `${base}/x`, {}, '{}', 100, 1024).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('TimeoutError');
    handler = (_req, _body, res) => res.writeHead(200).end('ok');
    expect(text(await post(client, `${base}/x`, {}, '{}', 2000, 1024))).toBe('ok');
  });

  it('a request on a connection the server closed meanwhile goes on a new one', async () => {
    handler = (_req, _body, res) => res.writeHead(200).end('one');
    expect(text(await post(client, `${base}/x`, {}, '{}', 2000, 1024))).toBe('one');
    for (const s of connections) s.destroy();
    await new Promise((r) => setTimeout(r, 50));
    handler = (_req, _body, res) => res.writeHead(200).end('two');
    expect(text(await post(client, `${base}/x`, {}, '{}', 2000, 1024))).toBe('two');
  });

  it('rejects a header value that would split the request, and a refused connection', async () => {
    await expect(post(client, `${base}/x`, { 'x-api-key': 'a\r\nx-evil: 1' }, '{}', 2000, 1024)).rejects.toThrow(/invalid character/);
    await expect(post(client, 'http://127.0.0.1:1/x', {}, '{}', 2000, 1024)).rejects.toThrow(/ECONNREFUSED/);
    await expect(post(client, 'ftp://127.0.0.1/x', {}, '{}', 2000, 1024)).rejects.toThrow(/not an http/);
  });

  describe('answers only a raw server sends', () => {
    let raw: Server;
    let rawBase = '';
    let reply = '';
    beforeAll(async () => {
      raw = createTcpServer((s) => s.once('data', () => s.end(reply)));
      await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
      rawBase = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => raw.close(() => r())));

    it('a body without a length ends with the connection', async () => {
      reply = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"code":"00"}';
      const a = await post(client, `${rawBase}/x`, {}, '{}', 2000, 1024);
      expect([a.status, text(a)]).toEqual([200, '{"code":"00"}']);
    });

    it('a chunked body with trailers, and a cut-off one', async () => {
      reply = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\nabcd\r\n2\r\nef\r\n0\r\nX-Trailer: 1\r\n\r\n';
      expect(text(await post(client, `${rawBase}/x`, {}, '{}', 2000, 1024))).toBe('abcdef');
      reply = 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc';
      await expect(post(client, `${rawBase}/x`, {}, '{}', 2000, 1024)).rejects.toThrow(/closed before the answer/);
    });

    it('something that is not HTTP', async () => {
      reply = 'SSH-2.0-OpenSSH\r\n\r\n';
      await expect(post(client, `${rawBase}/x`, {}, '{}', 2000, 1024)).rejects.toThrow(/not an HTTP/);
    });
  });
  describe('over TLS (the carriers\' production addresses are https)', () => {
    let dir = '';
    let cert = '';
    let https: ReturnType<typeof createHttpsServer>;
    let tlsBase = '';
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'h1-tls-'));
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1',
        '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
      cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
      https = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(`{"port":${req.socket.remotePort}}`));
      });
      await new Promise<void>((r) => https.listen(0, '127.0.0.1', r));
      tlsBase = `https://localhost:${(https.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      await new Promise<void>((r) => { https.close(() => r()); https.closeAllConnections(); });
      rmSync(dir, { recursive: true, force: true });
    });

    it('posts over a checked certificate and keeps the connection', async () => {
      const trusting = new OutboundHttp({ ca: cert });
      try {
        const a = await post(trusting, `${tlsBase}/sms/rest/v2/otp`, {}, '{}', 5000, 1024);
        const b = await post(trusting, `${tlsBase}/sms/rest/v2/otp`, {}, '{}', 5000, 1024);
        expect(a.status).toBe(200);
        expect(JSON.parse(text(b))).toEqual(JSON.parse(text(a)));
      } finally {
        trusting.closeIdle();
      }
    });

    it('refuses a certificate it cannot check, by default', async () => {
      await expect(post(client, `${tlsBase}/x`, {}, '{}', 5000, 1024)).rejects.toThrow(/self[- ]signed|certificate/i);
    });
  });
});
