import { createServer as createNetServer, type Socket } from 'node:net';
import type { Teardown } from './bench-kit.js';

/**
 * A Netgsm carrier on loopback: `POST /sms/rest/v2/otp` with Basic auth and `{msgheader, msg, no}`,
 * answering `{"code":"00","jobid":...}`. The code in `msg` goes to whoever waits for that number.
 *
 * Raw HTTP/1.1 on a TCP server rather than node:http: the carrier is a stand-in for a remote
 * service, yet it runs in this process on the cores the service is measured on. With node:http's
 * server the CPU outside the service, Redis and Postgres (mostly this process) came to 2.4
 * verifies' worth per pair (bench/results/otp-signin.md, 2026-11-25 00:29), where the target
 * allows two for everything. This one (moved from otp-signin.ts, shared with stadium-storm.ts) reads only what it must: the request line, Authorization,
 * Content-Length and the two fields it needs from the body.
 */
export async function fakeCarrier(undo: Teardown, host: string, expectedAuth: string): Promise<{ url: string; codeFor(no: string): Promise<string>; sent: () => number }> {
  const waiting = new Map<string, (code: string) => void>();
  const arrived = new Map<string, string>();
  let sent = 0;
  const deliver = (no: string, code: string): void => {
    const w = waiting.get(no);
    if (w) { waiting.delete(no); w(code); } else arrived.set(no, code);
  };
  const answer = (body: string, status = '200 OK'): string =>
    `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.setNoDelay(true);
    let buf = '';
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      buf += chunk.toString('latin1');
      for (;;) {
        const headEnd = buf.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const head = buf.slice(0, headEnd);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < headEnd + 4 + length) return;
        const body = buf.slice(headEnd + 4, headEnd + 4 + length);
        buf = buf.slice(headEnd + 4 + length);
        const auth = /\r\nauthorization: *([^\r]*)/i.exec(head)?.[1];
        if (!head.startsWith('POST /sms/rest/v2/otp ') || auth !== expectedAuth) {
          socket.write(answer('{"code":"30"}', '401 Unauthorized'));
          continue;
        }
        const no = (/"no":"(\d+)"/.exec(body)?.[1] ?? '').slice(-10);
        const code = /"msg":"[^"]*?\b(\d{6})\b/.exec(body)?.[1] ?? '';
        sent++;
        deliver(no, code);
        socket.write(answer(`{"code":"00","jobid":"${sent}"}`));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  undo.push(() => new Promise<void>((r) => {
    server.close(() => r());
    for (const s of sockets) s.destroy();
  }));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${host}:${port}`,
    sent: () => sent,
    codeFor: (no) => {
      const have = arrived.get(no);
      if (have !== undefined) { arrived.delete(no); return Promise.resolve(have); }
      return new Promise((resolve) => waiting.set(no, resolve));
    },
  };
}
