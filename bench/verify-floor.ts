import { isMainThread, Worker, workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { copyField, copyInto, copyLine, copyText } from '../engine/store/postgres.js';
import { GENESIS, link } from '../engine/audit/chain.js';
import { partitionName } from '../engine/audit/chain-writer.js';
import { keys } from '../engine/redis/keys.js';
import { newId, normalizeMac } from '../engine/ids.js';
import { isoTime } from '../engine/util/iso-time.js';
import { formatAddress } from '../http/client-address.js';
import { loadUws } from '../http/uws.js';
import { floorEvents, type WebhookFloorEnv } from './webhook-floor.js';

/**
 * The floor of bench/portal-verify.ts: the least code that does the durable
 * work a portal voucher verify must do, so the service's verify can be read
 * as a ratio of it (issue 22, item 3). Honest both ways:
 *
 * - What it does, as the service does it: a bare uWebSockets.js server (the
 *   service's binary) reading the POST body, parsing the JSON, checking its
 *   three fields and normalising the MAC; ONE script call per verify that
 *   checks the voucher (exists, expiry, uses left), raises its use counter,
 *   writes the session hash a NAS's Access-Request is answered from, adds the
 *   session to the hotspot's live set (the time-out sweep) and queues the
 *   session-start record on a stream, all atomically (a voucher never overused;
 *   no answer before the record is queued); the service's JSON answer. A sink
 *   on a thread of its own reads the stream through a consumer group, COPYs a
 *   `sessions` row and a hash-chained `audit_records` row per verify into the
 *   same tables in one transaction (the chain's head moved with them), then
 *   acknowledges and deletes the entries; the same batching rule as the
 *   service's sink (a cycle under 300 records waits 100 ms).
 * - What it leaves out, each a feature of the service with its cost named in
 *   bench/results/portal-verify.md: the guessing limits and the block list,
 *   the Redis-restart guard (run_id), the same device getting its session back
 *   (the voucher's device hash), the session ref (lookup by id), device.new,
 *   the domain events (session.start, voucher.redeemed, auth.success) and the
 *   dashboard's counters and decision list, the report rollups and the voucher
 *   counter in Postgres, the router's generic work (schemas, traffic limits,
 *   request id, metrics), terms, hand-back and form posts.
 *
 * Run as its own process: `node dist/bench/verify-floor.js`, with REDIS_URL,
 * DATABASE_URL, FLOOR_TENANT, FLOOR_HOTSPOT (the one hotspot it answers for),
 * FLOOR_MINUTES (session length when the voucher sets none), FLOOR_PORT (0);
 * and for bench/webhooks.ts FLOOR_WEBHOOK_URL and FLOOR_WEBHOOK_SECRET: each
 * sign-in's script also writes its session.start event, and a thread
 * delivers them (webhook-floor.ts).
 * Prints `{"ready":true,"port":N}`; stops on SIGTERM.
 * Its stream is `{t:<tenant>}:floor-outbox`, never the tenant's outbox (the
 * service's sink would drain that one).
 */

const PATH = '/api/v1/hotspot-portal/voucher/verify';
const GROUP = 'floor';

/**
 * KEYS[1] voucher hash, KEYS[2] grant hash, KEYS[3] the hotspot's live zset, KEYS[4] the floor's outbox stream,
 * KEYS[5] the floor's event stream (written only when ARGV[9] is '1').
 * ARGV: now ms, MAC, hotspot, ip, ssid, new session id, default minutes, tenant, events.
 * Returns {'ok', sid, until, uses, max} | {'not_found'} | {'expired', exp} | {'exhausted', max, uses}.
 */
const USE_LUA = `
local v = redis.call('HMGET', KEYS[1], 'id', 'max', 'uses', 'exp', 'dur', 'down', 'up', 'quota', 'code')
if not v[1] then return {'not_found'} end
local now = tonumber(ARGV[1])
local exp = tonumber(v[4])
if exp > 0 and now >= exp then return {'expired', v[4]} end
local max = tonumber(v[2])
if max >= 0 and tonumber(v[3]) >= max then return {'exhausted', max, v[3]} end
local uses = redis.call('HINCRBY', KEYS[1], 'uses', 1)
local dur = tonumber(v[5])
if dur <= 0 then dur = tonumber(ARGV[7]) end
local untilMs = now + dur * 60000
redis.call('HSET', KEYS[2], 'sid', ARGV[6], 'until', untilMs, 'vid', v[1], 'down', v[6], 'up', v[7], 'quota', v[8], 'created', now)
redis.call('ZADD', KEYS[3], untilMs, ARGV[6])
redis.call('XADD', KEYS[4], '*', 'rec', cjson.encode({sid = ARGV[6], t = ARGV[8], hs = ARGV[3], mac = ARGV[2], ip = ARGV[4],
  ssid = ARGV[5], at = ARGV[1], ['until'] = tostring(untilMs), user = v[9], vid = v[1]}))
if ARGV[9] == '1' then
  redis.call('XADD', KEYS[5], '*', 'type', 'session.start', 'ts', ARGV[1], 'site', ARGV[3],
    'data', cjson.encode({session_id = ARGV[6], mac = ARGV[2], method = 'voucher', hotspot_id = ARGV[3]}))
end
return {'ok', ARGV[6], tostring(untilMs), uses, max}
`;

interface FloorRedis extends Redis {
  floorUse(...args: (string | number)[]): Promise<unknown[]>;
}

interface FloorEnv {
  redisUrl: string; databaseUrl: string; tenant: string; hotspot: string; minutes: number;
  /** FLOOR_WEBHOOK_URL and FLOOR_WEBHOOK_SECRET: sign-ins write a session.start event, delivered by webhook-floor.ts. */
  webhook: { url: string; secret: string } | null;
}

/** The floor's outbox stream (its sink's input). */
export const floorOutbox = (tenant: string): string => `{t:${tenant}}:floor-outbox`;

function floorRedis(url: string): FloorRedis {
  const redis = new Redis(url, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
  redis.defineCommand('floorUse', { numberOfKeys: 5, lua: USE_LUA });
  return redis as FloorRedis;
}

const STATUS: Record<number, string> = { 200: '200 OK', 400: '400 Bad Request', 404: '404 Not Found', 409: '409 Conflict', 410: '410 Gone', 503: '503 Service Unavailable' };

function server(env: FloorEnv, port: number): Promise<number> {
  const uws = loadUws();
  const redis = floorRedis(env.redisUrl);
  const live = keys.live(env.tenant, env.hotspot);
  const out = floorOutbox(env.tenant);
  const events = floorEvents(env.tenant);
  const app = uws.App();
  app.post(PATH, (res) => {
    let aborted = false;
    res.onAborted(() => { aborted = true; });
    const peer = formatAddress(new Uint8Array(res.getRemoteAddress()));
    const chunks: Buffer[] = [];
    const reply = (status: number, body: unknown): void => {
      if (aborted) return;
      res.cork(() => { res.writeStatus(STATUS[status]!).writeHeader('content-type', 'application/json').end(JSON.stringify(body)); });
    };
    res.onData((ab, isLast) => {
      chunks.push(Buffer.from(ab.slice(0)));
      if (!isLast) return;
      let b: Record<string, unknown>;
      try {
        b = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return reply(400, { error: 'invalid_json', message: 'The body is not JSON' });
      }
      const mac = typeof b.mac === 'string' ? normalizeMac(b.mac) : null;
      if (typeof b.code !== 'string' || b.code === '' || !mac) return reply(400, { error: 'validation_failed', message: 'code and mac are required' });
      if (b.hotspot_id !== env.hotspot) return reply(404, { error: 'hotspot_not_found', message: 'No such hotspot' });
      const ip = typeof b.ip === 'string' ? b.ip : peer;
      const ssid = typeof b.ssid === 'string' ? b.ssid : '';
      const now = Date.now();
      redis.floorUse(keys.voucher(env.tenant, b.code), keys.grant(env.tenant, env.hotspot, mac), live, out, events,
        now, mac, env.hotspot, ip, ssid, newId('sess_'), env.minutes, env.tenant, env.webhook ? '1' : '0').then((a) => {
        switch (String(a[0])) {
          case 'ok': {
            const max = Number(a[4]);
            return reply(200, {
              status: 'authorized', session_id: String(a[1]), expires_at: new Date(Number(a[2])).toISOString(),
              uses_left: max < 0 ? null : max - Number(a[3]), redirect_url: null,
            });
          }
          case 'expired': return reply(410, { error: 'voucher_expired', message: 'The voucher has expired' });
          case 'exhausted': return reply(409, { error: 'voucher_exhausted', message: 'The voucher is used up' });
          default: return reply(404, { error: 'voucher_not_found', message: 'No such voucher' });
        }
      }, () => reply(503, { error: 'service_unavailable', message: 'Voucher store' }));
    });
  });
  app.any('/*', (res) => {
    res.cork(() => { res.writeStatus('404 Not Found').writeHeader('content-type', 'application/json').end('{"error":"not_found"}'); });
  });
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', port, (socket) => {
      if (!socket) return reject(new Error(`the floor cannot listen on port ${port}`));
      resolve(uws.us_socket_local_port(socket as never));
    });
  });
}

const SESSION_COLUMNS = ['id', 'tenant_id', 'hotspot_id', 'mac', 'ip', 'username', 'auth_method', 'ssid', 'voucher_id', 'started_at', 'ends_at'];
const AUDIT_COLUMNS = ['tenant_id', 'seq', 'id', 'event_type', 'ts', 'session_id', 'mac_address', 'ip_address', 'username',
  'auth_method', 'ssid', 'hotspot_id', 'details', 'prev_hash', 'hash_chain_value', 'day'];
const LINGER_BELOW = 300;
const LINGER_MS = 100;

interface StartRecord { sid: string; t: string; hs: string; mac: string; ip: string; ssid: string; at: string; until: string; user: string; vid: string }

/** The floor's sink: the stream into `sessions` and the tenant's audit chain, a batch a transaction. */
async function sink(env: FloorEnv): Promise<void> {
  const redis = new Redis(env.redisUrl, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
  const db = new pg.Client({ connectionString: env.databaseUrl });
  await db.connect();
  const key = floorOutbox(env.tenant);
  await redis.xgroup('CREATE', key, GROUP, '0', 'MKSTREAM').catch(() => undefined);
  await db.query('INSERT INTO audit_chain_heads (tenant_id, seq, hash) VALUES ($1, 0, $2) ON CONFLICT DO NOTHING', [env.tenant, GENESIS]);
  const head = (await db.query<{ seq: string; hash: string }>('SELECT seq, hash FROM audit_chain_heads WHERE tenant_id = $1', [env.tenant])).rows[0]!;
  let seq = Number(head.seq);
  let prev = head.hash;
  const days = new Set<string>();
  for (;;) {
    const reply = (await redis.xreadgroup('GROUP', GROUP, 'c', 'COUNT', 2000, 'BLOCK', 100, 'STREAMS', key, '>')) as [string, [string, string[]][]][] | null;
    const entries = reply?.[0]?.[1] ?? [];
    if (entries.length === 0) continue;
    const sessions: string[] = [];
    const audit: string[] = [];
    let s0 = seq, p0 = prev, day = '';
    for (const [, fields] of entries) {
      const r = JSON.parse(fields[1]!) as StartRecord;
      const started = isoTime(Number(r.at));
      sessions.push(copyLine([copyField(r.sid), copyField(r.t), copyField(r.hs), copyField(r.mac), copyField(r.ip || null), copyField(r.user || null),
        'voucher', copyField(r.ssid || null), copyField(r.vid), started, isoTime(Number(r.until))]));
      day = started.slice(0, 10);
      if (!days.has(day)) {
        const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
        await db.query(`CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF audit_records FOR VALUES FROM ('${day}') TO ('${next}')`)
          .catch((err: { code?: string }) => { if (err.code !== '42P07' && err.code !== '23505') throw err; });
        days.add(day);
      }
      const details = { until: isoTime(Number(r.until)), voucher_id: r.vid };
      s0++;
      const hash = link(p0, {
        tenant_id: r.t, seq: s0, event_type: 'session_start', timestamp: started, session_id: r.sid, mac_address: r.mac, ip_address: r.ip,
        username: r.user, auth_method: 'voucher', ssid: r.ssid, hotspot_id: r.hs, details,
      });
      audit.push(copyLine([copyField(r.t), s0, copyField(`${r.sid}:start`), 'session_start', started, copyField(r.sid), copyField(r.mac),
        copyField(r.ip || null), copyField(r.user || null), 'voucher', copyField(r.ssid || null), copyField(r.hs), copyField(JSON.stringify(details)),
        p0, hash, day]));
      p0 = hash;
    }
    await db.query('BEGIN');
    try {
      await copyInto(db as unknown as Parameters<typeof copyInto>[0], 'sessions', SESSION_COLUMNS, copyText(sessions));
      await copyInto(db as unknown as Parameters<typeof copyInto>[0], 'audit_records', AUDIT_COLUMNS, copyText(audit));
      await db.query('UPDATE audit_chain_heads SET seq = $2, hash = $3, day = $4, updated_at = now() WHERE tenant_id = $1', [env.tenant, s0, p0, day]);
      await db.query('COMMIT');
    } catch (err) {
      await db.query('ROLLBACK');
      throw err;
    }
    seq = s0;
    prev = p0;
    const ids = entries.map(([id]) => id);
    await Promise.all([redis.xack(key, GROUP, ...ids), redis.xdel(key, ...ids)]);
    if (entries.length < LINGER_BELOW) await new Promise((r) => setTimeout(r, LINGER_MS));
  }
}

if (!isMainThread) {
  sink(workerData as FloorEnv).catch((err: Error) => {
    process.stderr.write(`floor sink failed: ${err.stack ?? err.message}\n`);
    process.exit(1);
  });
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env: FloorEnv = {
    redisUrl: process.env.REDIS_URL!, databaseUrl: process.env.DATABASE_URL!, tenant: process.env.FLOOR_TENANT!,
    hotspot: process.env.FLOOR_HOTSPOT!, minutes: Number(process.env.FLOOR_MINUTES ?? 60),
    webhook: process.env.FLOOR_WEBHOOK_URL ? { url: process.env.FLOOR_WEBHOOK_URL, secret: process.env.FLOOR_WEBHOOK_SECRET ?? '' } : null,
  };
  const worker = new Worker(new URL(import.meta.url), { workerData: env });
  worker.once('error', (err) => { process.stderr.write(`floor sink failed: ${err.message}\n`); process.exit(1); });
  if (env.webhook) {
    const hooks: WebhookFloorEnv = { role: 'webhook-floor', redisUrl: env.redisUrl, tenant: env.tenant, ...env.webhook };
    new Worker(new URL('./webhook-floor.js', import.meta.url), { workerData: hooks })
      .once('error', (err) => { process.stderr.write(`webhook floor failed: ${err.message}\n`); process.exit(1); });
  }
  server(env, Number(process.env.FLOOR_PORT ?? 0)).then((port) => {
    const stop = (): void => { process.exit(0); };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
    process.stdout.write(JSON.stringify({ ready: true, port }) + '\n');
  }, (err: Error) => {
    process.stderr.write(`floor failed: ${err.message}\n`);
    process.exit(1);
  });
}
