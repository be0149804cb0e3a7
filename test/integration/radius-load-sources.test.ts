import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { projectPath } from '../../engine/index.js';

/**
 * bench/radius-load.ts --sources N (issue 22 item 1): the load comes from N source
 * ports, as hundreds of APs behind one NAS address send it, so SO_REUSEPORT can
 * spread it over RADIUS threads. A fake server records where each request came
 * from and answers it (Access-Accept or Accounting-Response, Response
 * Authenticator per RFC 2865 §3), so the generator's own matching per socket is
 * checked too.
 */

const SECRET = 'sources-test-secret';
const NAS_PORT_ID = 87, CALLING_STATION_ID = 31;

interface Seen { port: number; code: number; nasPortId: string | undefined; mac: string | undefined }

function attrs(msg: Buffer): Map<number, string> {
  const out = new Map<number, string>();
  for (let at = 20; at + 2 <= msg.length;) {
    const type = msg[at]!, len = msg[at + 1]!;
    if (len < 2) break;
    out.set(type, msg.subarray(at + 2, at + len).toString('latin1'));
    at += len;
  }
  return out;
}

/** A server that answers every request and records its source port, NAS-Port-Id and MAC. */
async function fakeServer(): Promise<{ socket: Socket; port: number; seen: Seen[] }> {
  const socket = createSocket('udp4');
  const seen: Seen[] = [];
  socket.on('message', (msg, rinfo) => {
    const a = attrs(msg);
    seen.push({ port: rinfo.port, code: msg[0]!, nasPortId: a.get(NAS_PORT_ID), mac: a.get(CALLING_STATION_ID) });
    const reply = Buffer.alloc(20);
    reply[0] = msg[0] === 1 ? 2 : 5; // Access-Accept, Accounting-Response
    reply[1] = msg[1]!;
    reply.writeUInt16BE(20, 2);
    msg.copy(reply, 4, 4, 20);
    const auth = createHash('md5').update(reply).update(SECRET).digest();
    auth.copy(reply, 4);
    socket.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { socket, port: socket.address().port, seen };
}

function radiusLoad(args: string[]): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [projectPath('dist', 'bench', 'radius-load.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  child.stderr.on('data', (d: Buffer) => { out += d.toString(); });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out })));
}

describe('radius-load --sources', () => {
  let server: Awaited<ReturnType<typeof fakeServer>> | undefined;
  afterEach(() => { server?.socket.close(); server = undefined; });

  it('spreads Access-Requests and Interim-Updates over N source ports, each its own NAS port with its own MACs', async () => {
    server = await fakeServer();
    const r = await radiusLoad(['--target', '127.0.0.1', '--port', String(server.port), '--acct-port', String(server.port), '--secret', SECRET,
      '--sources', '8', '--concurrency', '64', '--requests', '640', '--duration', '60', '--macs', '40', '--acct-ratio', '0.5']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/ sources=8 /);
    expect(r.out).toMatch(/ answered=640 /);
    expect(r.out).toMatch(/ lost=0 bad=0 /);

    const ports = new Set(server.seen.map((s) => s.port));
    expect(ports.size).toBe(8);
    // One source port is one AP: one NAS-Port-Id, and a MAC is only ever seen behind one of them.
    const portOfNasPort = new Map<string, number>(), sourceOfMac = new Map<string, number>();
    for (const s of server.seen) {
      expect(s.nasPortId).toMatch(/^bench[0-7]$/);
      expect(portOfNasPort.get(s.nasPortId!) ?? s.port).toBe(s.port);
      portOfNasPort.set(s.nasPortId!, s.port);
      expect(sourceOfMac.get(s.mac!) ?? s.port).toBe(s.port);
      sourceOfMac.set(s.mac!, s.port);
    }
    expect(portOfNasPort.size).toBe(8);
    expect(sourceOfMac.size).toBe(40);
    // Both kinds went out.
    expect(new Set(server.seen.map((s) => s.code))).toEqual(new Set([1, 4]));
  });

  it('without --sources sends from one port per 256 outstanding, as before', async () => {
    server = await fakeServer();
    const r = await radiusLoad(['--target', '127.0.0.1', '--port', String(server.port), '--secret', SECRET,
      '--concurrency', '64', '--requests', '200', '--duration', '60', '--macs', '40']);
    expect(r.code, r.out).toBe(0);
    expect(r.out).toMatch(/ answered=200 /);
    expect(new Set(server.seen.map((s) => s.port)).size).toBe(1);
    expect(new Set(server.seen.map((s) => s.nasPortId))).toEqual(new Set(['bench0']));
  });
});
