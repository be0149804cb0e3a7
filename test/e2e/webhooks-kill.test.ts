import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { projectPath } from '../../engine/index.js';
import { keys } from '../../engine/redis/keys.js';
import { until } from '../support/poll.js';
import { spawnService, testEnv, type ServiceProcess } from '../support/service.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * Durable deliveries (issue 19 item 2): the service is killed (SIGKILL, no
 * shutdown code) while every delivery of 40 real sign-ins is owed, four of
 * them in flight to a receiver that has not answered; after a restart each
 * event is delivered, and answered 2xx exactly once (the ones in flight
 * again under the same X-Webhook-Id, once their claim lapsed).
 */
const EVENTS = 40;
const IN_FLIGHT = 4;
/**
 * A Redis database of its own: every engine process dispatches the deliveries of every tenant it finds in its Redis,
 * so a service of another test file running meanwhile would deliver this tenant's owed deliveries while this one is
 * dead (and this killed process would hold other files' claims for their lease). Here no other process may.
 */
const REDIS_URL = `${inject('redisUrl')}/9`;

describe('webhooks across kill -9', () => {
  const procs: ServiceProcess[] = [];
  let rx: WebhookReceiver | undefined;
  const redis = new Redis(REDIS_URL);
  afterAll(async () => {
    for (const p of procs) await p.stop();
    await rx?.close();
    redis.disconnect();
  });

  it('every owed delivery is delivered exactly once after the restart', async () => {
    const env = {
      ...process.env,
      ...testEnv({ REDIS_URL, SECRETS_KEY: randomBytes(32).toString('base64'), WEBHOOK_TENANT_CONCURRENCY: String(IN_FLIGHT), WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_POLL_MS: '20', RADIUS_ENABLED: 'false' }),
    };
    let svc = await spawnService(env);
    procs.push(svc);
    const cli = async (args: string[]): Promise<any> =>
      JSON.parse((await promisify(execFile)(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), ...args], { env, timeout: 30_000 })).stdout);
    const { tenant_id: tenantId, api_key: apiKey } = await cli(['tenant', 'create', '--name', `Webhook Kill ${randomBytes(3).toString('hex')}`, '--json']);
    const api = async (method: string, path: string, body?: unknown): Promise<any> => {
      const res = await fetch(svc.base + path, { method, headers: { 'content-type': 'application/json', 'x-api-key': apiKey }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: await res.json() };
    };
    const hotspot = (await api('POST', '/v1/hotspots', { name: 'Lobby', timezone: 'UTC' })).body;
    const code = `WH-${randomBytes(4).toString('hex').toUpperCase()}`;
    expect((await api('POST', '/v1/vouchers', { code, max_uses: null })).status).toBe(201);

    rx = await WebhookReceiver.start();
    // The receiver hangs: the first attempts stay in flight, the rest wait their turn (four per tenant at a time).
    rx.reply = () => ({ status: 200, delayMs: 60_000 });
    expect((await api('POST', '/v1/webhooks', { url: rx.url, events: ['session.start'], secret: 'kill-test-secret-0123456789' })).status).toBe(201);

    const sessions: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const mac = `02:77:00:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`;
      const r = await fetch(`${svc.base}/api/v1/hotspot-portal/voucher/verify`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ hotspot_id: hotspot.id, code, mac }),
      });
      expect(r.status).toBe(200);
      sessions.push(((await r.json()) as { session_id: string }).session_id);
    }
    await rx.next(IN_FLIGHT);
    // The first four attempts, in flight together. (On a slow machine they may time out after 5 s and be
    // attempted again, with the same X-Webhook-Id, before the kill: later requests are not these.)
    const inFlight = rx.requests.slice(0, IN_FLIGHT).map((r) => String(r.headers['x-webhook-id']));
    expect(new Set(inFlight).size).toBe(IN_FLIGHT);
    // Every event routed into an owed delivery (the router runs every 20 ms).
    await until(async () => (await redis.zcard(keys.webhookQueue(tenantId))) === EVENTS, { what: 'all deliveries owed' });
    await svc.kill9();
    expect(rx.deliveredPerId().size).toBe(0);

    rx.reply = () => ({ status: 200 });
    svc = await spawnService(env);
    procs.push(svc);
    await rx.when(() => rx!.deliveredPerId().size === EVENTS, `${EVENTS} deliveries answered 2xx`, 60_000);
    // Nothing is owed any more, so nothing further can go out.
    await until(async () => (await redis.zcard(keys.webhookQueue(tenantId))) === 0, { what: 'the queue empty', timeoutMs: 30_000 });
    const per = rx.deliveredPerId();
    expect([...per.values()].every((n) => n === 1), JSON.stringify([...per])).toBe(true);
    for (const id of inFlight) expect(per.get(id)).toBe(1);
    const delivered = rx.requests.filter((r) => r.answered === 200).map((r) => JSON.parse(r.body).data.session_id as string);
    expect(delivered.sort()).toEqual([...sessions].sort());
  });
});
