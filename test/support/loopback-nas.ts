import { randomBytes, randomInt } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { checkFraming, RadiusCrypto } from '../../radius/index.js';
import { DynamicAuthListener } from '../radius/dynamic-auth-listener.js';
import { TestNas } from '../radius/helpers.js';
import { freePort } from '../../scripts/local-services.js';
import { until } from './poll.js';
import { type Answer, call } from './service.js';

/** A NAS client registered for a hotspot, with the UDP socket it sends from and its next packet identifier. */
export interface LoopbackNas {
  id: string;
  ip: string;
  secret: string;
  radius: TestNas;
  nextId(): number;
}

/** A loopback address for a test NAS: away from 127.0.0.0/12, where tests name addresses (127.0.0.1, 127.0.0.2). */
export const randomLoopback = (): string => `127.${randomInt(16, 250)}.${randomInt(0, 256)}.${randomInt(2, 255)}`;

/** A loopback address no test registers a NAS client at (127.1.0.0-127.15.255.255: neither named nor drawn), for a stranger. */
export const strangerLoopback = (): string => `127.${randomInt(1, 16)}.${randomInt(0, 256)}.${randomInt(2, 255)}`;

/**
 * A loopback address for a bench that registers its NAS itself (stadium-storm's --nas-address): in
 * 127.250.0.0/16, where no test draws, since the bench cannot draw again when another file holds it;
 * with room after it for the next addresses (--processes: a NAS per process).
 */
export const benchLoopback = (): string => `127.250.${randomInt(0, 256)}.${randomInt(2, 240)}`;

/**
 * Registers a NAS client for `hotspotId` on a loopback address no other test file holds, and answers the address
 * and the 201. The test files share one Postgres, where an address belongs to one tenant, and every file draws its
 * addresses at random: an address another file holds (409) is given up for another. `body(ip)` is the request body;
 * it may open what must listen at the address first (a Dynamic Authorization listener for `coa_port`).
 */
export async function registerOnFreeLoopback(
  base: string, auth: string, hotspotId: string, body: (ip: string) => Record<string, unknown> | Promise<Record<string, unknown>>,
): Promise<{ ip: string; answer: Answer }> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const ip = randomLoopback();
    const answer = await call(base, 'POST', `/v1/hotspots/${hotspotId}/nas-clients`, { auth, body: await body(ip) });
    if (answer.status === 409) continue;
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return { ip, answer };
  }
  throw new Error('no free loopback address for a test NAS');
}

/**
 * Registers a NAS client for `t`'s hotspot on a free loopback address (registerOnFreeLoopback) and opens its
 * socket there. `body` adds to the client record (coa_port...); `t.hotspotId` may name another of its hotspots.
 */
export async function addLoopbackNas(base: string, t: { apiKey: string; hotspotId: string }, body: Record<string, unknown> = {}): Promise<LoopbackNas> {
  const secret = `s3cret-${randomBytes(12).toString('hex')}`;
  const { ip, answer } = await registerOnFreeLoopback(base, t.apiKey, t.hotspotId, (at) => ({ ip: at, secret, ...body }));
  return opened(answer.body.id as string, ip, secret);
}

/** A loopback NAS that also listens for the service's Disconnect and CoA requests (RFC 5176) at its address. */
export interface CoaNas extends LoopbackNas { da: DynamicAuthListener }

/**
 * addLoopbackNas, with a Dynamic Authorization listener at the address, registered as the client's `coa_port`.
 * The caller closes `radius` and `da`.
 */
export async function addCoaNas(base: string, t: { apiKey: string; hotspotId: string }, body: Record<string, unknown> = {}): Promise<CoaNas> {
  const secret = `s3cret-${randomBytes(12).toString('hex')}`;
  const listening: { da?: DynamicAuthListener } = {};
  const { ip, answer } = await registerOnFreeLoopback(base, t.apiKey, t.hotspotId, async (at) => {
    await listening.da?.close(); // the last draw's: its address was taken
    listening.da = await DynamicAuthListener.open(at, secret);
    return { ip: at, secret, coa_port: listening.da.port, ...body };
  });
  return { ...await opened(answer.body.id as string, ip, secret), da: listening.da! };
}

async function opened(id: string, ip: string, secret: string): Promise<LoopbackNas> {
  let ident = randomInt(0, 256);
  return { id, ip, secret, radius: await TestNas.open(ip), nextId: () => (ident = (ident + 1) & 255) };
}

const rc = new RadiusCrypto();

/** The signed reply to `pkt` from the server (same Identifier, valid Response Authenticator), or null within `ms`. */
export async function signedReplyTo(nas: Pick<LoopbackNas, 'secret' | 'radius'>, pkt: Buffer, ms: number): Promise<Buffer | null> {
  const endsAt = Date.now() + ms;
  for (;;) {
    const left = endsAt - Date.now();
    if (left <= 0) return null;
    const got = await nas.radius.next(left);
    if (!got) return null;
    const len = checkFraming(got.msg);
    if (len > 0 && got.msg[1] === pkt[1] && rc.verifyResponseAuthenticator(got.msg, len, pkt.subarray(4, 20), nas.secret)) return got.msg;
  }
}

/** A redis-server of the test's own (no persistence), for tests that pause or stop it; `stop` ends both ends. */
export interface PrivateRedis { port: number; url: string; redis: Redis; proc: ChildProcess; stop(): Promise<void> }

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined); // refused until the server is up: until() below asks again
  await until(async () => redis.ping().then(() => true, () => false), { what: 'the private redis-server' });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    port, url: `redis://127.0.0.1:${port}`, redis, proc,
    stop: async () => { redis.disconnect(); proc.kill('SIGKILL'); await exited; },
  };
}
