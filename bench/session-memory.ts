/**
 * Memory per live session, at 10k, 100k and 1M sessions.
 *
 * Engine: each size runs in a fresh child process (node --expose-gc). The
 * sessions are loaded into real HotspotActors (spread over 100 hotspots, one
 * wheel, as a worker thread holds them) through the actor's own load path,
 * from hashes shaped exactly as Redis returns a session; heap and RSS are
 * measured after a full GC, before and after. Then every session answers one
 * Access-Request, so its actor publishes the accept into the thread's auth
 * mirror (a SharedArrayBuffer, outside the heap): its bytes are measured too
 * and count towards the target.
 * Redis: the same sizes started through the real use-voucher script on a
 * throw-away Redis; used_memory before and after.
 *
 *   npm run bench:session-memory            (10k, 100k, 1M)
 *   node dist/bench/session-memory.js 10000 (one size)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { createLogger } from '../engine/logger.js';
import { activityKeys } from '../engine/events/activity-keys.js';
import { keys } from '../engine/redis/keys.js';
import { defineScripts, serverRunId } from '../engine/redis/scripts.js';
import { AuthMirrorWriter } from '../engine/sessions/auth-mirror.js';
import { HotspotActor, type TimedSession } from '../engine/sessions/hotspot-actor.js';
import { sessionFromHash, type SessionStore } from '../engine/sessions/session-store.js';
import { TimerWheel } from '../engine/sessions/timer-wheel.js';
import { startLocalServices } from '../scripts/local-services.js';

const HOTSPOTS = 100;
const gc = (globalThis as { gc?: () => void }).gc;

function hashFor(i: number, now: number): Record<string, string> {
  // Fresh strings per session, as a Redis reply produces them.
  const hex = (n: number): string => n.toString(16).padStart(2, '0').toUpperCase();
  const mac = `02:${hex((i >> 24) & 255)}:${hex((i >> 16) & 255)}:${hex((i >> 8) & 255)}:${hex(i & 255)}:${hex((i * 7) & 255)}`;
  return {
    sid: `sess_${(1e15 + i * 7919).toString(36).padStart(16, '0').slice(-16)}`, hs: `hs_bench${i % HOTSPOTS}`, mac,
    until: String(now + 3_600_000 + (i % 3600) * 1000), method: 'voucher', user: `CODE${(i % 5000).toString(36).toUpperCase()}`,
    vid: `vch_${i % 5000}`, down: '10000', up: '5000', quota: '2048', squota: '0', idle: '900', profile: 'standard',
    ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, ssid: 'Stadium-Guest', created: String(now), last: String(now),
    bin: String(i * 1000), bout: String(i * 100), nas: 'nas_0123456789abcdef', aid: `acct-${i.toString(16)}`,
    // The totals of its current Acct-Session-Id, which the actor keeps (LiveSession.acctIn/acctOut).
    [`a:acct-${i.toString(16)}`]: `${i * 100} ${i * 1000}`,
  };
}

async function engineChild(n: number): Promise<void> {
  if (!gc) throw new Error('run with --expose-gc');
  const now = Date.now();
  const log = createLogger('silent');
  const wheel = new TimerWheel<TimedSession>(now);
  const perHotspot = new Map<number, Record<string, string>[]>();
  // Build the input first and measure only what the actors keep.
  const inputs: Record<string, string>[][] = Array.from({ length: HOTSPOTS }, () => []);
  for (let i = 0; i < n; i++) inputs[i % HOTSPOTS]!.push(hashFor(i, now));
  gc(); gc();
  const before = process.memoryUsage();
  let mirrorBytes = 0;
  const mirror = new AuthMirrorWriter((table) => { mirrorBytes = table.byteLength; });
  const actors: HotspotActor[] = [];
  for (let h = 0; h < HOTSPOTS; h++) {
    const batch = inputs[h]!;
    const store = { loadLive: async () => batch.map((x) => sessionFromHash(x)!), dailyUsed: async () => 0 } as unknown as SessionStore;
    const actor = new HotspotActor('tn_bench', `hs_bench${h}`, 'Europe/Istanbul', {
      store, wheel, log, now: () => now, nas: async () => ({ outcome: 'ack' }), mirror,
    });
    await actor.load();
    actors.push(actor);
    inputs[h] = []; // the Redis reply is garbage once loaded
  }
  perHotspot.clear();
  gc(); gc();
  const after = process.memoryUsage();
  const held = actors.reduce((s, a) => s + a.size, 0);
  if (held !== n || wheel.size !== n) throw new Error(`held ${held}, wheel ${wheel.size}, wanted ${n}`);
  // One Access-Request per session, as a NAS sends on association: every accept published.
  for (let i = 0; i < n; i++) {
    const x = hashFor(i, now);
    const d = await actors[i % HOTSPOTS]!.auth({ t: 'auth', id: i, tenant: 'tn_bench', hs: x.hs!, tz: 'Europe/Istanbul', nasId: x.nas!, mac: x.mac!, userName: '' });
    if (!d.accept) throw new Error(`session ${i} not accepted: ${d.reason}`);
  }
  if (mirror.size !== n) throw new Error(`mirror holds ${mirror.size}, wanted ${n}`);
  gc(); gc();
  const published = process.memoryUsage();
  process.stdout.write(JSON.stringify({
    n, heapPerSession: (after.heapUsed - before.heapUsed) / n, rssPerSession: (after.rss - before.rss) / n,
    mirrorPerSession: mirrorBytes / n, heapGrowthPublishing: (published.heapUsed - after.heapUsed) / n,
  }) + '\n');
}

async function redisBytes(redis: Redis, n: number): Promise<number> {
  await redis.flushall();
  const t = 'tn_bench';
  await redis.set(keys.loaded(t), await serverRunId(redis));
  const now = Date.now();
  await redis.hset(keys.voucher(t, 'BENCH'), 'id', 'vch_bench', 'max', -1, 'uses', 0, 'exp', 0, 'ssids', '', 'dur', 60, 'down', 10000, 'up', 5000, 'quota', 2048, 'profile', 'standard', 'code', 'BENCH');
  const mem = async (): Promise<number> => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);
  const before = await mem();
  for (let i = 0; i < n; i += 2000) {
    const p = redis.pipeline();
    for (let j = i; j < Math.min(n, i + 2000); j++) {
      const h = hashFor(j, now);
      (p as unknown as Redis).useVoucherV9(keys.voucher(t, 'BENCH'), keys.voucherDevices(t, 'BENCH'), keys.grant(t, h.hs!, h.mac!),
        keys.outbox(t), keys.loaded(t), keys.live(t, h.hs!), keys.sessionRef(t, h.sid!), keys.block(t, h.mac!), ...activityKeys(t, now),
        keys.guessesByDevice(t, h.hs!, h.mac!), keys.guessesByAddress(t, ''), keys.guessRefusals(t, 0), keys.knownDevices(t),
        now, h.mac!, h.hs!, h.ip!, h.ssid!, h.sid!, 60, 900, 10, 0, 600_000, 1_200_000);
    }
    await p.exec();
  }
  // The outbox is drained to Postgres in normal running, and the event stream is trimmed to a
  // fixed length (EVENTS_MAXLEN) whatever the number of sessions: the live state is what stays.
  await redis.del(keys.outbox(t), keys.events(t));
  return ((await mem()) - before) / n;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args[0] === '--child') return engineChild(Number(args[1]));
  const sizes = args.length ? args.map(Number) : [10_000, 100_000, 1_000_000];
  const self = fileURLToPath(import.meta.url);
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-mem-'));
  const services = await startLocalServices({ dir, ephemeral: true });
  const redis = new Redis(services.redisUrl);
  defineScripts(redis);
  const rows: string[] = [];
  try {
    for (const n of sizes) {
      const out = JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', self, '--child', String(n)], { encoding: 'utf8' }));
      const r = await redisBytes(redis, n);
      const total = out.heapPerSession + out.mirrorPerSession + Math.max(0, out.heapGrowthPublishing);
      rows.push(`${n}: engine ${total.toFixed(0)} B = heap ${out.heapPerSession.toFixed(0)} B (rss ${out.rssPerSession.toFixed(0)} B) + auth mirror ${out.mirrorPerSession.toFixed(0)} B `
        + `(+ heap ${out.heapGrowthPublishing.toFixed(0)} B publishing), redis ${r.toFixed(0)} B`);
    }
  } finally {
    redis.disconnect();
    await services.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const worst = Math.max(...rows.map((r) => Number(/engine (\d+) B/.exec(r)![1])));
  process.stdout.write(`session-memory: ${rows.join(' | ')} | target engine <= 1024 B/session: ${worst <= 1024 ? 'PASS' : 'FAIL'}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error).stack ?? err) + '\n');
  process.exit(1);
});
