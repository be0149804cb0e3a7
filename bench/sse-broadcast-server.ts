import { pathToFileURL } from 'node:url';
import { loadUws } from '../http/uws.js';
import type { HttpResponse } from '../http/uws.js';

/**
 * The yardstick of bench/sse-fanout.ts: a bare uWebSockets.js server (the
 * service's native binary) that holds event-stream responses open and, on
 * `GET /broadcast?id=<id>`, writes one ~50-byte frame shaped like an
 * invalidation to every one of them, each write in its own cork, as a
 * server with no routing, auth, Redis or coalescing would. The time from
 * that request to the frame reaching every client is what the service's
 * sign-in-to-invalidation time is compared against.
 *
 * Run as its own process (`node dist/bench/sse-broadcast-server.js`); prints
 * `{"ready":true,"port":N}` on stdout, stops on SIGTERM/SIGINT. No
 * back-pressure handling: the bench's clients read everything.
 */
export function startBroadcastServer(host: string, port: number): Promise<{ port: number; close(): void }> {
  const uws = loadUws();
  const app = uws.App();
  const clients = new Set<HttpResponse>();
  app.get('/stream', (res) => {
    res.onAborted(() => { clients.delete(res); });
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('content-type', 'text/event-stream; charset=utf-8').writeHeader('cache-control', 'no-cache');
      res.write('retry: 5000\n\n');
    });
    clients.add(res);
  });
  app.get('/broadcast', (res, req) => {
    const id = req.getQuery('id') ?? '';
    const frame = Buffer.from(`id: ${id}\ndata: ${JSON.stringify({ kind: 'session_started', ts: new Date().toISOString() })}\n\n`);
    const n = clients.size;
    res.cork(() => { res.end(String(n)); });
    // Not inside this handler: uWS has this request's socket corked meanwhile, and a cork of another
    // socket then does not hold its writes together (chunk header and frame would go in two sends,
    // twice the syscalls and twice the client's reads). The service writes from an ioredis callback.
    setImmediate(() => { for (const c of clients) c.cork(() => { c.write(frame); }); });
  });
  app.any('/*', (res) => { res.cork(() => { res.writeStatus('404 Not Found').end(); }); });
  return new Promise((resolve, reject) => {
    app.listen(host, port, (socket) => {
      if (!socket) return reject(new Error(`broadcast server cannot listen on ${host}:${port}`));
      resolve({ port: uws.us_socket_local_port(socket as never), close: () => uws.us_listen_socket_close(socket) });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  startBroadcastServer('127.0.0.1', 0).then((s) => {
    const stop = (): void => { s.close(); process.exit(0); };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    process.stdout.write(JSON.stringify({ ready: true, port: s.port }) + '\n');
  }, (err: Error) => {
    process.stderr.write(`broadcast server failed: ${err.message}\n`);
    process.exit(1);
  });
}
