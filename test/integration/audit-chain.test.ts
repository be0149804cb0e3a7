import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import pg from 'pg';
import { beforeAll, describe, expect, inject } from 'vitest';
import { createLogger, projectPath, runRetention } from '../../engine/index.js';
import { AuditService } from '../../engine/audit/audit-service.js';
import { appendToChains, daysToFile, PartitionCache, type AuditEntry } from '../../engine/audit/chain-writer.js';
import { inTransaction } from '../../engine/store/postgres.js';
import { call, JWT_SECRET, newTenant, type Running, serviceTest, until, clearOfMidnight, DAY_SCENARIO_MS } from '../support/fixture.js';
import { underRetentionLock } from '../support/retention-lock.js';

const run = promisify(execFile);

const test = serviceTest({ ACTOR_THREADS: '1' });

/**
 * The audit chain in Postgres: session and operator events linked per
 * tenant, the day API, the CLI verifier, and tampering found where it is.
 */
describe('audit chain', () => {
  // Its records are read back by their UTC day: the file's scenarios run clear of midnight.
  beforeAll(() => clearOfMidnight(DAY_SCENARIO_MS), DAY_SCENARIO_MS + 10_000);
  let svc: Running;
  let db: pg.Client;
  test.beforeAll(({ svc: s_, db: d_ }) => { svc = s_; db = d_; });

  /** Appends entries to their chains in one transaction, as the sink does (their days' partitions must exist). */
  const append = (entries: AuditEntry[]): Promise<number> => inTransaction(svc.service.engine.pool, (c) => appendToChains(c, entries));
  /** A session start of the tenant's hotspot, with only the fields a chain link needs set. */
  const startEntry = (t: { tenantId: string; hotspotId: string }, id: string, ts: number, more: Partial<AuditEntry> = {}): AuditEntry => ({
    tenant_id: t.tenantId, id, event_type: 'session_start', ts, session_id: `sess_${id}`, mac_address: 'DE:00:00:00:00:01',
    ip_address: '', username: '', auth_method: 'voucher', ssid: '', hotspot_id: t.hotspotId, details: {}, ...more,
  });

  /** A tenant with a few sign-ins, a disconnect and operator actions, all chained. */
  async function tenantWithHistory(records: number) {
    const t = await newTenant(svc.service);
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'AUD-1', max_uses: null } });
    const sids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'AUD-1', mac: `DD:00:00:00:00:0${i}`, ip: `10.2.0.${i}`, ssid: 'Hall' } });
      sids.push(r.body.session_id);
    }
    await call(svc.base, 'DELETE', `/v1/sessions/${sids[0]}`, { auth: t.apiKey });
    await call(svc.base, 'PUT', `/v1/hotspots/${t.hotspotId}`, { auth: t.apiKey, body: { name: 'Renamed' } });
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1', [t.tenantId])).rows[0].n === records);
    return { ...t, sids };
  }

  const verifyCli = (tenant: string) => run(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), 'audit', 'verify', '--tenant', tenant, '--json'], {
    env: { ...process.env, REDIS_URL: inject('redisUrl'), DATABASE_URL: inject('databaseUrl'), JWT_SECRET },
  }).then(({ stdout }) => ({ code: 0, out: JSON.parse(stdout) }), (err: { code: number; stdout: string }) => ({ code: err.code, out: JSON.parse(err.stdout) }));

  test('links session and operator events gap-free; the day API shows them in chain order and valid', async ({ svc }) => {
    // voucher_created, 4 starts, 1 end, hotspot_updated
    const t = await tenantWithHistory(7);
    const today = new Date().toISOString().slice(0, 10);
    const day = await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${today}`, { auth: t.apiKey });
    expect(day.status).toBe(200);
    expect(day.body.chain_valid).toBe(true);
    expect(day.body.records.map((r: any) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(day.body.records[0].prev_hash).toBe('sha256:' + '0'.repeat(64));
    for (let i = 1; i < 7; i++) expect(day.body.records[i].prev_hash).toBe(day.body.records[i - 1].hash_chain_value);
    const types = day.body.records.map((r: any) => r.event_type);
    expect(types.filter((x: string) => x === 'session_start')).toHaveLength(4);
    expect(types).toContain('session_end');
    expect(types).toContain('voucher_created');
    expect(types).toContain('hotspot_updated');
    const start = day.body.records.find((r: any) => r.session_id === t.sids[1]);
    expect(start).toMatchObject({ event_type: 'session_start', mac_address: 'DD:00:00:00:00:01', ip_address: '10.2.0.1', username: 'AUD-1', auth_method: 'voucher', ssid: 'Hall' });
    expect(start.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect((await verifyCli(t.tenantId))).toEqual({ code: 0, out: { tenant_id: t.tenantId, records: 7, valid: true, first_break: null } });
    expect((await call(svc.base, 'GET', '/v1/compliance/audit-chain?date=2026-13-01', { auth: t.apiKey })).status).toBe(400);
  });

  test('a change of the sign-in settings enters the chain, naming who and what (references, never a secret)', async ({ svc, db }) => {
    const t = await newTenant(svc.service);
    const ref = `env://${t.tenantId.toUpperCase()}_NETGSM`;
    const put = await call(svc.base, 'PUT', '/v1/settings/sign-in', {
      auth: t.apiKey, body: { methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', credentials_ref: ref } } });
    expect(put.status).toBe(200);
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1', [t.tenantId])).rows[0].n === 1);
    const day = await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${new Date().toISOString().slice(0, 10)}`, { auth: t.apiKey });
    expect(day.body.chain_valid).toBe(true);
    expect(day.body.records).toHaveLength(1);
    const rec = day.body.records[0];
    expect(rec.event_type).toBe('sign_in_settings_changed');
    expect(rec.details).toMatchObject({ by: expect.stringMatching(/^api_key:/), settings: { methods: ['voucher', 'sms_otp'], sms: { provider: 'netgsm', credentials_ref: ref } } });
    // A refused change is not recorded.
    expect((await call(svc.base, 'PUT', '/v1/settings/sign-in', { auth: t.apiKey, body: { methods: ['carrier_pigeon'] } })).status).toBe(400);
    await new Promise((r) => setTimeout(r, 500));
    expect((await db.query('SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1', [t.tenantId])).rows[0].n).toBe(1);
  });

  test('an edited record is named by the verifier and the day API', async ({ svc, db }) => {
    const t = await tenantWithHistory(7);
    await db.query("UPDATE audit_records SET ip_address = '10.66.6.6' WHERE tenant_id = $1 AND seq = 4", [t.tenantId]);
    const r = await verifyCli(t.tenantId);
    expect(r.code).toBe(1);
    expect(r.out.first_break).toMatchObject({ seq: 4, problem: 'hash_mismatch' });
    const day = await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${new Date().toISOString().slice(0, 10)}`, { auth: t.apiKey });
    expect(day.body.chain_valid).toBe(false);
    expect(day.body.first_break.seq).toBe(4);
  });

  test('a deleted record shows as a gap where it was; a deleted last record against the head', async ({ svc, db }) => {
    const t = await tenantWithHistory(7);
    await db.query('DELETE FROM audit_records WHERE tenant_id = $1 AND seq = 3', [t.tenantId]);
    expect((await verifyCli(t.tenantId)).out.first_break).toMatchObject({ seq: 4, problem: 'sequence_gap' });
    const u = await tenantWithHistory(7);
    await db.query('DELETE FROM audit_records WHERE tenant_id = $1 AND seq = 7', [u.tenantId]);
    expect((await verifyCli(u.tenantId)).out.first_break).toMatchObject({ seq: 7, problem: 'sequence_gap' });
    // The day API checks the day against what follows it too, as the 5651 summary and the pack do.
    const day = await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${new Date().toISOString().slice(0, 10)}`, { auth: u.apiKey });
    expect(day.body).toMatchObject({ count: 6, chain_valid: false, first_break: { seq: 7, problem: 'sequence_gap' } });
  });

  test('reordered records no longer link', async ({ db }) => {
    const t = await tenantWithHistory(7);
    // Swap records 2 and 3 (through -2: the primary key is checked per statement).
    for (const [from, to] of [[2, -2], [3, 2], [-2, 3]]) {
      await db.query('UPDATE audit_records SET seq = $3 WHERE tenant_id = $1 AND seq = $2', [t.tenantId, from, to]);
    }
    expect((await verifyCli(t.tenantId)).out.first_break).toMatchObject({ seq: 2, problem: 'broken_link' });
  });

  test('retention drops whole days past the legal period and logs what it destroyed', async ({ db }) => {
    const old = '2021-06-15';
    // Every service of every test file runs retention on the real clock (at start, then hourly): the day is set up
    // under retention's lock, so none drops the partition between its creation and its row.
    await underRetentionLock(inject('databaseUrl'), async () => {
      await db.query(`CREATE TABLE IF NOT EXISTS audit_records_20210615 PARTITION OF audit_records FOR VALUES FROM ('2021-06-15') TO ('2021-06-16')`);
      await db.query(`INSERT INTO audit_records (tenant_id, seq, id, event_type, ts, prev_hash, hash_chain_value, day)
        VALUES ('tn_retention', 1, 'x', 'session_start', '2021-06-15T10:00:00Z', 'sha256:0', 'sha256:1', $1)`, [old]);
    });
    const r = await retainUntilGone('audit_records_20210615');
    expect(r.cutoff).toBe('2024-11-22');
    const logRow = await db.query("SELECT rows, day::text FROM audit_retention_log WHERE partition = 'audit_records_20210615'");
    expect(logRow.rows[0]).toEqual({ rows: 1, day: old });
    const today = new Date().toISOString().slice(0, 10).replace(/-/g, '');
    expect((await db.query('SELECT to_regclass($1) AS t', [`audit_records_${today}`])).rows[0].t).not.toBeNull();
  });

  test('after retention, a chain may start where records were dropped, and nowhere else', async ({ svc, db }) => {
    // voucher_created, 4 starts, 1 end, hotspot_updated: seq 1..7, all today.
    const t = await tenantWithHistory(7);
    // Make seq 1-3 a day past the legal period (the hash covers the timestamp, not the partition's day).
    await underRetentionLock(inject('databaseUrl'), async () => {
      await db.query(`CREATE TABLE IF NOT EXISTS audit_records_20210616 PARTITION OF audit_records FOR VALUES FROM ('2021-06-16') TO ('2021-06-17')`);
      await db.query("UPDATE audit_records SET day = '2021-06-16' WHERE tenant_id = $1 AND seq <= 3", [t.tenantId]);
    });
    await retainUntilGone('audit_records_20210616');
    const kept = await db.query('SELECT dropped_through_seq::int AS s FROM audit_retention_tenants WHERE tenant_id = $1', [t.tenantId]);
    expect(kept.rows).toEqual([{ s: 3 }]);

    // Seq 4 has no predecessor any more, lawfully: the chain from 4 verifies.
    const today = new Date().toISOString().slice(0, 10);
    expect(await svc.service.engine.audit.verify(t.tenantId)).toMatchObject({ valid: true, records: 4 });
    expect((await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${today}`, { auth: t.apiKey })).body.chain_valid).toBe(true);

    // Deleting the first kept record is not retention: the chain now breaks there.
    await db.query('DELETE FROM audit_records WHERE tenant_id = $1 AND seq = 4', [t.tenantId]);
    const after = await svc.service.engine.audit.verify(t.tenantId);
    expect(after.valid).toBe(false);
    // Named at the first record left, whose predecessor (4) is neither stored nor dropped.
    expect(after.first_break).toMatchObject({ seq: 5 });
    const day = await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${today}`, { auth: t.apiKey });
    expect(day.body.chain_valid).toBe(false);
    expect(day.body.first_break).toMatchObject({ seq: 5 });
  });
  test('records that reach the chain out of time order across midnight leave every day whole', async ({ svc }) => {
    // Two consumers, or two threads' clocks, link a record from before midnight after one from
    // after it. Filed under its timestamp's day, each day would miss a seq the other holds.
    const t = await newTenant(svc.service);
    const [prior, day] = ['2026-11-20', '2026-11-21'];
    const at = (iso: string) => Date.parse(iso);
    const entry = (id: string, ts: number): AuditEntry => startEntry(t, id, ts);
    await new PartitionCache().ensure(svc.service.engine.pool, [prior, day]);
    await append([entry('mid1', at(`${prior}T23:59:59.900Z`)), entry('mid2', at(`${day}T00:00:00.100Z`))]);
    await append([entry('mid3', at(`${prior}T23:59:59.950Z`))]); // late, in its own batch
    await append([entry('mid4', at(`${day}T00:00:01.000Z`)), entry('mid2', at(`${day}T00:00:00.100Z`))]); // with a redelivery

    const before = await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${prior}`, { auth: t.apiKey });
    expect(before.body).toMatchObject({ count: 1, chain_valid: true });
    const after = await call(svc.base, 'GET', `/v1/compliance/audit-chain?date=${day}`, { auth: t.apiKey });
    expect(after.body).toMatchObject({ count: 3, chain_valid: true, first_break: null });
    // The late record keeps its own timestamp; it is filed under the day its chain had reached.
    expect(after.body.records.map((r: { seq: number; timestamp: string }) => [r.seq, r.timestamp])).toEqual([
      [2, `${day}T00:00:00.100Z`], [3, `${prior}T23:59:59.950Z`], [4, `${day}T00:00:01.000Z`]]);
    for (const d of [prior, day]) expect((await svc.service.engine.dailySummary.day(t.tenantId, d)).totals.chain_valid).toBe(true);
    expect(await svc.service.engine.audit.verify(t.tenantId, prior, prior)).toMatchObject({ valid: true, records: 1 });
    expect(await svc.service.engine.audit.verify(t.tenantId)).toMatchObject({ valid: true, records: 4 });
  });
  test("stores what guests and NASes type as they typed it: tabs, newlines, backslashes, quotes, Unicode", async ({ svc, db }) => {
    // The sink loads records with COPY's text format, where a tab, newline or backslash in a field
    // would otherwise split or shift the row: each must come back as it went in, and verify.
    const t = await newTenant(svc.service);
    const odd = 'a\tb\nc\rd\\e\\N "f" \\. \u00e7\u011f\u{1F600}';
    const e = startEntry(t, 'odd1', Date.now(), { username: odd, ssid: '\\N', details: { note: odd, path: 'C:\\x' } });
    await new PartitionCache().ensure(svc.service.engine.pool, daysToFile([e.ts]));
    await append([e]);
    const row = (await db.query('SELECT username, ssid, ip_address, details FROM audit_records WHERE tenant_id = $1 AND id = $2', [t.tenantId, 'odd1'])).rows[0];
    expect(row).toEqual({ username: odd, ssid: '\\N', ip_address: null, details: { note: odd, path: 'C:\\x' } });
    expect(await svc.service.engine.audit.verify(t.tenantId)).toMatchObject({ valid: true, records: 1 });
  });

  test('verifies a chain that grows while it is read: a record appended meanwhile is no gap', async ({ svc }) => {
    // A sink appends (records and head in one transaction) between the verifier's reading of the
    // records and of the head: forced here by appending right after its last records query.
    const t = await newTenant(svc.service);
    const pool = svc.service.engine.pool;
    const entry = (id: string): AuditEntry[] => [startEntry(t, id, Date.now())];
    await new PartitionCache().ensure(pool, daysToFile([Date.now()]));
    await append(entry('grow1'));
    await append(entry('grow2'));
    let appended = false;
    const racing = {
      // The verifier queries with text and values only.
      query: async (text: string, values: unknown[]) => {
        const r = await pool.query(text, values);
        // After the first read that finds nothing, the one that found no more records (the head
        // and the pages before it all have rows): the verifier is done with them.
        if (!appended && r.rows.length === 0) {
          appended = true;
          await append(entry('grow3'));
        }
        return r;
      },
    } as unknown as typeof pool;
    expect(await new AuditService(racing).verify(t.tenantId)).toMatchObject({ valid: true, first_break: null });
    expect(appended).toBe(true);
    expect(await svc.service.engine.audit.verify(t.tenantId)).toMatchObject({ valid: true, records: 3 });
  });
});

/**
 * Runs retention (as of 2026-11-22) until the partition `name` is gone: a run finds the lock taken while another
 * service's runs and drops nothing; the other may drop the partition itself, logged the same way. The last run's answer.
 */
async function retainUntilGone(name: string): Promise<{ dropped: string[]; cutoff: string }> {
  const pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 2 });
  try {
    let r = await runRetention(pool, createLogger('silent'), Date.parse('2026-11-22T00:00:00Z'));
    await until(async () => {
      if ((await pool.query('SELECT to_regclass($1) AS t', [name])).rows[0].t === null) return true;
      r = await runRetention(pool, createLogger('silent'), Date.parse('2026-11-22T00:00:00Z'));
      return false;
    }, { what: `${name} dropped by retention` });
    return r;
  } finally {
    await pool.end();
  }
}
