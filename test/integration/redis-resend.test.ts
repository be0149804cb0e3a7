import { readdirSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { describe, expect, inject } from 'vitest';
import { DecisionRecorder } from '../../engine/decisions/decision-recorder.js';
import { createLogger } from '../../engine/logger.js';
import { Metrics } from '../../engine/metrics.js';
import { createRedis, readScript } from '../../engine/redis/scripts.js';
import { projectPath } from '../../engine/util/project-root.js';
import type { RedisClient } from '../../engine/redis/redis-client.js';
import { SessionStore } from '../../engine/sessions/session-store.js';
import { OtpStore } from '../../engine/signin/otp/otp-store.js';
import { freshSessionId, outbox, putVoucher, useVoucher } from '../fixtures/lua-voucher.js';
import { keys, luaTest as test, mac } from '../support/lua.js';

/**
 * A script call whose answer a dropped connection lost, as ioredis handles it in production: the
 * engine's own client (createRedis, default autoResendUnfulfilledCommands) talks to the test Redis
 * through a loopback proxy that, once armed, lets the call through, waits until Redis has answered
 * it (so the script ran), drops that answer and cuts the connection. ioredis reconnects and sends
 * the call again. Each script must then answer as its first run did and write nothing twice.
 */
class CuttingProxy {
  private server: Server | null = null;
  private marker = '';
  cuts = 0;

  constructor(private readonly upstreamPort: number, private readonly upstreamHost: string) {}

  async start(): Promise<number> {
    this.server = createServer((client) => this.pair(client));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as { port: number }).port;
  }

  /** The next command whose bytes hold `marker` has its answer dropped and its connection cut. */
  arm(marker: string): void {
    this.marker = marker;
  }

  private pair(client: Socket): void {
    const upstream = connect(this.upstreamPort, this.upstreamHost);
    let dropping = false;
    client.on('data', (chunk) => {
      if (this.marker && chunk.includes(this.marker)) {
        this.marker = '';
        dropping = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!dropping) return void client.write(chunk);
      // Redis answered: the script ran. Its answer never reaches the client.
      this.cuts++;
      client.destroy();
      upstream.destroy();
    });
    const close = () => { client.destroy(); upstream.destroy(); };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

describe('a script call resent after its answer was lost is applied once', () => {
  /**
   * Every script in Redis's cache first: ioredis sends EVALSHA, and on a fresh server a NOSCRIPT answer (no script
   * run) would be the answer the proxy drops, which tests nothing.
   */
  const withProxy = async (redis: Redis, run: (client: RedisClient, proxy: CuttingProxy) => Promise<void>) => {
    for (const file of readdirSync(projectPath('engine', 'redis', 'lua')).filter((f) => f.endsWith('.lua'))) await redis.script('LOAD', readScript(file));
    const url = new URL(inject('redisUrl'));
    const proxy = new CuttingProxy(Number(url.port || 6379), url.hostname);
    const port = await proxy.start();
    const proxied = new URL(url);
    proxied.host = `127.0.0.1:${port}`;
    const client = createRedis(proxied.toString(), createLogger('silent'));
    try {
      await run(client, proxy);
    } finally {
      client.disconnect();
      await proxy.stop();
    }
  };
  const started = async (redis: Parameters<typeof useVoucher>[0], t: string, n: number) => {
    await putVoucher(redis, t, 'RSND', { id: 'vch_rsnd', max: 10, minutes: 60 });
    const used = await useVoucher(redis, t, 'RSND', { now: Date.now(), mac: mac(n) });
    return { sid: String(used[1]), until: Number(used[2]) };
  };

  test("an operator's extend adds its minutes once and queues one record", async ({ redis, tenant: t }) => {
    const { sid, until } = await started(redis, t, 1);
    await withProxy(redis, async (client, proxy) => {
      proxy.arm(sid);
      const store = new SessionStore(client);
      expect(await store.extend(t, 'hs_lua', mac(1), sid, Date.now(), 30, 'op_resend')).toBe(until + 30 * 60_000);
      expect(proxy.cuts).toBe(1);
    });
    expect(await redis.zscore(keys.live(t, 'hs_lua'), sid)).toBe(String(until + 30 * 60_000));
    expect((await outbox(redis, t)).filter((r) => r.type === 'session_extend')).toHaveLength(1);
  });

  test('an end is told it ended the session (so the NAS is told), with one end record', async ({ redis, tenant: t }) => {
    const { sid } = await started(redis, t, 2);
    await withProxy(redis, async (client, proxy) => {
      proxy.arm(sid);
      expect(await new SessionStore(client).end(t, 'hs_lua', mac(2), sid, Date.now(), 'admin_disconnect', 'op_resend')).toBe(true);
      expect(proxy.cuts).toBe(1);
    });
    expect((await outbox(redis, t)).filter((r) => r.type === 'session_end')).toHaveLength(1);
  });

  test('a phone code is answered with the session it started, not as expired', async ({ redis, tenant: t }) => {
    const hash = 'c'.repeat(64);
    await redis.hset(keys.otpCode(t, 'hs_lua', '+905320000000'), 'h', hash, 'tries', 0, 'exp', Date.now() + 300_000, 'rid', 'r1', 'ch', 'sms');
    const sessionId = freshSessionId();
    await withProxy(redis, async (client, proxy) => {
      proxy.arm(sessionId);
      const r = await new OtpStore(client).use({
        tenantId: t, hotspotId: 'hs_lua', identity: '+905320000000', hash, mac: mac(3), ip: '10.3.0.1', ssid: 'Guest', sessionId, now: Date.now(),
        terms: [{ channel: 'sms', method: 'sms_otp', minutes: 45, idleSec: 0, downKbps: 0, upKbps: 0, quotaMb: 0, sessionQuotaMb: 0, profile: '' }],
      });
      expect(r).toMatchObject({ kind: 'started', sessionId });
      expect(proxy.cuts).toBe(1);
    });
    expect((await outbox(redis, t)).filter((r) => r.type === 'session_start' && r.sid === sessionId)).toHaveLength(1);
  });

  test("a flush of sign-in decisions counts and emits each once (the auth.* events webhooks deliver)", async ({ redis, tenant: t }) => {
    await withProxy(redis, async (client, proxy) => {
      const metrics = new Metrics();
      const rec = new DecisionRecorder(client, createLogger('silent'), metrics, { record: () => undefined });
      const at = Date.now();
      for (let i = 0; i < 3; i++) rec.record({ tenantId: t, hotspotId: 'hs_lua', method: 'voucher', outcome: 'reject', reason: 'voucher_not_found', at, mac: mac(10 + i) });
      proxy.arm(t);
      await rec.close();
      expect(proxy.cuts).toBe(1);
      expect(metrics.value('dashboard_decision_flush_errors_total')).toBe(0);
    });
    expect(await redis.xlen(keys.events(t))).toBe(3);
    expect(await redis.xlen(keys.decisions(t))).toBe(3);
  });
});
