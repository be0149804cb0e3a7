import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject } from 'vitest';
import { GENESIS, link } from '../../engine/index.js';
import { startLocalTsa, type LocalTsa } from '../local-tsa.js';
import { readZip } from '../zip-reader.js';
import { call, newTenant, type Running, serviceTest, until, clearOfMidnight, DAY_SCENARIO_MS } from '../support/fixture.js';

const run = promisify(execFile);
const DAY_MS = 86_400_000;
const today = (): string => new Date().toISOString().slice(0, 10);
const dayOffset = (n: number): string => new Date(Date.now() + n * DAY_MS).toISOString().slice(0, 10);
const sessionId = (): string => 'sess_' + Array.from({ length: 16 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(Math.random() * 36)]).join('');

let tsa: LocalTsa | undefined;
const APP_NAME = 'evidence-pack-test';
const test = serviceTest(async () => {
  tsa = await startLocalTsa();
  // Named in pg_stat_activity: the builder's cursor below is this service's, not another file's 5651 export.
  return { ACTOR_THREADS: '1', TSA_URL: tsa.url, DATABASE_URL: `${inject('databaseUrl')}?application_name=${APP_NAME}` };
});
/** The time-stamp authority the service fixture started (tests run after it). */
function localTsa(): LocalTsa {
  if (!tsa) throw new Error('the local TSA starts with the service fixture');
  return tsa;
}

/**
 * The 5651 evidence pack and daily summary against a real time-stamp
 * authority made of `openssl ts`: every token in an exported pack verifies
 * with `openssl ts -verify`, and stops verifying when one byte of its daily
 * file changes.
 */
describe('5651 evidence pack', () => {
  // Its records are read back by their UTC day: the file's scenarios run clear of midnight.
  beforeAll(() => clearOfMidnight(DAY_SCENARIO_MS), DAY_SCENARIO_MS + 10_000);
  let svc: Running;
  let db: pg.Client;
  let work: string;

  test.beforeAll(({ svc: s_, db: d_ }) => {
    svc = s_;
    db = d_;
    work = mkdtempSync(join(tmpdir(), 'gw-pack-'));
  });
  afterAll(async () => {
    await tsa?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** Downloads a pack; counts the chunks the body arrived in. */
  async function download(apiKey: string, query: string): Promise<{ status: number; headers: Headers; zip: Buffer; chunks: number; text: string }> {
    const res = await fetch(`${svc.base}/v1/compliance/5651/export?${query}`, { headers: { 'x-api-key': apiKey } });
    const parts: Buffer[] = [];
    for await (const c of res.body!) parts.push(Buffer.from(c));
    const zip = Buffer.concat(parts);
    return { status: res.status, headers: res.headers, zip, chunks: parts.length, text: res.status === 200 ? '' : zip.toString('utf8') };
  }

  /** Unzips a pack and checks every file against the manifest's size and SHA-256. */
  function openPack(zip: Buffer): { files: Map<string, Buffer>; manifest: any } {
    const files = readZip(zip);
    const manifest = JSON.parse(files.get('manifest.json')!.toString('utf8'));
    expect(new Set(manifest.files.map((f: any) => f.path))).toEqual(new Set([...files.keys()].filter((p) => p !== 'manifest.json')));
    for (const f of manifest.files) {
      const data = files.get(f.path)!;
      expect(data.length, f.path).toBe(f.size);
      expect(createHash('sha256').update(data).digest('hex'), f.path).toBe(f.sha256);
    }
    return { files, manifest };
  }

  /** `openssl ts -verify` of a daily file against its token; true when openssl says OK. */
  async function opensslVerify(data: Buffer, tsr: Buffer): Promise<boolean> {
    const name = Math.random().toString(36).slice(2);
    const dataFile = join(work, `${name}.csv`);
    const tsrFile = join(work, `${name}.tsr`);
    writeFileSync(dataFile, data);
    writeFileSync(tsrFile, tsr);
    try {
      const { stdout } = await run('openssl', ['ts', '-verify', '-data', dataFile, '-in', tsrFile, '-CAfile', localTsa().certFile]);
      return /Verification: OK/.test(stdout);
    } catch {
      return false;
    }
  }

  async function insertSession(tenantId: string, hotspotId: string, s: { start: string; endsAt: string; endedAt?: string; reason?: string; mac: string; user: string }): Promise<string> {
    const id = sessionId();
    await db.query(
      `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, ip, username, auth_method, ssid, started_at, ends_at, ended_at, end_reason, status)
       VALUES ($1, $2, $3, $4, '10.9.0.1', $5, 'voucher', 'Hall', $6, $7, $8, $9, $10)`,
      [id, tenantId, hotspotId, s.mac, s.user, s.start, s.endsAt, s.endedAt ?? null, s.reason ?? null, s.endedAt ? 'ended' : 'active']);
    return id;
  }

  test('packs daily logs, chain records and tokens that openssl ts -verify accepts; one changed byte fails', async () => {
    const t = await newTenant(svc.service, 'Pack Venue');
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'PACK-1', max_uses: null } })).status).toBe(201);
    const sids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'PACK-1', mac: `AA:00:00:00:00:0${i}`, ip: `10.3.0.${i}`, ssid: 'Hall' } });
      expect(r.status).toBe(200);
      sids.push(r.body.session_id);
    }
    expect((await call(svc.base, 'DELETE', `/v1/sessions/${sids[0]}`, { auth: t.apiKey })).status).toBe(200);
    // voucher_created, 3 starts, 1 end
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1', [t.tenantId])).rows[0].n === 5);
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1 AND ended_at IS NOT NULL', [t.tenantId])).rows[0].n === 1);
    // Across midnight: one ended early today, one still running; both belong to yesterday and today.
    const y = dayOffset(-1);
    const d = today();
    const crossed = await insertSession(t.tenantId, t.hotspotId, { start: `${y}T23:00:00.000Z`, endsAt: `${d}T01:00:00.000Z`, endedAt: `${d}T00:00:30.000Z`, reason: 'session_timeout', mac: 'AA:00:00:00:00:10', user: '+905551234567' });
    const running = await insertSession(t.tenantId, t.hotspotId, { start: `${y}T22:00:00.000Z`, endsAt: `${dayOffset(1)}T22:00:00.000Z`, mac: 'AA:00:00:00:00:11', user: 'guest, "quoted"' });

    const r = await download(t.apiKey, `from=${y}&to=${d}`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/zip');
    expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename="5651-evidence-.+\.zip"$/);
    const { files, manifest } = openPack(r.zip);
    expect([...files.keys()].sort()).toEqual([
      `chain/${y}.jsonl`, `chain/${d}.jsonl`, `logs/${y}.csv`, `logs/${d}.csv`, 'manifest.json', `tsa/${y}.csv.tsr`, `tsa/${d}.csv.tsr`,
    ].sort());
    expect(manifest).toMatchObject({ format: '5651-evidence-pack/1', tenant: { id: t.tenantId }, range: { from: y, to: d }, tsa_url: localTsa().url });

    // The access logs: header, sessions overlapping each day in start order, identity unmasked.
    const csv = (day: string): string[] => files.get(`logs/${day}.csv`)!.toString('utf8').split('\r\n').slice(0, -1);
    expect(csv(y)[0]).toBe('session_id,hotspot_id,hotspot_name,mac,ip,identity,auth_method,start,end,end_reason');
    expect(csv(y).slice(1).map((l) => l.split(',')[0])).toEqual([running, crossed]);
    expect(csv(d).slice(1).map((l) => l.split(',')[0])).toEqual([running, crossed, ...sids]);
    expect(csv(d)).toContain(`${crossed},${t.hotspotId},Lobby,AA:00:00:00:00:10,10.9.0.1,+905551234567,voucher,${y}T23:00:00.000Z,${d}T00:00:30.000Z,session_timeout`);
    expect(csv(d)).toContain(`${running},${t.hotspotId},Lobby,AA:00:00:00:00:11,10.9.0.1,"guest, ""quoted""",voucher,${y}T22:00:00.000Z,,`);
    const ended = csv(d).find((l) => l.startsWith(sids[0]!))!.split(',');
    expect(ended.slice(3, 7)).toEqual(['AA:00:00:00:00:00', '10.3.0.0', 'PACK-1', 'voucher']);
    expect(ended[8]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(ended[9]).toBe('admin_disconnect');

    // The chain file verifies with nothing but itself and the documented rule.
    const chain = files.get(`chain/${d}.jsonl`)!.toString('utf8').trimEnd().split('\n').map((l) => JSON.parse(l));
    expect(chain.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(Object.keys(chain[1])).toEqual(['tenant_id', 'seq', 'event_type', 'timestamp', 'session_id', 'mac_address', 'ip_address',
      'username', 'auth_method', 'ssid', 'hotspot_id', 'details', 'prev_hash', 'hash_chain_value']);
    let prev = GENESIS;
    for (const c of chain) {
      expect(c.prev_hash).toBe(prev);
      expect(link(prev, c)).toBe(c.hash_chain_value);
      prev = c.hash_chain_value;
    }
    expect(files.get(`chain/${y}.jsonl`)!.length).toBe(0);
    expect(manifest.days).toEqual([
      expect.objectContaining({ date: y, sessions: 2, chain: { records: 0, first_seq: null, last_seq: null, valid: true, first_break: null } }),
      expect.objectContaining({ date: d, sessions: 5, chain: { records: 5, first_seq: 1, last_seq: 5, valid: true, first_break: null } }),
    ]);

    // Every token verifies against its day's file; one changed byte does not.
    for (const day of [y, d]) {
      expect(manifest.days.find((x: any) => x.date === day).timestamp).toMatchObject({ status: 'granted', file: `tsa/${day}.csv.tsr`, reused: false, error: null });
      const data = files.get(`logs/${day}.csv`)!;
      const tsr = files.get(`tsa/${day}.csv.tsr`)!;
      expect(await opensslVerify(data, tsr), `${day} verifies`).toBe(true);
      const tampered = Buffer.from(data);
      tampered[tampered.length - 3]! ^= 0x01;
      expect(await opensslVerify(tampered, tsr), `${day} with one byte changed`).toBe(false);
    }

    // The same content again: the tokens are reused, the authority is not asked.
    const asked = localTsa().requests;
    const again = openPack((await download(t.apiKey, `start=${y}&end=${d}`)).zip);
    expect(localTsa().requests).toBe(asked);
    expect(again.manifest.days.map((x: any) => x.timestamp.reused)).toEqual([true, true]);
    expect(again.files.get(`tsa/${d}.csv.tsr`)).toEqual(files.get(`tsa/${d}.csv.tsr`));
  });

  test('still builds when the authority is down, and the manifest names the days without a token', async () => {
    const t = await newTenant(svc.service, 'Down Venue');
    await insertSession(t.tenantId, t.hotspotId, { start: '2025-03-01T10:00:00.000Z', endsAt: '2025-03-01T11:00:00.000Z', endedAt: '2025-03-01T10:30:00.000Z', reason: 'user_request', mac: 'AA:00:00:00:01:00', user: 'DOWN-1' });
    localTsa().down = true;
    try {
      const r = await download(t.apiKey, 'from=2025-03-01&to=2025-03-02');
      expect(r.status).toBe(200);
      const { files, manifest } = openPack(r.zip);
      expect([...files.keys()].filter((p) => p.startsWith('tsa/'))).toEqual([]);
      for (const day of manifest.days) {
        expect(day.timestamp).toMatchObject({ status: 'failed', file: null, error: { code: 'tsa_bad_response' } });
      }
      expect(files.get('logs/2025-03-01.csv')!.toString()).toContain('DOWN-1');
    } finally {
      localTsa().down = false;
    }
    // Back up: the next export gets the tokens.
    const { manifest } = openPack((await download(t.apiKey, 'from=2025-03-01&to=2025-03-02')).zip);
    expect(manifest.days.map((x: any) => x.timestamp.status)).toEqual(['granted', 'granted']);
  });

  test('refuses a range over 366 days, a reversed or missing bound, and tenants without the module', async () => {
    const t = await newTenant(svc.service, 'Range Venue');
    const tooLong = await download(t.apiKey, 'from=2025-01-01&to=2026-01-02');
    expect(tooLong.status).toBe(400);
    expect(JSON.parse(tooLong.text)).toMatchObject({ error: 'validation_failed', details: [{ field: 'to' }] });
    expect((await download(t.apiKey, 'from=2025-02-01&to=2025-01-31')).status).toBe(400);
    expect((await download(t.apiKey, 'from=2025-02-01')).status).toBe(400);
    expect((await download(t.apiKey, 'from=2025-02-30&to=2025-03-01')).status).toBe(400);
    expect((await download(t.apiKey, 'from=2025-02-01&to=2025-02-02&start=2025-01-01')).status).toBe(400);
    const bare = await newTenant(svc.service, 'No Compliance', ['vouchers', 'sessions']);
    expect((await download(bare.apiKey, 'from=2025-01-01&to=2025-01-01')).status).toBe(403);
    expect((await call(svc.base, 'GET', '/v1/compliance/5651/summary', { auth: t.apiKey })).status).toBe(400);
  });

  test('summarises a day per hotspot: broken chain, a start with no end past its maximum life, time-stamp status', async () => {
    const t = await newTenant(svc.service, 'Summary Venue');
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'SUM-1', max_uses: null } });
    const sids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${t.hotspotId}`, { body: { code: 'SUM-1', mac: `BB:00:00:00:00:0${i}`, ip: `10.4.0.${i}`, ssid: 'Hall' } });
      sids.push(r.body.session_id);
    }
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1', [t.tenantId])).rows[0].n === 4);
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1', [t.tenantId])).rows[0].n === 3);

    const clean = await call(svc.base, 'GET', `/v1/compliance/5651/summary?date=${today()}`, { auth: t.apiKey });
    expect(clean.status).toBe(200);
    expect(clean.body.hotspots).toEqual([{
      hotspot_id: t.hotspotId, name: 'Lobby', record_count: 3, session_count: 3, chain_valid: true, tsa_status: 'day_open', warnings: [],
    }]);
    expect(clean.body.totals).toMatchObject({ record_count: 4, session_count: 3, chain_valid: true, first_break: null, tsa_status: 'day_open', warnings: [] });

    // Tamper with a start record; cut a live session's planned end to an hour ago (its end never recorded).
    await db.query("UPDATE audit_records SET ip_address = '10.66.6.6' WHERE tenant_id = $1 AND seq = 3", [t.tenantId]);
    await db.query("UPDATE sessions SET ends_at = now() - interval '1 hour' WHERE id = $1", [sids[1]]);
    const broken = await call(svc.base, 'GET', `/v1/compliance/5651/summary?date=${today()}`, { auth: t.apiKey });
    expect(broken.body.totals).toMatchObject({ chain_valid: false, first_break: { seq: 3, problem: 'hash_mismatch' } });
    const hs = broken.body.hotspots[0];
    expect(hs.chain_valid).toBe(false);
    expect(hs.warnings.map((w: any) => w.code).sort()).toEqual(['hash_mismatch', 'session_without_end']);
    expect(hs.warnings.find((w: any) => w.code === 'session_without_end')).toMatchObject({ session_id: sids[1], hotspot_id: t.hotspotId });
    expect(broken.body.totals.warnings).toHaveLength(2);

    // A finished day: stamped now, then reused; a session with a start and no end is a missing record.
    const y = dayOffset(-1);
    const lost = await insertSession(t.tenantId, t.hotspotId, { start: `${y}T08:00:00.000Z`, endsAt: `${y}T09:00:00.000Z`, mac: 'BB:00:00:00:00:20', user: 'SUM-1' });
    const yesterday = await call(svc.base, 'GET', `/v1/compliance/5651/summary?date=${y}`, { auth: t.apiKey });
    expect(yesterday.body.totals).toMatchObject({ session_count: 1, record_count: 0, chain_valid: true, tsa_status: 'granted' });
    expect(yesterday.body.totals.tsa_gen_time).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(yesterday.body.hotspots[0].warnings).toEqual([expect.objectContaining({ code: 'session_without_end', session_id: lost })]);
    const asked = localTsa().requests;
    const pack = openPack((await download(t.apiKey, `from=${y}&to=${y}`)).zip);
    expect(localTsa().requests).toBe(asked);
    expect(createHash('sha256').update(pack.files.get(`logs/${y}.csv`)!).digest('hex')).toBe(yesterday.body.log_sha256);
    expect(pack.manifest.days[0].timestamp).toMatchObject({ status: 'granted', reused: true });
    expect(await opensslVerify(pack.files.get(`logs/${y}.csv`)!, pack.files.get(`tsa/${y}.csv.tsr`)!)).toBe(true);

    // A deleted record is a gap in the sequence, the tenant's (whose record it was is gone with it).
    const g = await newTenant(svc.service, 'Gap Venue');
    await call(svc.base, 'POST', '/v1/vouchers', { auth: g.apiKey, body: { code: 'GAP-1', max_uses: null } });
    for (let i = 0; i < 3; i++) {
      await call(svc.base, 'POST', `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${g.hotspotId}`, { body: { code: 'GAP-1', mac: `BC:00:00:00:00:0${i}`, ip: '10.5.0.1' } });
    }
    await until(async () => (await db.query('SELECT count(*)::int AS n FROM audit_records WHERE tenant_id = $1', [g.tenantId])).rows[0].n === 4);
    // Records missing at the end of the day show against the chain head.
    await db.query('DELETE FROM audit_records WHERE tenant_id = $1 AND seq = 4', [g.tenantId]);
    const tail = await call(svc.base, 'GET', `/v1/compliance/5651/summary?date=${today()}`, { auth: g.apiKey });
    expect(tail.body.totals.first_break).toMatchObject({ seq: 4, problem: 'sequence_gap' });
    await db.query('DELETE FROM audit_records WHERE tenant_id = $1 AND seq = 2', [g.tenantId]);
    const gap = await call(svc.base, 'GET', `/v1/compliance/5651/summary?date=${today()}`, { auth: g.apiKey });
    expect(gap.body.totals.first_break).toMatchObject({ seq: 3, problem: 'sequence_gap' });
    expect(gap.body.totals.warnings).toEqual([expect.objectContaining({ code: 'sequence_gap', seq: 3, hotspot_id: null })]);
    expect(gap.body.hotspots[0]).toMatchObject({ chain_valid: false, record_count: 1, warnings: [] });
  });

  test('streams a large pack in many chunks at the pace of its consumer; a client that goes away cancels the build', async () => {
    const t = await newTenant(svc.service, 'Busy Venue');
    const rows = 60_000;
    await db.query(
      `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, ip, username, auth_method, ssid, started_at, ends_at, ended_at, end_reason, status)
       SELECT 'sess_' || substr(md5($1::text || i), 1, 16), $1::text, $2::text, 'CC:00:00:' || lpad(to_hex(i / 65536), 2, '0') || ':' || lpad(to_hex((i / 256) % 256), 2, '0') || ':' || lpad(to_hex(i % 256), 2, '0'),
         '10.' || (i % 250) || '.' || (i / 250 % 250) || '.1', md5(random()::text), 'voucher', 'Hall',
         $3::timestamptz + i * interval '100 ms', $3::timestamptz + i * interval '100 ms' + interval '1 hour',
         $3::timestamptz + i * interval '100 ms' + interval '30 minutes', 'idle_timeout', 'ended'
       FROM generate_series(1, $4::int) AS i`,
      [t.tenantId, t.hotspotId, `${today()}T00:00:00Z`, rows]);
    // The builder's cursor over the day's sessions: open while the build runs, its last FETCH
    // unchanged while the build waits for the client.
    const cursor = async (): Promise<{ state: string; query_start: Date }[]> => (await db.query(
      "SELECT state, query_start FROM pg_stat_activity WHERE query LIKE 'FETCH % FROM access_day' AND state IN ('idle in transaction', 'active') AND application_name = $1",
      [APP_NAME])).rows;
    const openCursors = async (): Promise<number> => (await cursor()).length;
    const url = `${svc.base}/v1/compliance/5651/export?from=${today()}&to=${today()}`;

    // The whole pack over HTTP: many chunks, all rows.
    const r = await download(t.apiKey, `from=${today()}&to=${today()}`);
    expect(r.status).toBe(200);
    const { files, manifest } = openPack(r.zip);
    expect(files.get(`logs/${today()}.csv`)!.toString('utf8').split('\r\n').length - 2).toBe(rows);
    expect(manifest.days[0].sessions).toBe(rows);
    expect(r.zip.length).toBeGreaterThan(20 * 64 * 1024);
    expect(r.chunks).toBeGreaterThan(20);
    expect(await openCursors()).toBe(0);

    // The builder runs only as far ahead as the consumer: take one block and wait, and its
    // reading stops (over HTTP the kernel's socket buffers, megabytes on loopback, would hide
    // this; the HTTP writer waits on uWS's onWritable the same way, http/respond.ts).
    const blocks = svc.service.engine.evidencePacks.export({ id: t.tenantId, name: 'Busy Venue' }, today(), today()).stream[Symbol.asyncIterator]();
    const taken = [(await blocks.next()).value as Buffer];
    // The builder fills its buffers first (slower on a busy machine): wait for the cursor to stand still
    // for a second, however long the filling takes; an unpaced builder never does, and this fails.
    let stalled = await cursor();
    await until(async () => {
      await new Promise((res) => setTimeout(res, 1000));
      const now = await cursor();
      const still = JSON.stringify(now) === JSON.stringify(stalled);
      stalled = now;
      return still;
    }, { what: 'the builder stopped reading', timeoutMs: 30_000 });
    await new Promise((res) => setTimeout(res, 1000));
    expect(stalled).toEqual([{ state: 'idle in transaction', query_start: expect.any(Date) }]);
    expect(await cursor()).toEqual(stalled);
    for (let b = await blocks.next(); !b.done; b = await blocks.next()) taken.push(b.value);
    expect(taken.every((b) => b.length <= 64 * 1024)).toBe(true);
    expect(openPack(Buffer.concat(taken)).manifest.days[0].sessions).toBe(rows);

    // A client that reads one chunk and leaves: the build stops and gives its connection back.
    const controller = new AbortController();
    const gone = await fetch(url, { headers: { 'x-api-key': t.apiKey }, signal: controller.signal });
    const goneReader = gone.body!.getReader();
    await goneReader.read();
    expect(await openCursors()).toBe(1);
    controller.abort();
    await goneReader.read().catch(() => undefined);
    await until(async () => (await openCursors()) === 0, { timeoutMs: 5_000 });
    expect((await download(t.apiKey, 'from=2025-01-01&to=2025-01-02')).status).toBe(200);
  });
});
