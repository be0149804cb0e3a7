import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, freeUdpPort } from '../../scripts/local-services.js';

/** scripts/local-services.ts: ports for servers the tests and `npm start` launch, away from the kernel's ephemeral range. */
describe('freePort', () => {
  const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  const held: Server[] = [];
  afterAll(async () => { await Promise.all(held.map((s) => new Promise((r) => s.close(r)))); });

  it('hands out ports below the ephemeral range, never one twice in a process', async () => {
    const ports = [];
    for (let i = 0; i < 20; i++) ports.push(await freePort());
    for (const p of ports) {
      expect(p).toBeLessThan(ephemeralLow);
      expect(p).toBeGreaterThanOrEqual(1024);
    }
    expect(new Set(ports).size).toBe(ports.length);
    // Each can be listened on.
    for (const p of ports.slice(0, 3)) {
      const s = createServer();
      await new Promise<void>((resolve) => s.listen(p, '127.0.0.1', resolve));
      held.push(s);
    }
  });

  it('skips a port somebody listens on', async () => {
    // The walk goes up one port at a time: take the next few before it gets there.
    const next = await freePort();
    const taken = [next + 1, next + 2, next + 3];
    for (const p of taken) {
      const s = createServer();
      const ok = await new Promise<boolean>((resolve) => { s.once('error', () => resolve(false)); s.listen(p, '127.0.0.1', () => resolve(true)); });
      if (ok) held.push(s);
    }
    const after = await freePort();
    expect(taken).not.toContain(after);
  });

  it('finds UDP ports the same way, probed with a UDP socket', async () => {
    const p = await freeUdpPort();
    expect(p).toBeLessThan(ephemeralLow);
    const s = createSocket('udp4');
    await new Promise<void>((resolve) => s.bind(p, '127.0.0.1', resolve));
    s.close();
  });
});
