import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { udpSocket } from '../../radius/udp-socket.js';

/**
 * The RADIUS sockets send to an IP literal at once, not after dns.lookup's
 * next tick: a datagram sent and the socket closed in the same turn has
 * already left (with Node's default lookup it never does); a host name
 * still goes through the resolver.
 */
describe('udpSocket', () => {
  const open: Socket[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  const bound = (s: Socket): Promise<Socket> => new Promise((resolve) => { open.push(s); s.bind(0, '127.0.0.1', () => resolve(s)); });
  const receiver = async (): Promise<{ port: number; next: () => Promise<string> }> => {
    const r = await bound(createSocket('udp4'));
    const got: string[] = [];
    let wake: (() => void) | null = null;
    r.on('message', (m) => { got.push(m.toString()); wake?.(); });
    return {
      port: r.address().port,
      next: () => new Promise((resolve) => {
        const take = (): void => { if (got.length) resolve(got.shift()!); else wake = take; };
        take();
      }),
    };
  };

  it('sends to an IP literal in the same turn: closing right after loses nothing', async () => {
    const rx = await receiver();
    const s = udpSocket('udp4');
    await new Promise<void>((resolve) => s.bind(0, '127.0.0.1', () => resolve()));
    s.send(Buffer.from('literal'), rx.port, '127.0.0.1');
    s.close();
    expect(await rx.next()).toBe('literal');
    // The default lookup, for contrast: the send waits a tick, finds the socket closed, and nothing leaves.
    const d = createSocket('udp4');
    await new Promise<void>((resolve) => d.bind(0, '127.0.0.1', () => resolve()));
    d.on('error', () => undefined);
    d.send(Buffer.from('default'), rx.port, '127.0.0.1', () => undefined);
    d.close();
    const s2 = await bound(udpSocket('udp4'));
    s2.send(Buffer.from('after'), rx.port, '127.0.0.1');
    expect(await rx.next()).toBe('after');
  });

  it('still resolves a host name', async () => {
    const rx = await receiver();
    const s = await bound(udpSocket('udp4'));
    s.send(Buffer.from('by name'), rx.port, 'localhost');
    expect(await rx.next()).toBe('by name');
  });
});
