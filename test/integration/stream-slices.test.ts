import { connect, type Socket } from 'node:net';
import { describe, expect } from 'vitest';
import { DEFAULT_MODULES } from '../../engine/index.js';
import { newTenant, serviceTest, until } from '../support/fixture.js';

// No coalescing: every event is its own broadcast, so events that come while one is being written
// queue behind it.
// One key opens every client, all from 127.0.0.1: the stream and address caps are raised above them (issue 18, items 8 and 10).
const test = serviceTest({ STREAM_COALESCE_MS: '0', STREAM_MAX_PER_PRINCIPAL: '2000', HTTP_MAX_CONNECTIONS_PER_ADDRESS: '5000' });

/** More than two slices' worth (http/sse.ts writes 500 clients per turn of the event loop). */
const CLIENTS = 1100;

/** A raw stream client: the ids of the events it read, in order. */
interface RawClient { socket: Socket; ids(): string[]; text: string }

function openRaw(base: string, path: string, apiKey: string): Promise<RawClient> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const client: RawClient = { socket: connect({ host: url.hostname, port: Number(url.port) }), text: '', ids: () => [...client.text.matchAll(/^id: (.+)$/gm)].map((m) => m[1]!) };
    client.socket.on('error', reject);
    client.socket.on('connect', () => client.socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nX-API-Key: ${apiKey}\r\nAccept: text/event-stream\r\n\r\n`));
    client.socket.on('data', (chunk: Buffer) => {
      client.text += chunk.toString('latin1');
      // The status, the headers and the retry hint come in one write, once events will reach the client.
      if (client.text.includes('retry: ')) resolve(client);
      else if (client.text.startsWith('HTTP/1.1 ') && !client.text.startsWith('HTTP/1.1 200')) reject(new Error(client.text.slice(0, 120)));
    });
  });
}

describe('a broadcast written in slices', () => {
  test(`every one of ${CLIENTS} clients gets every event, in order, when events come while a broadcast is under way`, async ({ svc }) => {
    const t = await newTenant(svc.service, 'Slice Arena', [...DEFAULT_MODULES, 'dashboard']);
    const clients: RawClient[] = [];
    try {
      for (let i = 0; i < CLIENTS; i += 100) {
        clients.push(...await Promise.all(Array.from({ length: 100 }, () => openRaw(svc.base, '/api/v1/tenants/me/stream/live-sessions', t.apiKey))));
      }
      // Appended back to back: the reader brings them in one read, the first starts a broadcast and the
      // rest wait for it (then go out together), so clients in the later slices see them queued.
      const ids: string[] = [];
      for (let k = 0; k < 5; k++) ids.push(await svc.service.engine.events.append(t.tenantId, 'session.start', t.hotspotId, { k }));
      await until(() => clients.every((c) => c.ids().length >= ids.length), { timeoutMs: 15_000, what: 'every client read every event' });
      for (const c of clients) expect(c.ids()).toEqual(ids);
    } finally {
      for (const c of clients) c.socket.destroy();
    }
  }, 60_000);
});
