import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { activityKeys } from '../engine/events/activity-keys.js';
import { GUESS_REFUSAL_WINDOW_MS } from '../engine/signin/voucher-method.js';
import { keys } from '../engine/redis/keys.js';
import { defineScripts, serverRunId } from '../engine/redis/scripts.js';
import { benchMac } from './bench-kit.js';

/**
 * Scenario: the voucher sign-in's script alone (use-voucher-18.lua with its
 * includes: the restart guard, the guessing limits, the session start, the
 * events and the dashboard's counters), called as engine/signin/
 * voucher-method.ts calls it, one call at a time, against a Redis the caller
 * names (BENCH_REDIS_URL; loopback only). Each call is a new device on an
 * unlimited voucher with the guessing limits on: the portal's common case,
 * a spent use and a new session. Reports Redis's own time per call
 * (commandstats: `evalsha`, and the commands the script ran, which it
 * includes). BENCH_SIGNINS calls a round (default 3,000), BENCH_ROUNDS
 * rounds (default 5), the first 300 calls not counted. The A/B of a change
 * inside the sign-in scripts, free of the HTTP layer's and the machine's
 * noise (bench/results/portal-verify.md). Its keys go to a fresh tenant,
 * deleted after.
 */
const URL = process.env.BENCH_REDIS_URL;
if (!URL || !/^redis:\/\/(127\.0\.0\.1|localhost)[:/]/.test(URL)) throw new Error('BENCH_REDIS_URL=redis://127.0.0.1:<port>/<db> (loopback only)');
const SIGNINS = Number(process.env.BENCH_SIGNINS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARM = 300;

async function main(): Promise<void> {
  const redis = new Redis(URL!);
  defineScripts(redis);
  const t = `tn_bench${randomBytes(5).toString('hex')}`;
  const hs = 'hs_abcdefghijklmnop';
  const code = 'BENCHCODE1';
  const source = '10.1.2.3';
  await redis.hset(keys.voucher(t, code), {
    id: 'vch_bench', max: -1, uses: 0, exp: 0, ssids: '', dur: 60, down: 10_000, up: 5_000, quota: 0,
    profile: 'default', code, squota: 0, vfrom: 0, vuntil: 0,
  });
  await redis.set(keys.loaded(t), await serverRunId(redis));
  let n = 0;
  const signIn = async (): Promise<void> => {
    const now = Date.now();
    const mac = benchMac(0xaa, 0, n);
    const sid = `sess_${String(n++).padStart(20, '0')}`;
    const a = await redis.useVoucherV9(
      keys.voucher(t, code), keys.voucherDevices(t, code), keys.grant(t, hs, mac), keys.outbox(t), keys.loaded(t),
      keys.live(t, hs), keys.sessionRef(t, sid), keys.block(t, mac), ...activityKeys(t, now),
      keys.guessesByDevice(t, hs, mac), keys.guessesByAddress(t, source), keys.guessRefusals(t, Math.floor(now / GUESS_REFUSAL_WINDOW_MS)),
      keys.knownDevices(t),
      now, mac, hs, source, 'Guest', sid, 60, 0, 10, 30, 600_000, 2 * GUESS_REFUSAL_WINDOW_MS, 'ios');
    if (a[0] !== 'ok') throw new Error(`use-voucher answered ${String(a)}`);
  };
  const stats = async (): Promise<Map<string, [number, number]>> => {
    const m = new Map<string, [number, number]>();
    for (const x of (await redis.info('commandstats')).matchAll(/cmdstat_([\w|]+):calls=(\d+),usec=(\d+)/g)) m.set(x[1]!, [Number(x[2]), Number(x[3])]);
    return m;
  };

  for (let i = 0; i < WARM; i++) await signIn();
  const perRound: number[] = [];
  const inner = new Map<string, [number, number]>();
  for (let round = 0; round < ROUNDS; round++) {
    const before = await stats();
    for (let i = 0; i < SIGNINS; i++) await signIn();
    const after = await stats();
    for (const [cmd, [calls, us]] of after) {
      const [c0, u0] = before.get(cmd) ?? [0, 0];
      if (cmd === 'evalsha') perRound.push((us - u0) / SIGNINS);
      else if (calls - c0 > (cmd === 'info' ? 2 : 0)) {
        const sum = inner.get(cmd) ?? [0, 0];
        inner.set(cmd, [sum[0] + calls - c0, sum[1] + us - u0]);
      }
    }
  }
  // The commandstats reads' own INFO: one a read, not the script's.
  const info = inner.get('info');
  if (info) inner.set('info', [info[0] - 2 * ROUNDS, info[1]]);
  const total = SIGNINS * ROUNDS;
  const sorted = [...perRound].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  const commands = [...inner.values()].reduce((s, [c]) => s + c, 0) / total;
  const byCommand = [...inner].sort((a, b) => b[1][1] - a[1][1])
    .map(([cmd, [c, us]]) => `${cmd} ${(c / total).toFixed(2)} (${(us / total).toFixed(1)} µs)`).join(', ');
  process.stdout.write(`signin-script: use-voucher-18, ${total} sign-ins | Redis µs per call: median of rounds ${median.toFixed(1)} `
    + `(rounds ${perRound.map((x) => x.toFixed(1)).join(' ')}) | commands a call ${commands.toFixed(1)}: ${byCommand}\n`);
  const left: string[] = [];
  for await (const batch of redis.scanStream({ match: `{t:${t}}*`, count: 1000 })) left.push(...(batch as string[]));
  for (let i = 0; i < left.length; i += 500) await redis.del(...left.slice(i, i + 500));
  redis.disconnect();
}

main().catch((e: unknown) => { process.stderr.write(`${String(e)}\n`); process.exit(1); });
