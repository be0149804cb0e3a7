import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { EventLog } from '../engine/events/event-log.js';
import { keys, WEBHOOK_GROUP } from '../engine/redis/keys.js';
import { defineScripts } from '../engine/redis/scripts.js';

/**
 * Scenario: the webhook queue's scripts alone, as the dispatcher calls them,
 * against a Redis the caller names (BENCH_REDIS_URL; loopback only). Each
 * round writes the events of BENCH_SIGNINS sign-ins (default 40; four events
 * each, as a voucher sign-in writes: session.start, voucher.redeemed,
 * device.new, auth.success), one subscription wanting session.start, then
 * makes the deliveries claimed two ways, alternating by round:
 *   - route, then claim: route-webhook-events-5.lua claiming none, then
 *     claim-webhook-deliveries-6.lua (the dispatcher before cfe489e);
 *   - route claiming: route-webhook-events-5.lua claiming what it makes.
 * Reports Redis's own time (commandstats, evalsha) per delivery for each way,
 * route and claim; each round is then settled (settle-webhook-deliveries-n.lua,
 * a 2xx each, its time reported apart) and the stream emptied.
 * BENCH_ROUNDS rounds a way (default 300). The A/B of a change inside these
 * scripts, free of the service's and the machine's noise
 * (bench/results/webhooks.md). Its keys go to a fresh tenant, deleted after.
 */
const URL = process.env.BENCH_REDIS_URL;
if (!URL || !/^redis:\/\/(127\.0\.0\.1|localhost)[:/]/.test(URL)) throw new Error('BENCH_REDIS_URL=redis://127.0.0.1:<port>/<db> (loopback only)');
const SIGNINS = Number(process.env.BENCH_SIGNINS ?? 40);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 300);
const LEASE_MS = 15_000;
const DAY = 86_400_000;

const SESSION = {
  session_id: `sess_${'x'.repeat(20)}`, hotspot_id: 'hs_abcdefghijklmnop', mac: 'AA:BB:CC:DD:EE:FF', ip: '10.1.2.3', method: 'voucher',
  user: 'guest', ssid: 'Guest', started_at: new Date(0).toISOString(), expires_at: new Date(0).toISOString(), profile: 'default',
  down_kbps: 10_000, up_kbps: 5_000,
};

async function main(): Promise<void> {
  const redis = new Redis(URL!);
  defineScripts(redis);
  const t = `tn_bench${randomBytes(5).toString('hex')}`;
  const K = {
    ev: keys.events(t), subs: keys.webhookSubs(t), q: keys.webhookQueue(t), d: keys.webhookDeliveries(t), b: keys.webhookBodies(t),
    done: keys.webhookDone(t), dead: keys.webhookDead(t), att: keys.webhookAttempts(t, 'whk_bench'),
  };
  await redis.addWebhookV1(K.subs, K.ev, 'whk_bench', 'session.start', WEBHOOK_GROUP);
  const log = new EventLog(redis);
  const evalsha = async (): Promise<number> => Number(/cmdstat_evalsha:calls=\d+,usec=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
  const spent = { two: { us: 0, deliveries: 0 }, one: { us: 0, deliveries: 0 } };
  const settled = { us: 0, deliveries: 0 };

  for (let round = 0; round < 2 * ROUNDS + 2; round++) {
    for (let i = 0; i < SIGNINS; i++) {
      await log.append(t, 'session.start', 'hs_bench', SESSION);
      await log.append(t, 'voucher.redeemed', 'hs_bench', { voucher_id: 'vch_bench', code: 'BENCHCODE' });
      await log.append(t, 'device.new', 'hs_bench', { mac: SESSION.mac });
      await log.append(t, 'auth.success', 'hs_bench', { hotspot_id: 'hs_bench', method: 'voucher', source: 'portal', mac: SESSION.mac });
    }
    const way = round % 2 === 0 ? 'two' : 'one';
    const now = Date.now();
    const token = `tok${round}`;
    const before = await evalsha();
    let claimed: string[];
    if (way === 'one') {
      claimed = (await redis.routeWebhookEventsV2(K.ev, K.subs, K.q, K.d, K.b, WEBHOOK_GROUP, 500, now, 2 * SIGNINS, LEASE_MS, token)).slice(3) as string[];
    } else {
      await redis.routeWebhookEventsV2(K.ev, K.subs, K.q, K.d, K.b, WEBHOOK_GROUP, 500, now, 0, 0, '');
      claimed = await redis.claimWebhookDeliveriesV1(K.q, K.d, K.b, K.done, K.dead, K.subs, now, LEASE_MS, 2 * SIGNINS, token, 3, DAY);
    }
    const us = (await evalsha()) - before;
    const ids = claimed.filter((_, i) => i % 3 === 0);
    if (ids.length !== SIGNINS) throw new Error(`round ${round}: ${ids.length} claimed of ${SIGNINS}`);
    // The first round of each way warms the scripts up: not counted.
    if (round >= 2) {
      spent[way].us += us;
      spent[way].deliveries += ids.length;
    }
    const beforeSettle = await evalsha();
    await redis.settleWebhookDeliveriesV1(5 + ids.length, K.q, K.d, K.b, K.done, K.dead, ...ids.map(() => K.att), now, DAY, DAY, 1000,
      ...ids.flatMap((id) => [id, token, 'delivered', 0, '200', 3, '']));
    if (round >= 2) {
      settled.us += (await evalsha()) - beforeSettle;
      settled.deliveries += ids.length;
    }
    await redis.xtrim(K.ev, 'MAXLEN', 0);
  }
  const per = (w: { us: number; deliveries: number }): string => (w.us / Math.max(1, w.deliveries)).toFixed(1);
  process.stdout.write(`webhook-scripts: ${spent.one.deliveries} deliveries a way | Redis script µs per delivery, route and claim: route then claim ${per(spent.two)}, route claiming ${per(spent.one)} (${(spent.one.us / spent.two.us).toFixed(2)} of it); settle ${per(settled)}\n`);
  await redis.del(...Object.values(K));
  redis.disconnect();
}

main().catch((e: unknown) => { process.stderr.write(`${String(e)}\n`); process.exit(1); });
