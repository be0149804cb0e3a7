import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, inject } from 'vitest';
import { createLogger } from '../../engine/index.js';
import { Metrics } from '../../engine/metrics.js';
import { deadLetter } from '../../engine/store/dead-letters.js';
import type { StreamRecord } from '../../engine/store/outbox-reader.js';
import { deadLettersBetween, OutboxSink } from '../../engine/store/outbox-sink.js';
import { keys, mac, poolTest as test, until } from '../support/fixture.js';

/**
 * Parts of the outbox sink seen on their own: the lanes, and the dead letters
 * as the daily summary reads them.
 */
describe('outbox sink', () => {
  let redis: Redis;
  let pool: pg.Pool;
  test.beforeAll(({ redis: r, pool: p }) => { redis = r; pool = p; });

  // Waiting session ends (session_ends_early) belong to no lane: lane 0 applies them whatever
  // tenants hash to it, also when none does (one tenant, half the time).
  test('applies waiting ends though no tenant stream is on lane 0', async () => {
    // An end parked before its start, the start stored since. The parked row is held locked, so a
    // sink applying it waits on the lock where it can be seen: this sink's connections carry a name
    // of their own. (Other files' services apply waiting ends too; only a wait of ours counts.)
    const tenant = `tn_lane0${randomBytes(4).toString('hex')}`;
    const sid = `sess_${randomBytes(8).toString('hex')}`;
    const name = `test-lane0-${process.pid}`;
    await pool.query(`INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, started_at, ends_at)
      VALUES ($1, $2, 'hs_lane0', $3, 'voucher', now(), now() + interval '1 hour')`, [sid, tenant, mac(1, 0x1a)]);
    await pool.query(`INSERT INTO session_ends_early (id, tenant_id, ended_at, end_reason, bytes_in, bytes_out)
      VALUES ($1, $2, now(), 'idle_timeout', 10, 20)`, [sid, tenant]);
    const locker = new pg.Client(inject('databaseUrl'));
    const own = new pg.Pool({ connectionString: inject('databaseUrl'), max: 2, application_name: name });
    await locker.connect();
    const sink = new OutboxSink(redis, own, async () => [], `test-lanes-${process.pid}`, createLogger('silent'), new Metrics());
    try {
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM session_ends_early WHERE id = $1 FOR UPDATE', [sid]);
      sink.start();
      const waiting = async (): Promise<number> => (await pool.query(
        "SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", [name])).rowCount ?? 0;
      await until(async () => (await waiting()) > 0, { timeoutMs: 5_000, what: "this sink waiting on the parked end's lock" });
      await locker.query('ROLLBACK');
      await until(async () => (await pool.query('SELECT end_reason FROM sessions WHERE id = $1', [sid])).rows[0]?.end_reason === 'idle_timeout',
        { timeoutMs: 5_000, what: 'the parked end applied' });
    } finally {
      await locker.end();
      await sink.stop();
      await own.end();
      await pool.query('DELETE FROM sessions WHERE id = $1', [sid]);
    }
  });
  test("dead letters belong to the day their record was queued, not the day Postgres refused it", async () => {
    const tenant = `tn_dl${Date.now().toString(36)}`;
    const day = Date.parse('2026-11-20T00:00:00Z');
    const key = keys.outboxDead(tenant);
    // Queued at 23:59:59 on the 20th, refused after midnight; queued and refused on the 21st.
    await redis.xadd(key, `${day + 86_400_000 + 5_000}-0`, 'stream_id', `${day + 86_399_000}-0`, 'type', 'voucher_use', 'sid', 'sess_a', 'hs', 'hs_1', 'error', 'x');
    await redis.xadd(key, `${day + 86_400_000 + 9_000}-0`, 'stream_id', `${day + 86_400_000 + 8_000}-0`, 'type', 'session_end', 'sid', 'sess_b', 'hs', 'hs_1', 'error', 'y');
    const ids = async (from: number) => (await deadLettersBetween(redis, tenant, from, from + 86_400_000)).map((d) => d.sessionId);
    expect(await ids(day)).toEqual(['sess_a']);
    expect(await ids(day + 86_400_000)).toEqual(['sess_b']);
    await redis.del(key);
  });
  test('a record dead-lettered twice (a batch written again after another slot failed) reads once', async () => {
    const tenant = `tn_dl2${Date.now().toString(36)}`;
    const queued = Date.now() - 60_000;
    const record = (sid: string, n: number): StreamRecord =>
      ({ key: keys.outbox(tenant), id: `${queued + n}-0`, f: { type: 'session_start', sid, hs: 'hs_1' }, error: 'refused' }) as StreamRecord;
    await deadLetter(redis, [record('sess_a', 0), record('sess_b', 1)]);
    await deadLetter(redis, [record('sess_a', 0), record('sess_b', 1)]); // the same records, read again
    expect(await redis.xlen(keys.outboxDead(tenant))).toBe(4);
    expect((await deadLettersBetween(redis, tenant, queued - 1, queued + 10)).map((d) => d.sessionId)).toEqual(['sess_a', 'sess_b']);
    await redis.del(keys.outboxDead(tenant));
  });

  /**
   * A consumer that stopped with entries read and not stored (a crash, a failed batch) must store
   * them before anything newer of their tenants, whatever the number of tenants: here more than
   * one read command takes, and one tenant whose group is missing (a Redis that lost it) sits
   * among tenants with entries pending.
   */
  test("after a restart, every tenant's pending records are stored before its new ones, in stream order", async () => {
    const run = `ord${Date.now().toString(36)}`;
    const tenants = Array.from({ length: 1100 }, (_, i) => `tn_${run}${String(i).padStart(4, '0')}`);
    const key = keys.outbox;
    const consumer = `test-order-${process.pid}`;
    const lost = tenants[1]!; // taken with tenants[0] (round robin, two a lane): no group, no stream
    const now = Date.now();
    for (let i = 0; i < tenants.length; i += 100) {
      const p = redis.pipeline();
      for (const t of tenants.slice(i, i + 100)) {
        if (t === lost) continue;
        p.xgroup('CREATE', key(t), 'pg-sink', '0', 'MKSTREAM');
        for (let n = 0; n < 12; n++) {
          p.xadd(key(t), '*', 'type', 'audit', 'rid', `aud_${t}_${n}`, 'event', 'test_order', 'at', String(now + n), 'details', `{"n":${n}}`, 'by', 'test');
        }
      }
      await p.exec();
    }
    // The previous run of this consumer read the first four of each and stored none.
    const others = tenants.filter((t) => t !== lost);
    for (let i = 0; i < others.length; i += 256) {
      const chunk = others.slice(i, i + 256).map(key);
      await redis.xreadgroup('GROUP', 'pg-sink', consumer, 'COUNT', 4, 'STREAMS', ...chunk, ...chunk.map(() => '>'));
    }
    await redis.xadd(key(lost), '*', 'type', 'audit', 'rid', `aud_${lost}_0`, 'event', 'test_order', 'at', String(now), 'details', '{"n":0}', 'by', 'test');
    const sink = new OutboxSink(redis, pool, async () => tenants, consumer, createLogger('silent'), new Metrics());
    sink.start();
    try {
      const stored = async () => Number((await pool.query('SELECT count(*) AS n FROM audit_records WHERE tenant_id = ANY($1)', [tenants])).rows[0].n);
      await until(async () => (await stored()) === others.length * 12 + 1, { timeoutMs: 60_000, seen: stored });
    } finally {
      await sink.stop();
    }
    // Well within CLAIM_IDLE_MS (10 s): the pending entries were read as this consumer's own, not claimed late.
    const { rows } = await pool.query<{ tenant_id: string; ns: number[] }>(
      `SELECT tenant_id, array_agg((details->>'n')::int ORDER BY seq) AS ns FROM audit_records WHERE tenant_id = ANY($1) GROUP BY tenant_id`, [tenants]);
    const outOfOrder = rows.filter((r) => r.ns.some((n, i) => n !== i)).map((r) => `${r.tenant_id}: ${r.ns.join(',')}`);
    expect(outOfOrder).toEqual([]);
    expect(rows.length).toBe(tenants.length);
    const p = redis.pipeline();
    for (const t of tenants) p.del(key(t));
    await p.exec();
  }, 90_000);

  /** A tenant's stream with `n` operator records numbered from `from` (their details say which). */
  async function queue(tenant: string, from: number, n: number): Promise<void> {
    const p = redis.pipeline();
    for (let i = from; i < from + n; i++) {
      p.xadd(keys.outbox(tenant), '*', 'type', 'audit', 'rid', `aud_${tenant}_${i}`, 'event', 'test_order', 'at', String(Date.now()), 'details', `{"n":${i}}`, 'by', 'test');
    }
    await p.exec();
  }
  const chainOrder = async (tenant: string): Promise<number[]> =>
    (await pool.query<{ n: number }>(`SELECT (details->>'n')::int AS n FROM audit_records WHERE tenant_id = $1 ORDER BY seq`, [tenant])).rows.map((r) => r.n);

  test("entries claimed from a dead consumer go into the chain before this consumer's newer pending ones", async () => {
    const tenant = `tn_claim${Date.now().toString(36)}`;
    const key = keys.outbox(tenant);
    const consumer = `test-claim-${process.pid}`;
    await redis.xgroup('CREATE', key, 'pg-sink', '0', 'MKSTREAM');
    await queue(tenant, 0, 4);
    const dead = (await redis.xreadgroup('GROUP', 'pg-sink', 'dead-consumer', 'COUNT', 4, 'STREAMS', key, '>')) as [string, [string, string[]][]][];
    // Long idle, as a consumer that died a while ago.
    await redis.xclaim(key, 'pg-sink', 'dead-consumer', 0, ...dead[0]![1].map(([id]) => id), 'IDLE', 60_000);
    await queue(tenant, 4, 4);
    await redis.xreadgroup('GROUP', 'pg-sink', consumer, 'COUNT', 4, 'STREAMS', key, '>'); // ours, read and never stored
    await queue(tenant, 8, 4);
    const sink = new OutboxSink(redis, pool, async () => [tenant], consumer, createLogger('silent'), new Metrics());
    sink.start();
    try {
      await until(async () => (await chainOrder(tenant)).length === 12, { timeoutMs: 10_000 });
    } finally {
      await sink.stop();
    }
    expect(await chainOrder(tenant)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    await redis.del(key);
  });

  /**
   * The linger belongs to the tenant, not the lane: while the lane that drained a tenant waits, no
   * other lane reads its stream. Four lanes each polling one tenant read it about 80 times a second
   * when idle (64 here) and wrote a trickle as a transaction every 25-50 ms (34 in this test's first
   * form, 100 records in a second); held by one lane, about 20 reads a second and a transaction per
   * linger. The bounds leave room for a slow machine to do fewer, none for the lanes to share the
   * tenant again. (A lane that read ahead after a small batch chained small transactions while
   * records kept arriving; that shows only when writes are slow, as in bench/stadium-storm: 142
   * transactions in 10 s at 100 sign-ins/s against 82.)
   */
  test('one tenant is read by one lane at a time, through its linger: few reads when idle, a trickle in few transactions', async () => {
    const tenant = `tn_linger${Date.now().toString(36)}`;
    const key = keys.outbox(tenant);
    await redis.xgroup('CREATE', key, 'pg-sink', '0', 'MKSTREAM');
    const own = new Redis(inject('redisUrl'));
    let reads = 0;
    const read = own.xreadgroup.bind(own) as (...args: unknown[]) => Promise<unknown>;
    (own as unknown as { xreadgroup: (...args: unknown[]) => Promise<unknown> }).xreadgroup = async (...args: unknown[]) => {
      reads++;
      return read(...args);
    };
    // Every cycle of every lane asks for the tenants first: the lanes' wake-ups.
    let cycles = 0;
    const sink = new OutboxSink(own, pool, async () => { cycles++; return [tenant]; }, `test-linger-${process.pid}`, createLogger('silent'), new Metrics());
    sink.start();
    try {
      await new Promise((r) => setTimeout(r, 300));
      const [readsFrom, cyclesFrom] = [reads, cycles];
      const idleStart = performance.now();
      await new Promise((r) => setTimeout(r, 1_000));
      const idleSeconds = (performance.now() - idleStart) / 1000;
      const idlePerSecond = (reads - readsFrom) / idleSeconds;
      expect(idlePerSecond).toBeGreaterThan(0);
      expect(idlePerSecond).toBeLessThanOrEqual(30);
      // One lane holds the one tenant and polls it (20 a second); the three with nothing to take back
      // off to a second, not wake 20 times a second each (78 in all, before). About 24 measured; the
      // bound leaves room for the tenant changing lanes once or twice, which restarts a back-off.
      expect((cycles - cyclesFrom) / idleSeconds).toBeLessThanOrEqual(40);

      // About 1,000 records a second for half a second, a few at a time, as sign-ins arrive: records
      // keep arriving while a batch is written, and are gathered, not written as a chain of small batches.
      const trickleFrom = performance.now();
      for (let i = 0; i < 500; i += 5) {
        await queue(tenant, i, 5);
        await new Promise((r) => setTimeout(r, 5));
      }
      // A transaction per linger (100 ms) while it lasts, one for what came last, and room for a batch
      // cut short; a slow machine stretches the trickle, and the bound with it.
      const atMost = Math.ceil((performance.now() - trickleFrom) / 100) + 3;
      await until(async () => (await chainOrder(tenant)).length === 500, { timeoutMs: 10_000 });
      const { rows } = await pool.query<{ n: number }>('SELECT count(DISTINCT xmin::text)::int AS n FROM audit_records WHERE tenant_id = $1', [tenant]);
      expect(rows[0]!.n).toBeGreaterThan(0);
      expect(rows[0]!.n).toBeLessThanOrEqual(atMost);
      expect(await chainOrder(tenant)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    } finally {
      await sink.stop();
      own.disconnect();
    }
    await redis.del(key);
  });

  test('a read ahead that fails while its batch is in Postgres is a failed batch, retried, not a crash; the lag then reads 0', async () => {
    const tenant = `tn_ahead${Date.now().toString(36)}`;
    const key = keys.outbox(tenant);
    await redis.xgroup('CREATE', key, 'pg-sink', '0', 'MKSTREAM');
    await queue(tenant, 0, 4500); // more than two batches: the lane reads ahead
    const own = new Redis(inject('redisUrl'));
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => { unhandled.push(err); };
    process.on('unhandledRejection', onUnhandled);
    // The second read of new entries (the first read ahead) fails, as a Redis fail-over would make it.
    let newReads = 0;
    const read = own.xreadgroup.bind(own) as (...args: unknown[]) => Promise<unknown>;
    (own as unknown as { xreadgroup: (...args: unknown[]) => Promise<unknown> }).xreadgroup = async (...args: unknown[]) => {
      if (args[args.length - 1] === '>' && ++newReads === 2) {
        await new Promise((r) => setTimeout(r, 5));
        throw new Error('READONLY You can\'t write against a read only replica.');
      }
      return read(...args);
    };
    const metrics = new Metrics();
    const sink = new OutboxSink(own, pool, async () => [tenant], `test-ahead-${process.pid}`, createLogger('silent'), metrics);
    sink.start();
    try {
      await until(async () => (await chainOrder(tenant)).length === 4500, { timeoutMs: 20_000 });
      expect(await chainOrder(tenant)).toEqual(Array.from({ length: 4500 }, (_, i) => i));
      expect(metrics.value('outbox_sink_errors_total')).toBeGreaterThanOrEqual(1);
      await until(async () => sink.oldestPendingMs === 0, { timeoutMs: 1_000, seen: () => sink.oldestPendingMs });
    } finally {
      await sink.stop();
      process.off('unhandledRejection', onUnhandled);
      own.disconnect();
    }
    expect(unhandled).toEqual([]);
    await redis.del(key);
  }, 30_000);
});
