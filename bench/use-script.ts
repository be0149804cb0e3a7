import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { activityKeys } from '../engine/events/activity-keys.js';
import { keys } from '../engine/redis/keys.js';
import { defineScripts, serverRunId } from '../engine/redis/scripts.js';
import { benchMac as mac } from './bench-kit.js';

/**
 * Scenario: the portal verify's use script alone (use-voucher-18.lua), as the
 * engine calls it, against a Redis the caller names (BENCH_REDIS_URL; loopback
 * only): BENCH_USES uses (default 20000), each a new MAC on one multi-use
 * voucher, BENCH_INFLIGHT (50) calls in flight. Reports Redis's own figures per
 * use: CPU (INFO cpu, user + sys), the script's µs (commandstats evalsha) and
 * the commands it ran. Unlike portal-verify it has no HTTP, service or
 * Postgres in it, so its figures move little with the machine's load: the
 * A/B for a change inside the script (bench/results/portal-verify.md).
 * Use a Redis of its own (it resets commandstats); its keys go to a fresh tenant, deleted after.
 */
const URL = process.env.BENCH_REDIS_URL;
if (!URL || !/^redis:\/\/(127\.0\.0\.1|localhost)[:/]/.test(URL)) throw new Error('BENCH_REDIS_URL=redis://127.0.0.1:<port>/<db> (loopback only)');
const USES = Number(process.env.BENCH_USES ?? 20_000);
const INFLIGHT = Number(process.env.BENCH_INFLIGHT ?? 50);

function stats(info: string): Map<string, { calls: number; usec: number }> {
  const m = new Map<string, { calls: number; usec: number }>();
  for (const line of info.split('\n')) {
    const r = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line.trim());
    if (r) m.set(r[1]!, { calls: Number(r[2]), usec: Number(r[3]) });
  }
  return m;
}
const cpuOf = (info: string): number => {
  const u = /used_cpu_user:([\d.]+)/.exec(info), s = /used_cpu_sys:([\d.]+)/.exec(info);
  return Number(u?.[1] ?? 0) + Number(s?.[1] ?? 0);
};

async function main(): Promise<void> {
  const redis = new Redis(URL!);
  defineScripts(redis);
  const t = `tn_bench${randomBytes(5).toString('hex')}`;
  await redis.set(keys.loaded(t), await serverRunId(redis));
  const code = 'BENCHUSE';
  await redis.putVoucherV3(keys.voucher(t, code), 'vch_bench', -1, 0, 0, '', 60, 0, 0, 0, '', code, 0, 0, 0);
  const hs = 'hs_bench';
  let i = 0;
  const one = async (): Promise<void> => {
    const n = i++;
    const now = Date.now();
    const m = mac(0x02, 0x5c, n);
    const sid = `sess_b${n}_${randomBytes(4).toString('hex')}`;
    const r = await redis.useVoucherV9(keys.voucher(t, code), keys.voucherDevices(t, code), keys.grant(t, hs, m), keys.outbox(t), keys.loaded(t),
      keys.live(t, hs), keys.sessionRef(t, sid), keys.block(t, m), ...activityKeys(t, now),
      keys.guessesByDevice(t, hs, m), keys.guessesByAddress(t, '10.1.2.3'), keys.guessRefusals(t, Math.floor(now / 600_000)), keys.knownDevices(t),
      now, m, hs, '10.1.2.3', 'Guest', sid, 60, 0, 10, 30, 600_000, 1_200_000, 'ios');
    if ((r as unknown[])[0] !== 'ok') throw new Error(`use ${n}: ${JSON.stringify(r)}`);
  };
  const worker = async (): Promise<void> => { while (i < USES) await one(); };
  // Warm-up (script loaded, buckets created), then the measurement.
  for (let w = 0; w < 200; w++) await one();
  i = 200;
  await redis.config('RESETSTAT');
  const cpu0 = cpuOf(await redis.info('cpu'));
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: INFLIGHT }, worker));
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu1 = cpuOf(await redis.info('cpu'));
  const st = stats(await redis.info('commandstats'));
  const uses = USES - 200;
  const script = st.get('evalsha') ?? { calls: 0, usec: 0 };
  const inner = [...st].filter(([k]) => !['evalsha', 'eval', 'config|resetstat'].includes(k));
  let cmds = 0;
  const parts: string[] = [];
  for (const [k, v] of inner.sort((a, b) => b[1].usec - a[1].usec)) {
    // The bench's own INFO calls (two) are not the script's.
    const calls = k === 'info' ? v.calls - 2 : v.calls;
    if (calls <= 0) continue;
    cmds += calls;
    parts.push(`${k} ${(calls / uses).toFixed(2)} (${(v.usec / uses).toFixed(1)} us)`);
  }
  process.stdout.write(`use-script: ${uses} uses in ${(wallMs / 1000).toFixed(1)} s | redis cpu ${(((cpu1 - cpu0) * 1e6) / uses).toFixed(1)} us/use | evalsha ${(script.usec / Math.max(1, script.calls)).toFixed(1)} us/call | commands per use ${(cmds / uses).toFixed(1)}: ${parts.join(', ')}\n`);
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `{t:${t}}:*`, 'COUNT', 1000);
    if (found.length) await redis.del(...found);
    cursor = next;
  } while (cursor !== '0');
  redis.disconnect();
}

main().catch((e: unknown) => { process.stderr.write(`${String(e)}\n`); process.exit(1); });
