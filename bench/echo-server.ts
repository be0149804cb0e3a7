import { pathToFileURL } from 'node:url';
import { loadUws } from '../http/uws.js';

/**
 * The baseline for bench/portal-verify.ts: a bare uWebSockets.js server, same
 * native binary as the service, that reads a POST body, parses it as JSON and
 * answers it re-serialised. What the service does on top of this (routing,
 * validation, Redis, the outbox sink) is what the ratio verify/echo measures.
 *
 * Run as its own process (`node dist/bench/echo-server.js`); prints one JSON
 * line `{"ready":true,"port":N}` on stdout, stops on SIGTERM/SIGINT.
 * Follows the uWS rules of http/router.ts: onAborted first, chunks copied,
 * the write inside cork.
 */
export function startEchoServer(host: string, port: number): Promise<{ port: number; close(): void }> {
  const uws = loadUws();
  const app = uws.App();
  app.post('/*', (res) => {
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    const chunks: Buffer[] = [];
    res.onData((ab, isLast) => {
      chunks.push(Buffer.from(ab.slice(0)));
      if (!isLast || aborted) return;
      let payload: string;
      let status = '200 OK';
      try {
        payload = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        status = '400 Bad Request';
        payload = '{"error":"invalid_json"}';
      }
      res.cork(() => {
        res.writeStatus(status).writeHeader('content-type', 'application/json').end(payload);
      });
    });
  });
  app.any('/*', (res) => {
    res.cork(() => { res.writeStatus('404 Not Found').writeHeader('content-type', 'application/json').end('{"error":"not_found"}'); });
  });
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) return reject(new Error(`echo server cannot listen on ${host}:${port}`));
      resolve({ port: uws.us_socket_local_port(socket as never), close: () => uws.us_listen_socket_close(socket) });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  startEchoServer('127.0.0.1', Number(process.env.ECHO_PORT ?? 0)).then((s) => {
    const stop = (): void => { s.close(); process.exit(0); };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    process.stdout.write(JSON.stringify({ ready: true, port: s.port }) + '\n');
  }, (err: Error) => {
    process.stderr.write(`echo server failed: ${err.message}\n`);
    process.exit(1);
  });
}
