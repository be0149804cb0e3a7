import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ReplicaBarrier } from '../../engine/redis/replica-barrier.js';
import { freePort } from '../../scripts/local-services.js';
import { call, keys, macs, newTenant, newVoucher, startService, until, type Running, type Tenant } from '../support/fixture.js';

/**
 * REDIS_WAIT_REPLICAS closes Redis's durability window: a guest is told they
 * are in only once a replica holds their sign-in's writes (the start record
 * among them), so a primary that dies then loses no authorised guest. A
 * primary and a replica of this file's own, since the file stops the replica.
 */
describe('REDIS_WAIT_REPLICAS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-replica-'));
  const servers: ChildProcess[] = [];
  let primaryUrl = '';
  let replica: ChildProcess;
  let replicaRedis: Redis;
  let svc: Running;
  let tenant: Tenant;
  const nextMac = macs();

  const startRedis = async (name: string, extra: string[]): Promise<[ChildProcess, string]> => {
    const port = await freePort();
    const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--dbfilename', `${name}.rdb`,
      '--appendonly', 'no', '--save', '', ...extra], { stdio: 'ignore' });
    servers.push(child);
    const url = `redis://127.0.0.1:${port}`;
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    await until(async () => (await probe.connect().then(() => probe.ping(), () => '')) === 'PONG', { timeoutMs: 10_000, what: `${name} up` });
    probe.disconnect();
    return [child, url];
  };

  beforeAll(async () => {
    const [, url] = await startRedis('primary', []);
    primaryUrl = url;
    const primaryPort = new URL(url).port;
    let replicaUrl: string;
    [replica, replicaUrl] = await startRedis('replica', ['--replicaof', '127.0.0.1', primaryPort]);
    replicaRedis = new Redis(replicaUrl);
    await until(async () => /master_link_status:up/.test(await replicaRedis.info('replication')), { timeoutMs: 10_000, what: 'replica in sync' });
    svc = await startService({ REDIS_URL: primaryUrl, REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '300', ACTOR_THREADS: '1' });
    tenant = await newTenant(svc.service);
  });
  afterAll(async () => {
    if (replica?.signalCode === null) replica.kill('SIGCONT');
    await svc?.stop();
    replicaRedis?.disconnect();
    for (const s of servers) s.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const verify = (code: string, mac: string) => call(svc.base, 'POST', '/api/v1/hotspot-portal/voucher/verify',
    { body: { hotspot_id: tenant.hotspotId, code, mac } });

  test('an authorised guest\'s start record is on the replica when the answer arrives', async () => {
    const v = await newVoucher(svc.base, tenant);
    const r = await verify(v.code, nextMac());
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    // Read the replica at once: WAIT answered before the guest did, so nothing needs waiting for here.
    // (The session's reference key: written by the same script as the start record, and not
    // removed by the outbox sink, which may already have moved the record to Postgres.)
    expect(await replicaRedis.exists(keys.sessionRef(tenant.tenantId, r.body.session_id))).toBe(1);
  });

  test('with the replica unreachable the guest is not told they are in, and gets the session once it is back', async () => {
    const v = await newVoucher(svc.base, tenant, { max_uses: 1 });
    const mac = nextMac();
    replica.kill('SIGSTOP');
    try {
      const r = await verify(v.code, mac);
      expect(r.status, JSON.stringify(r.body)).toBe(503);
      expect(r.body.error).toBe('service_unavailable');
    } finally {
      replica.kill('SIGCONT');
    }
    // The use is spent on the primary; the same device's retry gets its live session back, not a second use.
    const again = await verify(v.code, mac);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.uses_left).toBe(0);
    const other = await verify(v.code, nextMac());
    expect(other.status).toBe(409);
  });

  test.each([
    ['before the WAIT leaves (it is queued for the next connection)', false],
    ['after the WAIT left (ioredis sends it again on the next connection)', true],
  ])('a connection lost %s is no confirmation', async (_when, waitLeft) => {
    // No ready check, so the WAIT is the new connection's first command. That connection wrote nothing,
    // and Redis may answer its WAIT at once with every connected replica counted, as it answers
    // redis-cli's WAIT on a fresh connection (with ioredis's ready check first it was seen to wait here).
    const client = new Redis(primaryUrl, { enableReadyCheck: false });
    client.on('error', () => undefined);
    const barrier = new ReplicaBarrier(client, 1, 300);
    replica.kill('SIGSTOP');
    try {
      // Stopped, the replica stays connected but acknowledges nothing: a WAIT for a write times out.
      expect(await client.info('replication')).toMatch(/^connected_slaves:1\r?$/m);
      await client.set('barrier-probe', 'written');
      const confirmed = barrier.confirm('barrier-probe');
      if (waitLeft) await new Promise((r) => setImmediate(r));
      client.stream.destroy();
      expect(await confirmed).toBe(false);
    } finally {
      replica.kill('SIGCONT');
      client.disconnect();
    }
  });
});
