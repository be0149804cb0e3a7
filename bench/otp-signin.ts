import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createLogger, DEFAULT_CODE_FORMAT, Engine, loadConfig, projectPath, signOperatorToken } from '../engine/index.js';
import { keys } from '../engine/redis/keys.js';
import { fakeCarrier } from './fake-carrier.js';
import { JsonClient } from './json-client.js';
import { localStack, benchMac, drained, percentile, say, spawnReady, Teardown, withCpu, type CpuUse, serviceNodeOptions } from './bench-kit.js';

/**
 * Scenario: a guest signs in by phone. A pair is `POST /api/v1/hotspot-portal/sms/request`,
 * the code read from a fake Netgsm carrier on loopback (the service sends it there through
 * its real SMS adapter, as it would to the carrier), and `POST .../sms/verify`, which starts
 * the session. The yardstick is portal voucher verify, driven by the same load driver in the
 * same run, so both sides pay the same client cost.
 *
 * Phases: (1) voucher verify, closed loop, CONNECTIONS at once, DURATION s: rate V.
 * (2) phone pairs, closed loop, the same concurrency: rate O; target O >= 0.5 V.
 * (3) phone pairs offered at a fixed half of O per second (open loop, latency counted from
 * when a pair was due, so a stall is not hidden): target p99 <= 50 ms at that load. It
 * starts once the outbox sink has caught up with phase (2) and after a warm-up at that rate:
 * the target is a steady half load, not the drain of a saturating burst.
 *
 * Every pair uses its own phone number and MAC, and the tenant's OTP abuse limits are
 * switched off (all requests come from 127.0.0.1), so each pair is the full success path:
 * two Lua scripts, one SMS send, one session start with its audit record. One summary line
 * on stdout; exit 0 pass, 2 targets missed, 1 errors. Knobs: BENCH_DURATION (s, default 10),
 * BENCH_CONNECTIONS (default 50), BENCH_CPU_PROF (a folder: the service runs with --cpu-prof).
 */

const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const TARGET_RATIO = 0.5;
const TARGET_P99_MS = 50;
const HOST = '127.0.0.1';
const DEADLINE_MS = 180_000 + 4 * (DURATION_S + 5) * 1000;
const CPU_PROF = process.env.BENCH_CPU_PROF;

const undo = new Teardown();
undo.guard('otp-signin', DEADLINE_MS);

interface Phase { done: number; errors: number; seconds: number; latencies: number[]; firstError?: string }

/** Runs `one(i)` with `concurrency` loops until `seconds` pass (closed loop). */
async function closedLoop(seconds: number, concurrency: number, one: (i: number) => Promise<void>): Promise<Phase> {
  const phase: Phase = { done: 0, errors: 0, seconds, latencies: [] };
  const end = Date.now() + seconds * 1000;
  let n = 0;
  const loop = async (): Promise<void> => {
    while (Date.now() < end) {
      const at = performance.now();
      try { await one(n++); phase.done++; phase.latencies.push(performance.now() - at); } catch (err) {
        phase.errors++;
        phase.firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  phase.latencies.sort((a, b) => a - b);
  return phase;
}

/** Starts `one(i)` at a fixed rate for `seconds` (open loop); latency is counted from when each was due. */
async function openLoop(seconds: number, perSecond: number, one: (i: number) => Promise<void>): Promise<Phase> {
  const phase: Phase = { done: 0, errors: 0, seconds, latencies: [] };
  const start = performance.now();
  const total = Math.floor(seconds * perSecond);
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    inflight.push(one(i).then(() => { phase.done++; phase.latencies.push(performance.now() - due); }, (err: Error) => {
      phase.errors++;
      phase.firstError ??= err.message;
    }));
  }
  await Promise.all(inflight);
  phase.latencies.sort((a, b) => a - b);
  return phase;
}

async function main(): Promise<number> {
  try {
    const stack = await localStack('otp-signin', undo);
    const { local } = stack;
    const redis = new Redis(local.redisUrl, { maxRetriesPerRequest: 2 });
    undo.push(() => { redis.disconnect(); });
    const secret = stack.env.JWT_SECRET!;
    const carrierCreds = `bench:${randomBytes(8).toString('hex')}`;
    const carrier = await fakeCarrier(undo, HOST, `Basic ${Buffer.from(carrierCreds).toString('base64')}`);
    // The fake carrier is on loopback: a private target, allowed for the bench as for the tests.
    const env: NodeJS.ProcessEnv = { ...stack.env, HTTP_HOST: HOST, RADIUS_ENABLED: 'false', ALLOW_PRIVATE_TARGETS: 'true' };

    // A tenant, a hotspot and unlimited vouchers, through the engine (the service runs its own sink).
    const engine = new Engine(loadConfig(env), createLogger('warn', 2), { sink: false, actors: false });
    let tenantId: string, hotspotId: string, codes: string[];
    try {
      await engine.start();
      const tenant = await engine.tenants.create('Bench Venue');
      const hs = await engine.hotspots.create(tenant.id, { name: 'Gate A', timezone: 'Europe/Istanbul' });
      const rows = await engine.vouchers.createBatch(tenant.id, {
        count: 200, format: DEFAULT_CODE_FORMAT, max_uses: null, expires_at: null, bandwidth_profile: null,
        daily_quota_mb: null, session_quota_mb: null, duration_minutes: null, bandwidth_down_mbps: null, bandwidth_up_mbps: null, ssids: [], notes: null,
      }, 'bench');
      [tenantId, hotspotId, codes] = [tenant.id, hs.id, rows.map((r) => r.code)];
    } finally {
      await engine.close();
    }

    const prof = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
    // A tenant's credentials are the variables named after it (engine/signin/providers/env-ref.ts).
    const credentialsVar = `${tenantId.toUpperCase()}_SMS`;
    env[credentialsVar] = carrierCreds;
    const service = await spawnReady(undo, 'service', [...serviceNodeOptions(), ...prof, projectPath('dist', 'scripts', 'serve.js')], env);
    const client = new JsonClient(HOST, service.ready.ports.main as number, CONNECTIONS * 2);
    undo.push(() => client.close());
    const token = await signOperatorToken(new TextEncoder().encode(secret), tenantId, ['admin'], 3600, 'bench');
    const put = await client.send('PUT', '/v1/settings/sign-in', {
      methods: ['voucher', 'sms_otp'],
      sms: { provider: 'netgsm', base_url: carrier.url, credentials_ref: `env://${credentialsVar}`, sender: 'BENCHVENUE' },
      otp: { cooldown_sec: 0, per_identity_daily: 0, per_ip_hourly: 0, per_mac_hourly: 0, per_prefix_hourly: 0 },
    }, { authorization: `Bearer ${token}` });
    if (put.status !== 200) throw new Error(`sign-in settings refused: ${put.status} ${JSON.stringify(put.json)}`);

    let run = 0;
    const verify = (r: number) => async (i: number): Promise<void> => {
      const a = await client.post('/api/v1/hotspot-portal/voucher/verify', { hotspot_id: hotspotId, code: codes[i % codes.length], mac: benchMac(6, r, i) });
      if (a.status !== 200) throw new Error(`verify ${a.status} ${JSON.stringify(a.json)}`);
    };
    const pair = (r: number) => async (i: number): Promise<void> => {
      const local10 = `5${String(r).padStart(2, '0')}${String(i).padStart(7, '0')}`;
      const phone = `+90${local10}`;
      const mac = benchMac(10, r, i);
      const req = await client.post('/api/v1/hotspot-portal/sms/request', { hotspot_id: hotspotId, phone, mac });
      if (req.status !== 200) throw new Error(`sms/request ${req.status} ${JSON.stringify(req.json)}`);
      const code = await carrier.codeFor(local10);
      const ok = await client.post('/api/v1/hotspot-portal/sms/verify', { hotspot_id: hotspotId, phone, code, mac });
      if (ok.status !== 200 || ok.json?.status !== 'authorized') throw new Error(`sms/verify ${ok.status} ${JSON.stringify(ok.json)}`);
    };

    // One of each by hand: the scenario must be the success path, or the figures mean nothing.
    await verify(++run)(0);
    await pair(++run)(0);

    const pids = {
      server: service.child.pid!,
      ...stack.pids(),
    };
    const measure = async (name: string, go: () => Promise<Phase>, warmUp?: () => Promise<unknown>): Promise<[Phase, CpuUse]> => {
      await (warmUp ? warmUp() : closedLoop(2, CONNECTIONS, name === 'verify' ? verify(++run) : pair(++run)));
      const own = process.cpuUsage();
      const from = process.hrtime.bigint() / 1000n;
      const [p, cpu] = await withCpu(pids, go);
      const ownUs = process.cpuUsage(own);
      // The profile's timestamps are CLOCK_MONOTONIC microseconds, as hrtime's: these cut the phase out of it.
      if (CPU_PROF) say(`  profile window: node dist/bench/cpu-profile-summary.js <file> --from ${from} --to ${process.hrtime.bigint() / 1000n} --requests ${p.done}`);
      const rate = p.done / p.seconds;
      const us = (pct: number): string => ((pct * 1e4) / Math.max(1, rate)).toFixed(0);
      say(`  ${name.padEnd(22)} ${rate.toFixed(0).padStart(6)}/s  p50 ${percentile(p.latencies, 50).toFixed(1)} ms  p99 ${percentile(p.latencies, 99).toFixed(1)} ms` +
        `  errors ${p.errors}${p.firstError ? ` (${p.firstError})` : ''}\n${' '.repeat(24)}cpu us per ${name.startsWith('verify') ? 'verify' : 'pair'}: ` +
        `server ${us(cpu.server)}, redis ${us(cpu.redis)}, postgres ${us(cpu.postgres)}, this bench (driver and carrier) ${((ownUs.user + ownUs.system) / Math.max(1, p.done)).toFixed(0)}; ` +
        `rest ${cpu.rest}%, idle ${cpu.idle}%`);
      return [p, cpu];
    };

    say(`otp-signin: ${CONNECTIONS} concurrent, ${DURATION_S} s per phase, fake Netgsm carrier on loopback`);
    const [v] = await measure('verify', () => closedLoop(DURATION_S, CONNECTIONS, verify(++run)));
    const [o] = await measure('otp pairs', () => closedLoop(DURATION_S, CONNECTIONS, pair(++run)));
    const vRate = v.done / v.seconds, oRate = o.done / o.seconds;
    const offered = Math.max(1, Math.floor(oRate / 2));
    // The latency target is for a steady half load: the closed loop leaves the outbox sink tens of thousands of
    // records behind, and measured on top of that backlog (as until 2026-11-25) the p99 was the drain's, not the
    // pairs'. So: wait for the sink to catch up (bounded), and warm up at the offered rate, not at saturation.
    const { left } = await drained(redis, keys.outbox(tenantId), 60_000);
    say(`  outbox before the half-rate phase: ${left === 0 ? 'drained' : `${left} records still queued after 60 s`}`);
    const [fixed] = await measure(`otp pairs at ${offered}/s`, () => openLoop(DURATION_S, offered, pair(++run)),
      () => openLoop(2, offered, pair(++run)));
    const p99 = percentile(fixed.latencies, 99);
    const ratio = oRate / vRate;
    const errors = v.errors + o.errors + fixed.errors;
    const pass = ratio >= TARGET_RATIO && p99 <= TARGET_P99_MS;
    const verdict = errors ? 'ERRORS' : pass ? 'PASS' : 'FAIL';
    process.stdout.write(`otp-signin: verify ${vRate.toFixed(0)}/s | otp pairs ${oRate.toFixed(0)}/s, ratio ${ratio.toFixed(2)} | ` +
      `at ${offered}/s offered: p50 ${percentile(fixed.latencies, 50).toFixed(1)} ms p99 ${p99.toFixed(1)} ms | sms sent ${carrier.sent()} | errors ${errors} ` +
      `(target: ratio >= ${TARGET_RATIO}, p99 <= ${TARGET_P99_MS} ms at half the pairs' rate) ${verdict}\n`);
    return errors ? 1 : pass ? 0 : 2;
  } finally {
    await undo.run();
  }
}

main().then((code) => { process.exitCode = code; }, (err: Error) => {
  say(`otp-signin failed: ${err.stack ?? err.message}`);
  process.exitCode = 1;
});
