import { createServer, type Socket } from 'node:net';
import { pathToFileURL } from 'node:url';

/**
 * The receiver of bench/outbound-client.ts: a raw HTTP/1.1 responder that
 * reads each request's head and Content-Length body and answers a fixed
 * `200 OK` with a two-byte body, keeping the connection. No node:http: the
 * receiver must cost as little as possible, so the client's own cost is what
 * a run's figures move with.
 *
 * Run as its own process (`node dist/bench/outbound-receiver.js`); prints one
 * JSON line `{"ready":true,"port":N}`, stops on SIGTERM/SIGINT.
 */
const ANSWER = Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok');
const HEAD_END = Buffer.from('\r\n\r\n');
const LENGTH = /\r\ncontent-length:\s*(\d+)/i;

export function serve(socket: Socket): void {
  socket.setNoDelay(true);
  let buf: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    let answers = 0;
    for (;;) {
      const end = buf.indexOf(HEAD_END);
      if (end < 0) break;
      const m = LENGTH.exec(buf.toString('latin1', 0, end));
      const total = end + 4 + (m ? Number(m[1]) : 0);
      if (buf.length < total) break;
      buf = buf.subarray(total);
      answers++;
    }
    if (answers === 1) socket.write(ANSWER);
    else if (answers > 1) socket.write(Buffer.concat(Array.from({ length: answers }, () => ANSWER)));
  });
  socket.on('error', () => socket.destroy());
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = createServer(serve);
  server.listen(0, '127.0.0.1', () => {
    const a = server.address();
    process.stdout.write(JSON.stringify({ ready: true, port: typeof a === 'object' && a ? a.port : 0 }) + '\n');
  });
  const stop = (): void => { server.close(); process.exit(0); };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
