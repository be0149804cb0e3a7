import pg from 'pg';
import { describe, expect, inject } from 'vitest';
import { daysToFile, PartitionCache } from '../../engine/audit/chain-writer.js';
import { applyWaiting, auditEntriesOf, writeOutbox, type OutboxRecord } from '../../engine/store/outbox-writer.js';
import { call, keys, mac, newTenant, type Running, serviceTest, until } from '../support/fixture.js';

const test = serviceTest();

/**
 * The outbox sink runs on a worker thread of its own. Ended in the middle of
 * a stream of sign-ins (as a crash would end it), it is started again, takes
 * back what it had read and not stored, and every session start lands in
 * Postgres exactly once; the process's metrics count the restart.
 */
describe('outbox sink thread', () => {
  let svc: Running;
  test.beforeAll(({ svc: s_ }) => { svc = s_; });

  const metric = async (name: string): Promise<number> =>
    Number(new RegExp(`^guestwifi_${name} (\\S+)$`, 'm').exec(await svc.service.engine.metrics.render())?.[1] ?? NaN);

  test('a killed sink thread restarts; every start record lands once, the chain is whole', async ({ svc, db, tenant: t }) => {
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'SINK-KILL', max_uses: null } })).status).toBe(201);
    const restarts = await metric('outbox_sink_restarts_total');

    const sids: string[] = [];
    const signIn = async (i: number): Promise<void> => {
      const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'SINK-KILL', mac: mac(i, 0x5a) } });
      expect(r.status).toBe(200);
      sids.push(r.body.session_id);
    };
    // Sign-ins before, during and after the kill: the portal never waits for the sink.
    let i = 0;
    const storm = (async () => {
      for (; i < 300; i += 10) {
        await Promise.all(Array.from({ length: 10 }, (_, k) => signIn(i + k)));
      }
    })();
    await until(async () => i >= 100, { timeoutMs: 10_000 });
    await svc.service.engine.sink.killThread();
    await storm;
    expect(sids).toHaveLength(300);

    await until(async () => await metric('outbox_sink_restarts_total') === restarts + 1, { timeoutMs: 5_000, seen: () => metric('outbox_sink_restarts_total') });
    await until(async () => {
      const { rows } = await db.query("SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start'", [t.tenantId]);
      return rows[0].n >= 300;
    }, { timeoutMs: 20_000 });
    const starts = await db.query(
      "SELECT count(*)::int AS n, count(DISTINCT session_id)::int AS d FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start' AND session_id = ANY($2)",
      [t.tenantId, sids]);
    expect(starts.rows[0]).toEqual({ n: 300, d: 300 });
    const rows = await db.query('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [t.tenantId]);
    expect(rows.rows[0].n).toBe(300);

    // Gap-free and linked: the tenant's chain verifies from its first record to the head.
    const verified = await svc.service.engine.audit.verify(t.tenantId);
    expect(verified).toMatchObject({ valid: true, first_break: null });
    expect(verified.records).toBeGreaterThanOrEqual(300);
    await until(async () => await metric('outbox_sink_lag_seconds') === 0, { timeoutMs: 10_000, seen: () => metric('outbox_sink_lag_seconds') });
  });

  test('a record Postgres refuses, or one that is no record, is moved to the dead-letter stream; the records around it land and the chain verifies', async ({ svc, redis, db, tenant: t }) => {
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'POISON-1', max_uses: null } })).status).toBe(201);
    const signIn = async (mac: string): Promise<string> => {
      const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'POISON-1', mac } });
      expect(r.status).toBe(200);
      return r.body.session_id;
    };
    const before = await signIn('5B:00:00:00:00:01');
    // A record no code of ours writes today: its time is not a number (a bug, a hand-edited stream). It is
    // in the shape entries had before the one `rec` field, a field pair per value: still read.
    const poisonId = await redis.xadd(keys.outbox(t.tenantId), '*', 'type', 'voucher_use', 'use', 'use_poison', 'vid', 'v_x',
      'hs', t.hotspotId, 'mac', '5B:00:00:00:00:02', 'ip', '', 'ssid', '', 'sid', 'sess_poison0000000', 'at', 'not-a-time', 'until', 'never',
      'user', 'POISON-1', 'method', 'voucher');
    // An entry that is no record at all, and one of a type no sink of this version knows.
    const unreadableId = await redis.xadd(keys.outbox(t.tenantId), '*', 'type', 'voucher_use', 'rec', '{"type":"voucher_use","sid":');
    const unknownId = await redis.xadd(keys.outbox(t.tenantId), '*', 'type', 'session_pause', 'sid', 'sess_pause000000000');
    const after = await Promise.all(['5B:00:00:00:00:03', '5B:00:00:00:00:04'].map(signIn));

    const landed = async (sid: string): Promise<boolean> => (await db.query('SELECT 1 FROM sessions WHERE id = $1', [sid])).rowCount === 1;
    await until(async () => (await landed(before)) && (await landed(after[0]!)) && (await landed(after[1]!)), { timeoutMs: 20_000 });
    expect(await landed('sess_poison0000000')).toBe(false);

    // Every test service's sink reads every tenant's stream, so any of them may be the one that moved it:
    // the dead-letter stream, not this process's counter, is what to look at.
    await until(async () => (await redis.xlen(keys.outboxDead(t.tenantId))) === 3, { timeoutMs: 10_000 });
    const letters = (await redis.xrange(keys.outboxDead(t.tenantId), '-', '+')).map(([, list]) => {
      const fields = new Map<string, string>();
      for (let i = 0; i < list.length; i += 2) fields.set(list[i]!, list[i + 1]!);
      return fields;
    });
    expect(letters).toHaveLength(3);
    const letter = (id: string | null) => letters.find((l) => l.get('stream_id') === id);
    const [fields, unreadable, unknown] = [letter(poisonId), letter(unreadableId), letter(unknownId)];
    expect(fields!.get('stream_id')).toBe(poisonId);
    expect(fields!.get('sid')).toBe('sess_poison0000000');
    expect(fields!.get('error')).toMatch(/invalid time|invalid input|NaN/i);
    expect(unreadable!.get('stream_id')).toBe(unreadableId);
    expect(unreadable!.get('error')).toMatch(/^unreadable outbox entry/);
    expect(unreadable!.get('unreadable')).toBe('type voucher_use rec {"type":"voucher_use","sid":');
    expect(unknown!.get('error')).toBe('unknown outbox record type "session_pause"');
    expect(unknown!.get('sid')).toBe('sess_pause000000000');
    // Taken out of the outbox: nothing is left pending or waiting.
    await until(async () => (await redis.xlen(keys.outbox(t.tenantId))) === 0, { timeoutMs: 5_000 });
    expect(await svc.service.engine.audit.verify(t.tenantId)).toMatchObject({ valid: true });
    const starts = await db.query("SELECT session_id FROM audit_records WHERE tenant_id = $1 AND event_type = 'session_start' ORDER BY seq", [t.tenantId]);
    expect(starts.rows).toHaveLength(3);

    // The day's 5651 summary names the record that is not in the chain.
    const day = new Date(Number(poisonId!.split('-')[0])).toISOString().slice(0, 10);
    const summary = await svc.service.engine.dailySummary.day(t.tenantId, day);
    expect(summary.totals.warnings).toContainEqual({
      code: 'record_dead_lettered', hotspot_id: t.hotspotId, session_id: 'sess_poison0000000', message: expect.stringContaining(poisonId!),
    });
    expect(new Set(starts.rows.map((r) => r.session_id))).toEqual(new Set([before, ...after]));
  });

  test('an end record whose byte counts are nonsense (a float in exponent form, a negative) is stored clamped, not refused', async ({ svc, redis, db, tenant: t }) => {
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'BYTES-1', max_uses: null } })).status).toBe(201);
    const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'BYTES-1', mac: '5C:00:00:00:00:01' } });
    expect(r.status).toBe(200);
    const sid: string = r.body.session_id;
    await redis.xadd(keys.outbox(t.tenantId), '*', 'type', 'session_end', 'sid', sid, 'hs', t.hotspotId, 'mac', '5C:00:00:00:00:01',
      'at', String(Date.now()), 'reason', 'user_request', 'bin', '1.8446744069414584e+19', 'bout', '-5', 'ip', '', 'ssid', '', 'user', 'BYTES-1', 'method', 'voucher', 'by', '');
    await until(async () => (await db.query("SELECT 1 FROM sessions WHERE id = $1 AND status = 'ended'", [sid])).rowCount === 1, { timeoutMs: 10_000 });
    const row = (await db.query('SELECT bytes_in::text, bytes_out::text FROM sessions WHERE id = $1', [sid])).rows[0];
    expect(row).toEqual({ bytes_in: String(Number.MAX_SAFE_INTEGER), bytes_out: '0' });
    const end = await db.query("SELECT details FROM audit_records WHERE session_id = $1 AND event_type = 'session_end'", [sid]);
    expect(end.rows[0].details).toMatchObject({ bytes_in: Number.MAX_SAFE_INTEGER, bytes_out: 0 });
    expect(await svc.service.engine.audit.verify(t.tenantId)).toMatchObject({ valid: true });
  });

  test("after storing uses, the sink raises a voucher's Redis counter that fell behind Postgres", async ({ svc, redis, db, tenant: t }) => {
    const v = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'RAISE-1', max_uses: 10 } });
    expect(v.status).toBe(201);
    const verify = (n: number) => call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'RAISE-1', mac: `5E:00:00:00:00:0${n}` } });
    for (let n = 1; n <= 3; n++) expect((await verify(n)).status).toBe(200);
    const pgUses = async (): Promise<number> => (await db.query('SELECT current_uses FROM vouchers WHERE id = $1', [v.body.id])).rows[0].current_uses;
    // Stored and acknowledged: the sink deletes a batch's entries only after its commit and its own raise of
    // the counters, so no raise of these three can land after the counter is lowered below.
    await until(async () => (await redis.xlen(keys.outbox(t.tenantId))) === 0, { timeoutMs: 5_000 });
    expect(await pgUses()).toBe(3);
    // As after a Redis restart reloaded from a Postgres the sink had not yet caught up with.
    await redis.hset(keys.voucher(t.tenantId, 'RAISE-1'), 'uses', 1);
    expect((await verify(4)).body.uses_left).toBe(8);
    await until(async () => (await pgUses()) === 4);
    await until(async () => (await redis.hget(keys.voucher(t.tenantId, 'RAISE-1'), 'uses')) === '4', { timeoutMs: 5_000 });
    expect((await verify(5)).body.uses_left).toBe(5);
  });

  test('an end stored before its start (another consumer was faster) is applied once the start is stored', async ({ svc, redis, db, tenant: t }) => {
    const sid = `sess_early${Date.now().toString(36)}`.slice(0, 21);
    const now = Date.now();
    const common = ['hs', t.hotspotId, 'mac', '5D:00:00:00:00:01', 'ip', '10.9.0.1', 'ssid', 'Hall', 'user', 'EARLY-1', 'method', 'voucher'];
    await redis.xadd(keys.outbox(t.tenantId), '*', 'type', 'session_end', 'sid', sid, 'at', String(now + 5_000), 'reason', 'user_request',
      'bin', '1234', 'bout', '567', 'by', '', ...common);
    await until(async () => (await db.query('SELECT 1 FROM session_ends_early WHERE id = $1', [sid])).rowCount === 1, { timeoutMs: 10_000 });
    await redis.xadd(keys.outbox(t.tenantId), '*', 'type', 'voucher_use', 'use', 'use_early', 'vid', 'v_none', 'sid', sid,
      'at', String(now), 'until', String(now + 3_600_000), ...common);
    // The sink's periodic pass applies the waiting end once the start is stored.
    await until(async () => (await db.query("SELECT 1 FROM sessions WHERE id = $1 AND ended_at IS NOT NULL", [sid])).rowCount === 1, { timeoutMs: 15_000 });
    const row = (await db.query('SELECT status, end_reason, bytes_in::int, bytes_out::int, ended_at FROM sessions WHERE id = $1', [sid])).rows[0];
    expect(row).toMatchObject({ status: 'ended', end_reason: 'user_request', bytes_in: 1234, bytes_out: 567 });
    expect(row.ended_at.getTime()).toBe(now + 5_000);
    expect((await db.query('SELECT 1 FROM session_ends_early WHERE id = $1', [sid])).rowCount).toBe(0);
    // Both records are in the chain, in the order they were stored, and it verifies.
    const recs = await db.query('SELECT event_type FROM audit_records WHERE tenant_id = $1 AND session_id = $2 ORDER BY seq', [t.tenantId, sid]);
    expect(recs.rows.map((r) => r.event_type)).toEqual(['session_end', 'session_start']);
    expect(await svc.service.engine.audit.verify(t.tenantId)).toMatchObject({ valid: true });

    // The race that leaves an end waiting though its start is stored (each consumer's transaction
    // missed the other's): the sink's periodic pass applies it.
    const sid2 = `${sid.slice(0, 18)}zz`;
    await redis.xadd(keys.outbox(t.tenantId), '*', 'type', 'voucher_use', 'use', 'use_raced', 'vid', 'v_none', 'sid', sid2,
      'at', String(now), 'until', String(now + 3_600_000), ...common);
    await until(async () => (await db.query('SELECT 1 FROM sessions WHERE id = $1', [sid2])).rowCount === 1, { timeoutMs: 10_000 });
    await db.query(`INSERT INTO session_ends_early (id, tenant_id, ended_at, end_reason, bytes_in, bytes_out)
      VALUES ($1, $2, to_timestamp($3 / 1000.0), 'idle_timeout', 10, 20)`, [sid2, t.tenantId, now + 9_000]);
    await until(async () => (await db.query("SELECT 1 FROM sessions WHERE id = $1 AND end_reason = 'idle_timeout'", [sid2])).rowCount === 1, { timeoutMs: 15_000 });
    expect((await db.query('SELECT 1 FROM session_ends_early WHERE id = $1', [sid2])).rowCount).toBe(0);
  });
  test("an end whose start another consumer commits between the end's two statements waits, and is applied", async ({ svc, db }) => {
    // The interleaving, forced with a table lock: the end's UPDATE runs while the start is
    // uncommitted (no row to end), the start commits, and only then does the end's second
    // statement take its snapshot. It must park the end, not take the open row for an ended one.
    const t = await newTenant(svc.service);
    const sid = `sess_${Date.now().toString(36)}race`.padEnd(21, '0').slice(0, 21);
    const url = inject('databaseUrl');
    const [starter, ender, locker] = [new pg.Client(url), new pg.Client(url), new pg.Client(url)];
    // writeOutbox takes a pool's client; this one is the test's own connection, which it never gives back.
    const enderTx: pg.PoolClient = Object.assign(ender, { release: () => {} });
    await Promise.all([starter.connect(), ender.connect(), locker.connect()]);
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE session_ends_early IN SHARE ROW EXCLUSIVE MODE');
      await starter.query('BEGIN');
      await starter.query(`INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, started_at, ends_at)
        VALUES ($1, $2, $3, '5D:00:00:00:00:02', 'voucher', now(), now() + interval '1 hour')`, [sid, t.tenantId, t.hotspotId]);
      const end = { type: 'session_end', sid, hs: t.hotspotId, mac: '5D:00:00:00:00:02', at: String(Date.now()),
        reason: 'blocked', bin: '10', bout: '20', ip: '', ssid: '', user: '', method: 'voucher', by: 'op' };
      const ending = (async () => {
        await ender.query('BEGIN');
        await writeOutbox(enderTx, [{ tenant: t.tenantId, f: end }], []);
        await ender.query('COMMIT');
      })();
      // The end's UPDATE found nothing; its INSERT now waits for the lock.
      await until(async () => (await db.query(
        "SELECT 1 FROM pg_locks WHERE relation = 'session_ends_early'::regclass AND NOT granted")).rowCount! > 0, { timeoutMs: 10_000 });
      await starter.query('COMMIT');
      await locker.query('COMMIT');
      await ending;
      // Parked (the sink's own periodic pass may apply it first: either way it must end).
      await applyWaiting(db);
      const row = (await db.query('SELECT status, end_reason, bytes_in::int, bytes_out::int FROM sessions WHERE id = $1', [sid])).rows[0];
      expect(row).toEqual({ status: 'disconnected', end_reason: 'blocked', bytes_in: 10, bytes_out: 20 });
      // A redelivery of the same end, now that it is applied, parks nothing.
      await writeOutbox(enderTx, [{ tenant: t.tenantId, f: end }], []);
      expect((await db.query('SELECT 1 FROM session_ends_early WHERE id = $1', [sid])).rowCount).toBe(0);
    } finally {
      await Promise.all([starter.end(), ender.end(), locker.end()]);
    }
  });
  test('a batch stored again, or by two consumers at once, lands once: rows, counts and chain records', async ({ svc, db, tenant: t }) => {
    const created = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'TWICE-1', max_uses: 10 } });
    const vid = (created.body as { id: string }).id;
    const url = inject('databaseUrl');
    const [a, b] = [new pg.Client(url), new pg.Client(url)];
    await Promise.all([a.connect(), b.connect()]);
    const partitions = new PartitionCache();
    const store = async (c: pg.Client, records: OutboxRecord[]): Promise<void> => {
      // As the sink writes a batch: audit entries built afresh for each attempt, one transaction.
      const audit = auditEntriesOf(records);
      await partitions.ensure(c as unknown as pg.Pool, daysToFile(audit.map((e) => e.ts)));
      await c.query('BEGIN');
      await writeOutbox(c as unknown as pg.PoolClient, records, audit);
      await c.query('COMMIT');
    };
    const now = Date.now();
    const batch = (tag: string): OutboxRecord[] => {
      const rec = (fields: Record<string, string>): OutboxRecord => ({ tenant: t.tenantId, f: fields });
      const sid = (n: number) => `sess_${tag}${n}${now.toString(36)}`.slice(0, 21);
      // The third has no IP, SSID or method: NULL, NULL and 'voucher' in its row, however it is inserted.
      const common = (n: number) => ({ sid: sid(n), hs: t.hotspotId, mac: `5D:00:00:00:0${n}:00`, ip: n === 3 ? '' : '10.9.0.1',
        ssid: n === 3 ? '' : 'Hall', user: 'G', method: n === 3 ? '' : 'voucher' });
      return [
        ...[1, 2, 3].map((n) => rec({ ...common(n), type: 'voucher_use', use: `use_${tag}${n}`, vid, at: String(now), until: String(now + 3_600_000) })),
        rec({ ...common(1), type: 'session_extend', at: String(now + 1), until: String(now + 7_200_000), minutes: '60', by: 'op' }),
        rec({ ...common(2), type: 'session_end', at: String(now + 2), reason: 'user_request', bin: '5', bout: '6', by: '' }),
        rec({ type: 'audit', rid: `aud_${tag}${now}`, event: 'voucher_update', at: String(now + 3), details: '{"x":1}', by: 'op' }),
      ];
    };
    try {
      const once = batch('x');
      await store(a, once);
      await store(a, once); // redelivered after its commit
      await Promise.all([store(a, batch('y')), store(b, batch('y'))]); // one batch taken by two consumers
      // A stored start ahead of a new one (entries claimed from a dead consumer, then new ones): the
      // COPY of the rows fails on the stored one, and the INSERT that follows stores only the new one.
      const fresh = batch('z')[2]!;
      await store(a, [once[2]!, fresh]);
      const ids = (await db.query('SELECT id FROM audit_records WHERE tenant_id = $1 ORDER BY seq', [t.tenantId])).rows.map((r) => r.id as string);
      for (const [tag, n] of [['x', 6], ['y', 6], ['z', 1]] as const) {
        const mine = ids.filter((id) => id.includes(`sess_${tag}`) || id.startsWith(`aud_${tag}`));
        expect(mine.length).toBe(n);
        expect(new Set(mine).size).toBe(n);
      }
      expect((await db.query('SELECT count(*)::int AS n FROM sessions WHERE voucher_id = $1', [vid])).rows[0].n).toBe(7);
      expect((await db.query('SELECT current_uses FROM vouchers WHERE id = $1', [vid])).rows[0].current_uses).toBe(7);
      // Both ways of inserting the rows store the same values (x3 went in by COPY, z3 by INSERT).
      const row = async (r: OutboxRecord) => (await db.query(
        'SELECT hotspot_id, mac, ip, username, auth_method, ssid, voucher_id, started_at, ends_at FROM sessions WHERE id = $1', [r.f.sid])).rows[0];
      const copied = await row(once[2]!);
      expect(await row(fresh)).toEqual(copied);
      expect(copied).toMatchObject({ hotspot_id: t.hotspotId, mac: '5D:00:00:00:03:00', ip: null, ssid: null, username: 'G', auth_method: 'voucher',
        started_at: new Date(now), ends_at: new Date(now + 3_600_000) });
      const verdict = await svc.service.engine.audit.verify(t.tenantId);
      if (!verdict.valid) console.log('VERDICT', JSON.stringify(verdict), JSON.stringify((await db.query('SELECT seq, id, event_type, day, ts, prev_hash, hash_chain_value FROM audit_records WHERE tenant_id = $1 ORDER BY seq', [t.tenantId])).rows));
      expect(verdict).toMatchObject({ valid: true });
    } finally {
      await Promise.all([a.end(), b.end()]);
    }
  });
  test('two extensions and two ends of one session in one batch: the latest end asked for waits, the first end is the one applied', async ({ svc }) => {
    // Postgres refuses an INSERT ... ON CONFLICT DO UPDATE that touches one row twice (21000), and
    // was never told which of two joined rows an UPDATE should take.
    const t = await newTenant(svc.service);
    const sid = `sess_${Date.now().toString(36)}two`.padEnd(21, '0').slice(0, 21);
    const now = Date.now();
    const c = new pg.Client(inject('databaseUrl'));
    await c.connect();
    try {
      const rec = (fields: Record<string, string>) => ({ tenant: t.tenantId, f: fields });
      const common = { sid, hs: t.hotspotId, mac: '5D:00:00:00:00:04', ip: '', ssid: '', user: 'TWO-1', method: 'voucher' };
      const extend = (until: number) => rec({ ...common, type: 'session_extend', at: String(now + 1_000), until: String(until), minutes: '60', by: 'op' });
      await writeAlone(c, [extend(now + 7_200_000), extend(now + 9_000_000), extend(now + 5_400_000)]);
      expect((await c.query('SELECT until FROM session_extends_early WHERE id = $1', [sid])).rows[0].until.getTime()).toBe(now + 9_000_000);
      await writeAlone(c, [rec({ ...common, type: 'voucher_use', use: 'use_two', vid: 'v_none', at: String(now), until: String(now + 3_600_000) })]);
      await applyWaiting(c);
      expect((await c.query('SELECT ends_at FROM sessions WHERE id = $1', [sid])).rows[0].ends_at.getTime()).toBe(now + 9_000_000);
      const end = (reason: string, at: number) => rec({ ...common, type: 'session_end', at: String(at), reason, bin: '1', bout: '2', by: '' });
      await writeAlone(c, [end('user_request', now + 60_000), end('idle_timeout', now + 90_000)]);
      expect((await c.query('SELECT end_reason, ended_at FROM sessions WHERE id = $1', [sid])).rows[0]).toEqual({ end_reason: 'user_request', ended_at: new Date(now + 60_000) });
    } finally {
      await c.end();
    }
  });
  test('an extension stored before its start waits, and moves the planned end once the start is stored', async ({ tenant: t }) => {
    const sid = `sess_${Date.now().toString(36)}ext`.padEnd(21, '0').slice(0, 21);
    const now = Date.now();
    const c = await new pg.Client(inject('databaseUrl'));
    await c.connect();
    try {
      const rec = (fields: Record<string, string>) => ({ tenant: t.tenantId, f: fields });
      const common = { sid, hs: t.hotspotId, mac: '5D:00:00:00:00:03', ip: '', ssid: '', user: 'EXT-1', method: 'voucher' };
      // Two extensions reach Postgres first, in two batches; the later planned end wins.
      for (const until of [now + 7_200_000, now + 5_400_000]) {
        await writeAlone(c, [rec({ ...common, type: 'session_extend', at: String(now + 1_000), until: String(until), minutes: '60', by: 'op' })]);
      }
      expect((await c.query('SELECT 1 FROM sessions WHERE id = $1', [sid])).rowCount).toBe(0);
      await writeAlone(c, [rec({ ...common, type: 'voucher_use', use: 'use_ext', vid: 'v_none', at: String(now), until: String(now + 3_600_000) })]);
      await applyWaiting(c);
      const row = (await c.query('SELECT ends_at, ended_at FROM sessions WHERE id = $1', [sid])).rows[0];
      expect(row.ends_at.getTime()).toBe(now + 7_200_000);
      expect(row.ended_at).toBeNull();
      expect((await c.query('SELECT 1 FROM session_extends_early WHERE id = $1', [sid])).rowCount).toBe(0);
      // An extension of a session already extended further, or already ended, waits for nothing.
      await writeAlone(c, [rec({ ...common, type: 'session_extend', at: String(now + 2_000), until: String(now + 4_000_000), minutes: '60', by: 'op' })]);
      expect((await c.query('SELECT 1 FROM session_extends_early WHERE id = $1', [sid])).rowCount).toBe(0);
    } finally {
      await c.end();
    }
  });
});

/** writeOutbox in a transaction of its own, as the sink calls it. */
async function writeAlone(c: pg.Client, records: OutboxRecord[]): Promise<void> {
  await c.query('BEGIN');
  try {
    await writeOutbox(c as unknown as pg.PoolClient, records, []);
    await c.query('COMMIT');
  } catch (err) {
    await c.query('ROLLBACK');
    throw err;
  }
}
