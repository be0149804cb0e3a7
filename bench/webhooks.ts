import { spawn } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLogger, DEFAULT_CODE_FORMAT, Engine, loadConfig, projectPath } from '../engine/index.js';
import { OutboundHttp } from '../engine/net/outbound-http.js';
import { keys } from '../engine/redis/keys.js';
import { benchMac as mac, drained, localStack, say, spawnReady, stopChild, Teardown, watchReady, cpuTicks, withCpu, type CpuUse, type ReadyChild, serviceNodeOptions } from './bench-kit.js';
import { RawHttpClient } from './raw-http-client.js';
import { floorOutbox } from './verify-floor.js';
import { FLOOR_HOOK_GROUP, floorEvents } from './webhook-floor.js';
import type { ReceiverReport } from './webhooks-receiver.js';

/**
 * Scenario: signed webhook deliveries from the one event stream, black-box
 * against the service's contract (`POST /v1/webhooks {url, events, secret}`
 * → 201 {id}; each delivery a POST of `{id: "evt_...", type, created_at,
 * tenant_id, data}` with `X-Webhook-Id` and `X-Signature-256`), to a fast
 * receiver on loopback in a process of its own (webhooks-receiver.ts), which
 * counts, checks signatures on a sample, and notes each delivery's lag.
 * Events are real sign-ins: portal voucher verifies, each with its own MAC,
 * so each starts a session (`session.start`, the type subscribed to).
 *
 * Phases, in this order (after 2,000 sign-ins of warm-up):
 * 1. yardstick: the same receiver fed by the service's own outbound client
 *    from this process (signed bodies, 100 at a time): what the receiver and
 *    loopback take, the ceiling for the service's delivery rate;
 * 2. verify alone: a burst of BENCH_BURST sign-ins with no subscription;
 * 3. the burst with one subscription: lag p99 (receipt − created_at),
 *    deliveries/s (count over first-to-last receipt), and the verify rate
 *    during it;
 * 4. verify alone again (the ratio's base is the mean of 2 and 4);
 *    then the machine's CPU split: what a sign-in (phases 2 and 4) and a
 *    delivery (the burst, less its sign-ins) cost the whole machine, against
 *    a yardstick delivery (phase 1). With the machine full, the ratio is
 *    about v / (v + d); with d at the yardstick's, the best any dispatcher
 *    could reach while the receiver shares the machine; and Redis's own
 *    time per sign-in by command (commandstats), alone and in the burst;
 * 5. the floor (verify-floor.ts with webhook-floor.ts: the same durable work
 *    for a sign-in and its delivery, least code) through phases 2-4 on a
 *    tenant of its own: its ratio is what that work allows on this machine,
 *    the yardstick of the service's (BENCH_FLOOR=0 leaves it out);
 * 6. 100 subscriptions, BENCH_EVENTS_100 sign-ins: deliveries/s.
 *
 * Targets (issue 19): ≥ 5,000 deliveries/s, lag p99 ≤ 1 s, verify during the
 * burst ≥ 0.8 of verify alone. Exit 0 all met, 2 a target missed, 1 errors
 * (non-2xx verifies, lost, repeated or badly signed deliveries), 3 the
 * webhooks API is not in this build (only the yardstick and verify ran).
 * Stops by itself: hard limit BENCH_DEADLINE s (default 420).
 *
 * Knobs: BENCH_BURST (5000), BENCH_EVENTS_100 (1000), BENCH_YARDSTICK (20000, the
 * yardstick's deliveries; fewer for a short check run), BENCH_CONNECTIONS (100,
 * the verify load's), BENCH_DRAIN_S (how long to wait for deliveries owed,
 * 90), BENCH_WEBHOOK_SECRET (the subscriptions' secret, default random),
 * BENCH_CPU_PROF (a folder: the service writes its CPU profiles there;
 * read them with cpu-profile-summary.js).
 */

const BURST = Number(process.env.BENCH_BURST ?? 5000);
const EVENTS_100 = Number(process.env.BENCH_EVENTS_100 ?? 1000);
const YARDSTICK = Number(process.env.BENCH_YARDSTICK ?? 20_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 100);
const DRAIN_MS = Number(process.env.BENCH_DRAIN_S ?? 90) * 1000;
const DEADLINE_MS = Number(process.env.BENCH_DEADLINE ?? 420) * 1000;
const SECRET = process.env.BENCH_WEBHOOK_SECRET ?? randomBytes(24).toString('base64url');
const FLOOR = process.env.BENCH_FLOOR !== '0';
const VOUCHERS = 200;
const HOST = '127.0.0.1';
const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const EVENT = 'session.start';
const TARGETS = { deliveriesPerS: 5000, lagP99Ms: 1000, verifyRatio: 0.8 };

const undo = new Teardown();

interface Side { tenantId: string; apiKey: string; hotspotId: string; codes: string[] }

/** A tenant with an API key, a hotspot and VOUCHERS unlimited vouchers, through the engine. */
async function seed(env: NodeJS.ProcessEnv, name: string): Promise<Side> {
  const engine = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false });
  try {
    await engine.start();
    const tenant = await engine.tenants.create(name);
    const { apiKey } = await engine.tenants.createApiKey(tenant.id, 'bench');
    const hs = await engine.hotspots.create(tenant.id, { name: 'Lobby', timezone: 'Europe/Istanbul' });
    const rows = await engine.vouchers.createBatch(tenant.id, {
      count: VOUCHERS, format: DEFAULT_CODE_FORMAT, max_uses: null, expires_at: null, bandwidth_profile: null,
      daily_quota_mb: null, session_quota_mb: null, duration_minutes: null, bandwidth_down_mbps: null, bandwidth_up_mbps: null, ssids: [], notes: null,
    }, 'bench');
    return { tenantId: tenant.id, apiKey, hotspotId: hs.id, codes: rows.map((r) => r.code) };
  } finally {
    await engine.close();
  }
}

/**
 * `amount` sign-ins at CONNECTIONS connections (keep-alive, one request at a
 * time on each), each a new MAC (prefix, run): their rate, latency p99 and
 * failures. The rate is timed by this process's clock from the first request
 * written to the last answer read. autocannon (used before) ends an `amount`
 * run on its one-second tick, so 5,000 sign-ins read as 2.0 or 3.0 s and
 * the verify ratio only to a third; timed here it reads to a few percent.
 */
async function signIns(base: string, hotspotId: string, codes: string[], run: number, amount: number) {
  const url = new URL(base);
  const connections = Math.min(CONNECTIONS, amount);
  const client = new RawHttpClient(url.hostname, Number(url.port), connections, 10_000);
  const latencies = new Float64Array(amount);
  let next = 0;
  let bad = 0;
  const t0 = performance.now();
  const from = Date.now() / 1000;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < amount; i = next++) {
      const started = performance.now();
      try {
        const r = await client.post(VERIFY, { hotspot_id: hotspotId, code: codes[i % codes.length], mac: mac(0x0e, run, i) });
        if (r.status < 200 || r.status >= 300) bad++;
      } catch {
        bad++;
      }
      latencies[i] = performance.now() - started;
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    client.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort();
  const p99Ms = latencies[Math.min(amount - 1, Math.floor(0.99 * amount))] ?? NaN;
  // `from` and `to` (epoch seconds): the phase's window, for per-thread CPU (thread-cpu.ts window).
  return { requests: amount, seconds, rps: amount / seconds, p99Ms: Math.round(p99Ms), bad, from, to: Date.now() / 1000 };
}

const cpuLine = (c: CpuUse): string => `% of a core: service ${c.server}, Redis ${c.redis}, Postgres ${c.postgres}, rest ${c.rest}; machine idle ${c.idle}%`;

class ReceiverControl {
  constructor(private readonly rc: ReadyChild) {}
  get port(): number { return Number(this.rc.ready.port); }
  reset(): void { this.rc.child.stdin!.write('reset\n'); }
  async report(): Promise<ReceiverReport> {
    const before = this.rc.messages.length;
    this.rc.child.stdin!.write('report\n');
    while (this.rc.messages.length === before) await new Promise((r) => setTimeout(r, 20));
    return this.rc.messages[this.rc.messages.length - 1]!.report as ReceiverReport;
  }
  /** Waits until `want` deliveries arrived or the drain limit passed; the last report. */
  async waitFor(want: number): Promise<ReceiverReport> {
    const until = Date.now() + DRAIN_MS;
    let r = await this.report();
    while (r.deliveries < want && Date.now() < until) {
      await new Promise((res) => setTimeout(res, 200));
      r = await this.report();
    }
    return r;
  }
}

/** The API with the tenant's key: JSON in, status and JSON out. */
async function api(base: string, apiKey: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    method, headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown = null;
  try { json = JSON.parse(text); } catch { json = text; }
  return { status: res.status, json };
}

async function subscribe(base: string, apiKey: string, url: string): Promise<string> {
  const r = await api(base, apiKey, 'POST', '/v1/webhooks', { url, events: [EVENT], secret: SECRET });
  if (r.status !== 201 || typeof r.json?.id !== 'string') throw Object.assign(new Error(`POST /v1/webhooks answered ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`), { status: r.status });
  return r.json.id as string;
}

/** The receiver fed by the outbound client alone: signed, contract-shaped bodies, 100 in flight. */
async function yardstick(recv: ReceiverControl, tenantId: string, count: number): Promise<ReceiverReport> {
  recv.reset();
  const client = new OutboundHttp();
  const url = `http://${HOST}:${recv.port}/yardstick`;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const body = JSON.stringify({ id: `evt_y${i}`, type: EVENT, created_at: new Date().toISOString(), tenant_id: tenantId, data: { n: i } });
      const sig = 'sha256=' + createHmac('sha256', SECRET).update(body).digest('hex');
      await client.request({ url, headers: { 'content-type': 'application/json', 'x-webhook-id': `dlv_y${i}`, 'x-signature-256': sig }, body, timeoutMs: 5000 });
    }
  };
  try {
    await Promise.all(Array.from({ length: 100 }, worker));
  } finally {
    client.close();
  }
  return recv.report();
}

type Phase = { from: number; to: number };
/** Each phase's epoch seconds, [from, to]; the burst's until its last delivery arrived. */
const windows = (alone1: Phase, burst: Phase, b: ReceiverReport, alone2: Phase): Record<string, [number, number]> => ({
  alone1: [alone1.from, alone1.to], burst: [burst.from, Math.max(burst.to, b.lastAt / 1000)], alone2: [alone2.from, alone2.to],
});

const rate = (r: ReceiverReport): number => r.deliveries / Math.max(0.001, (r.lastAt - r.firstAt) / 1000);

/**
 * Phases 2-4 against the floor, on its own tenant, with the service idle beside it: verify alone, during a burst whose
 * deliveries the floor makes to the same receiver (subscribed by creating its consumer group at `$`), alone again.
 */
async function floorRun(env: NodeJS.ProcessEnv, pids: { redis: number; postgres: number }, recv: ReceiverControl, side: Side) {
  const floor = await spawnReady(undo, 'floor', [projectPath('dist', 'bench', 'verify-floor.js')], {
    ...env, FLOOR_TENANT: side.tenantId, FLOOR_HOTSPOT: side.hotspotId, FLOOR_MINUTES: String(loadConfig(env).defaultSessionMinutes),
    FLOOR_WEBHOOK_URL: `http://${HOST}:${recv.port}/hook/floor`, FLOOR_WEBHOOK_SECRET: SECRET,
  });
  const redis = new Redis(env.REDIS_URL!);
  try {
    const base = `http://${HOST}:${floor.ready.port}`;
    const cpuPids = { server: floor.child.pid!, ...pids };
    const settled = (): Promise<unknown> => drained(redis, floorOutbox(side.tenantId), 30_000);
    // A longer warm-up than the service's: at twice its rate, 2,000 sign-ins left the floor's first phase a third slower than its last.
    await signIns(base, side.hotspotId, side.codes, 7, 2 * BURST);
    await settled();
    const [alone1, cpu1] = await withCpu(cpuPids, () => signIns(base, side.hotspotId, side.codes, 8, BURST));
    await redis.xgroup('CREATE', floorEvents(side.tenantId), FLOOR_HOOK_GROUP, '$', 'MKSTREAM');
    await settled();
    recv.reset();
    const [burst, cpuB] = await withCpu(cpuPids, () => signIns(base, side.hotspotId, side.codes, 9, BURST));
    const b = await recv.waitFor(burst.requests);
    await redis.xgroup('DESTROY', floorEvents(side.tenantId), FLOOR_HOOK_GROUP);
    await settled();
    const [alone2, cpu2] = await withCpu(cpuPids, () => signIns(base, side.hotspotId, side.codes, 10, BURST));
    const verifyUs = (cpu1.machineUs + cpu2.machineUs) / (alone1.requests + alone2.requests);
    const out = {
      alonePerS: Math.round((alone1.rps + alone2.rps) / 2), duringBurstPerS: Math.round(burst.rps),
      ratio: +(burst.rps / ((alone1.rps + alone2.rps) / 2)).toFixed(3), deliveriesPerS: Math.round(rate(b)), delivered: b.deliveries,
      lagP50Ms: b.lagP50Ms, lagP99Ms: b.lagP99Ms, verifyUs: Math.round(verifyUs),
      deliveryUs: Math.round((cpuB.machineUs - burst.requests * verifyUs) / Math.max(1, b.deliveries)),
      bad: alone1.bad + burst.bad + alone2.bad + b.repeats + b.signaturesBad + b.malformed + (b.deliveries < burst.requests ? 1 : 0),
      windows: windows(alone1, burst, b, alone2),
    };
    say(`floor: verify alone ${alone1.rps.toFixed(0)}, ${alone2.rps.toFixed(0)}/s; in its burst ${burst.rps.toFixed(0)}/s, ratio ${out.ratio}; ${b.deliveries}/${burst.requests} delivered at ${out.deliveriesPerS}/s, lag p50 ${b.lagP50Ms} p99 ${b.lagP99Ms} ms; machine CPU: a sign-in ${out.verifyUs} µs, a delivery about ${out.deliveryUs} µs; errors ${out.bad}`);
    return out;
  } finally {
    redis.disconnect();
    await stopChild(floor.child);
  }
}

async function main(): Promise<number> {
  undo.guard('webhooks', DEADLINE_MS);
  const stack = await localStack('webhooks', undo);
  const env: NodeJS.ProcessEnv = { ...stack.env, HTTP_HOST: HOST, ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // RADIUS is not measured here: free ports on loopback, so a RADIUS server or bench beside it on 1812 does not stop the run.
    RADIUS_HOST: HOST, RADIUS_AUTH_PORT: '0', RADIUS_ACCT_PORT: '0',
    // Webhook secrets are sealed at rest: a key of this run's own.
    SECRETS_KEY: process.env.SECRETS_KEY ?? randomBytes(32).toString('base64'),
    // The dispatcher's settings as given, for A/B runs (WEBHOOK_TENANT_CONCURRENCY, WEBHOOK_POLL_MS).
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('WEBHOOK_'))) };
  const { tenantId, apiKey, hotspotId, codes } = await seed(env, 'Bench Webhooks');
  const floorSide = FLOOR ? await seed(env, 'Bench Webhooks Floor') : null;
  // BENCH_CPU_PROF (a folder): the service runs under --cpu-prof and writes its profiles there at exit.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const service = await spawnReady(undo, 'service', [...serviceNodeOptions(), ...prof, projectPath('dist', 'scripts', 'serve.js')], env);
  const base = `http://${HOST}:${service.ready.ports.main}`;
  const recv = new ReceiverControl(await watchReady(undo, 'receiver', spawn(process.execPath, [projectPath('dist', 'bench', 'webhooks-receiver.js')],
    { env: { PATH: process.env.PATH, WEBHOOK_SECRET: SECRET }, stdio: ['pipe', 'pipe', 'inherit'] })));

  const probe = await signIns(base, hotspotId, codes, 1, 1);
  if (probe.bad) throw new Error('the verify probe failed: the scenario must be the success path');

  // Warm-up: the service's JIT and pools, so the first measured burst is not the cold one.
  await signIns(base, hotspotId, codes, 6, 2000);
  // Where the machine's CPU goes while the sign-ins run, alone and beside the deliveries (percent of a core;
  // "rest" is the receiver, this process and anything else running): whether the burst is short of CPU or of something else.
  const cpuPids = { server: service.child.pid!, redis: stack.pids().redis, postgres: stack.pids().postgres };
  const [y, cpuY] = await withCpu(cpuPids, () => yardstick(recv, tenantId, YARDSTICK));
  // The whole machine's CPU a yardstick delivery took (this process's client, the receiver, both sides of loopback TCP):
  // what a delivery costs this machine with no queue, no durable state and no event behind it.
  const yardstickUs = cpuY.machineUs / Math.max(1, y.deliveries);
  say(`yardstick (outbound client -> receiver, 100 in flight): ${rate(y).toFixed(0)} deliveries/s, ${yardstickUs.toFixed(0)} µs of the machine a delivery, bad signatures ${y.signaturesBad}/${y.signaturesChecked}`);
  // Redis's commands (INFO commandstats, those run inside scripts counted): calls per delivery (what each costs in round
  // trips and script runs), and Redis's own time per command (where the burst's Redis time goes).
  const redis = new Redis(stack.env.REDIS_URL!);
  undo.push(() => redis.disconnect());
  const commandStats = async (field: 'calls' | 'usec'): Promise<Map<string, number>> =>
    new Map([...(await redis.info('commandstats')).matchAll(/^cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/gm)].map((m) => [m[1]!, Number(field === 'calls' ? m[2] : m[3])]));
  const calls = (): Promise<Map<string, number>> => commandStats('calls');
  const usec = (): Promise<Map<string, number>> => commandStats('usec');
  // Each measured phase starts with the sink done with the sign-ins before it (their Postgres rows), on both sides.
  const settled = (key: string): Promise<unknown> => drained(redis, key, 30_000);
  const outbox = keys.outbox(tenantId);
  await settled(outbox);
  const u0 = await usec();
  const [alone1, cpuAlone] = await withCpu(cpuPids, () => signIns(base, hotspotId, codes, 2, BURST));
  const u1 = await usec();
  say(`verify alone: ${alone1.rps.toFixed(0)}/s (${alone1.requests} sign-ins in ${alone1.seconds.toFixed(3)} s, p99 ${alone1.p99Ms} ms, ${alone1.bad} failed); CPU ${cpuLine(cpuAlone)}`);

  let one: string;
  try {
    one = await subscribe(base, apiKey, `http://${HOST}:${recv.port}/hook/0`);
  } catch (err) {
    const status = (err as { status?: number }).status;
    say(`webhooks: ${(err as Error).message}`);
    process.stdout.write(JSON.stringify({ bench: 'webhooks', api: false, status, yardstickPerS: Math.round(rate(y)), verifyAlonePerS: Math.round(alone1.rps) }) + '\n');
    return 3;
  }
  // Redis's used_memory, bytes.
  const usedMemory = async (): Promise<number> => Number(/^used_memory:(\d+)/m.exec(await redis.info('memory'))?.[1] ?? NaN);
  await settled(outbox);
  recv.reset();
  const b0 = await calls();
  const u2 = await usec();
  const [burst, cpuBurst] = await withCpu(cpuPids, () => signIns(base, hotspotId, codes, 3, BURST));
  const b = await recv.waitFor(burst.requests);
  // Script calls per delivery of the burst: route, claim and settle, and every other script meanwhile (the sign-ins', the sink's, the leases').
  const burstScripts = ((await calls()).get('evalsha') ?? 0) - (b0.get('evalsha') ?? 0);
  const u3 = await usec();
  say(`burst, 1 subscription: verify ${burst.rps.toFixed(0)}/s (${burst.seconds.toFixed(3)} s, p99 ${burst.p99Ms} ms, ${burst.bad} failed); CPU ${cpuLine(cpuBurst)}; ${b.deliveries}/${burst.requests} delivered at ${rate(b).toFixed(0)}/s (${(burstScripts / Math.max(1, b.deliveries)).toFixed(2)} script calls a delivery, counting every script the burst ran: the sign-ins', the sink's, the leases'); lag p50 ${b.lagP50Ms} p99 ${b.lagP99Ms} max ${b.lagMaxMs} ms; repeats ${b.repeats}; signatures bad ${b.signaturesBad}/${b.signaturesChecked}; malformed ${b.malformed}`);
  await api(base, apiKey, 'DELETE', `/v1/webhooks/${one}`);
  await settled(outbox);
  const [alone2, cpuAlone2] = await withCpu(cpuPids, () => signIns(base, hotspotId, codes, 4, BURST));
  say(`verify alone again: ${alone2.rps.toFixed(0)}/s (${alone2.seconds.toFixed(3)} s, p99 ${alone2.p99Ms} ms); CPU ${cpuLine(cpuAlone2)}`);
  // The ratio as the machine's CPU split: with the machine full in both phases (idle a few percent), verify during the burst
  // over verify alone is about v / (v + d), v and d what a sign-in and a delivery cost the whole machine. With d at the
  // yardstick's, the best any dispatcher could reach here while its receiver shares the machine.
  const verifyUs = (cpuAlone.machineUs + cpuAlone2.machineUs) / (alone1.requests + alone2.requests);
  const deliveryUs = (cpuBurst.machineUs - burst.requests * verifyUs) / Math.max(1, b.deliveries);
  const split = { verifyUs: Math.round(verifyUs), deliveryUs: Math.round(deliveryUs), yardstickUs: Math.round(yardstickUs), bound: +(verifyUs / (verifyUs + yardstickUs)).toFixed(3) };
  // µs of Redis's time per sign-in by command, alone (phase 2) and in the burst (phase 3): what the deliveries add, and what they slow.
  const perSignIn = (a: Map<string, number>, z: Map<string, number>, n: number): Map<string, number> =>
    new Map([...z].map(([cmd, us]) => [cmd, (us - (a.get(cmd) ?? 0)) / Math.max(1, n)]));
  const redisAlone = perSignIn(u0, u1, alone1.requests);
  const redisBurst = perSignIn(u2, u3, burst.requests);
  const redisRows = [...redisBurst].filter(([cmd, us]) => us >= 1 || (redisAlone.get(cmd) ?? 0) >= 1).sort((a, b) => b[1] - a[1])
    .map(([cmd, us]) => `${cmd} ${(redisAlone.get(cmd) ?? 0).toFixed(1)} -> ${us.toFixed(1)}`);
  say(`Redis µs per sign-in as Redis timed its commands, alone -> in the burst: ${redisRows.join(', ')}`);
  say(`machine CPU: a sign-in ${split.verifyUs} µs alone, a delivery about ${split.deliveryUs} µs in the burst, a yardstick delivery ${split.yardstickUs} µs; the verify ratio with yardstick-cost deliveries: ${split.bound}`);
  const ratio = burst.rps / ((alone1.rps + alone2.rps) / 2);
  await settled(outbox);
  const floor = floorSide && await floorRun(env, { redis: cpuPids.redis, postgres: cpuPids.postgres }, recv, floorSide);
  if (floor) say(`the service's verify ratio over the floor's: ${(ratio / floor.ratio).toFixed(2)}`);

  const ids: string[] = [];
  for (let k = 0; k < 100; k++) ids.push(await subscribe(base, apiKey, `http://${HOST}:${recv.port}/hook/${k}`));
  recv.reset();
  // CPU per delivery: what a machine busy with other work blurs less than rates (1,000 sign-ins beside 100,000 deliveries).
  const c0 = await calls();
  const m0 = await usedMemory();
  const t0 = { service: cpuTicks(cpuPids.server), redis: cpuTicks(cpuPids.redis) };
  const fan = await signIns(base, hotspotId, codes, 5, EVENTS_100);
  const f = await recv.waitFor(fan.requests * 100);
  // Ticks are 1/100 s: µs per delivery.
  const cpu = {
    serviceUsPerDelivery: Math.round(((cpuTicks(cpuPids.server) - t0.service) * 10_000) / Math.max(1, f.deliveries)),
    redisUsPerDelivery: Math.round(((cpuTicks(cpuPids.redis) - t0.redis) * 10_000) / Math.max(1, f.deliveries)),
    redisCallsPerDelivery: {} as Record<string, number>,
    /** Every command Redis ran (those inside scripts included; the 1,000 sign-ins' own are a few per hundred deliveries). */
    redisCommandsPerDelivery: 0,
  };
  let all = 0;
  for (const [cmd, n] of await calls()) {
    all += n - (c0.get(cmd) ?? 0);
    const per = (n - (c0.get(cmd) ?? 0)) / Math.max(1, f.deliveries);
    if (per >= 0.01) cpu.redisCallsPerDelivery[cmd] = +per.toFixed(2);
  }
  // INFO itself is one of them; the c0 read's reply did not count it yet.
  cpu.redisCommandsPerDelivery = +((all - 1) / Math.max(1, f.deliveries)).toFixed(2);
  // What a delivered delivery keeps in Redis for its day (its state, its event's data, its place in the done set, its
  // attempt record): the memory an operator sizes Redis for, per delivery a day. The 1,000 sign-ins' own keys are in it too.
  const keptBytes = Math.round((await usedMemory() - m0) / Math.max(1, f.deliveries));
  say(`100 subscriptions: ${f.deliveries}/${fan.requests * 100} delivered at ${rate(f).toFixed(0)}/s; lag p99 ${f.lagP99Ms} ms; repeats ${f.repeats}; signatures bad ${f.signaturesBad}/${f.signaturesChecked}; CPU per delivery: service ${cpu.serviceUsPerDelivery} µs, Redis ${cpu.redisUsPerDelivery} µs; Redis commands per delivery ${cpu.redisCommandsPerDelivery}, by command ${JSON.stringify(cpu.redisCallsPerDelivery)}; Redis memory kept per delivered delivery ${keptBytes} B`);
  for (const id of ids) await api(base, apiKey, 'DELETE', `/v1/webhooks/${id}`);

  const summary = {
    bench: 'webhooks', yardstickPerS: Math.round(rate(y)),
    one: { deliveriesPerS: Math.round(rate(b)), delivered: b.deliveries, owed: burst.requests, lagP50Ms: b.lagP50Ms, lagP99Ms: b.lagP99Ms },
    hundred: { deliveriesPerS: Math.round(rate(f)), delivered: f.deliveries, owed: fan.requests * 100, lagP99Ms: f.lagP99Ms, cpu, keptBytesPerDelivery: keptBytes },
    verify: {
      alonePerS: Math.round((alone1.rps + alone2.rps) / 2), duringBurstPerS: Math.round(burst.rps), ratio: +ratio.toFixed(3),
      seconds: { alone1: +alone1.seconds.toFixed(3), burst: +burst.seconds.toFixed(3), alone2: +alone2.seconds.toFixed(3) },
      cpuPercentOfACore: { alone1: cpuAlone, burst: cpuBurst, alone2: cpuAlone2 },
      machineSplit: split,
      windows: windows(alone1, burst, b, alone2),
    },
    floor,
  };
  process.stdout.write(JSON.stringify(summary) + '\n');
  const errors = burst.bad + alone1.bad + alone2.bad + fan.bad + (floor?.bad ?? 0) + b.repeats + f.repeats + b.signaturesBad + f.signaturesBad + b.malformed + f.malformed
    + (b.deliveries < burst.requests ? 1 : 0) + (f.deliveries < fan.requests * 100 ? 1 : 0);
  if (errors) return 1;
  const met = Math.max(rate(b), rate(f)) >= TARGETS.deliveriesPerS && b.lagP99Ms <= TARGETS.lagP99Ms && ratio >= TARGETS.verifyRatio;
  return met ? 0 : 2;
}

void main().then(async (code) => { await undo.run(); process.exit(code); }, async (err: Error) => {
  say(`webhooks: ${err.stack ?? err.message}`);
  await undo.run();
  process.exit(1);
});
