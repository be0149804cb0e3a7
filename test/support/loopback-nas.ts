import { randomBytes, randomInt } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { expect } from 'vitest';
import { checkFraming, RadiusCrypto } from '../../radius/index.js';
import { TestNas } from '../radius/helpers.js';
import { freePort } from '../../scripts/local-services.js';
import { until } from './poll.js';
import { call } from './service.js';

/** A NAS client registered for a hotspot, with the UDP socket it sends from and its next packet identifier. */
export interface LoopbackNas {
  ip: string;
  secret: string;
  radius: TestNas;
  nextId(): number;
}

/**
 * Registers a NAS client for `t`'s hotspot on a loopback address of its own (127.x.y.z) and opens its
 * socket there. The test files share one Postgres, where a NAS address belongs to one tenant: an
 * address another file holds (409) is given up for another. `body` adds to the client record (coa_port...).
 */
export async function addLoopbackNas(base: string, t: { apiKey: string; hotspotId: string }, body: Record<string, unknown> = {}): Promise<LoopbackNas> {
  for (let attempt = 0; attempt < 6; attempt++) {
    const ip = `127.${randomInt(16, 250)}.${randomInt(0, 256)}.${randomInt(2, 255)}`;
    const secret = `s3cret-${randomBytes(12).toString('hex')}`;
    const r = await call(base, 'POST', `/v1/hotspots/${t.hotspotId}/nas-clients`, { auth: t.apiKey, body: { ip, secret, ...body } });
    if (r.status === 409) continue;
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    let ident = randomInt(0, 256);
    return { ip, secret, radius: await TestNas.open(ip), nextId: () => (ident = (ident + 1) & 255) };
  }
  throw new Error('no free loopback address for a test NAS');
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
