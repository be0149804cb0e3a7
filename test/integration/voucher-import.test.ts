import { describe, expect, inject } from 'vitest';
import { call, keys, macs, newTenant, type Running, serviceTest, type Tenant, until } from '../support/fixture.js';

const VERIFY = '/api/v1/hotspot-portal/voucher/verify';
const HEADER = 'code,max_uses,expires_at,bandwidth_profile,notes';
/** This file's service takes files up to 64 KiB, so a 413 costs little to provoke. */
const LIMIT = 64 * 1024;

const test = serviceTest({ VOUCHER_IMPORT_MAX_BYTES: String(LIMIT) });

interface Report {
  batch_id: string;
  imported: number;
  invalid: number;
  invalid_rows: { line: number; reason: string; message: string }[];
  invalid_rows_truncated: boolean;
  time_zone: string;
}

/** CSV import (issue 20 item 1): POST /v1/vouchers/import and the console's upload, over real HTTP, Postgres and Redis. */
describe('voucher CSV import', () => {
  let svc: Running;
  test.beforeAll(({ svc: s }) => { svc = s; });
  const nextMac = macs(0xc5);
  const uniq = (): string => Math.random().toString(36).slice(2, 8).toUpperCase();

  async function importCsv(t: Tenant, body: string, opts: { query?: string; type?: string; path?: string } = {}): Promise<{ status: number; body: Report & Record<string, unknown> }> {
    const res = await fetch(`${svc.base}${opts.path ?? '/v1/vouchers/import'}${opts.query ?? ''}`, {
      method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': opts.type ?? 'text/csv; charset=utf-8' }, body,
    });
    return { status: res.status, body: await res.json() };
  }
  const verify = (t: Tenant, code: string): Promise<{ status: number; body: { uses_left?: number } }> =>
    call(svc.base, 'POST', `${VERIFY}?hotspot_id=${t.hotspotId}`, { body: { code, mac: nextMac() } });
  async function voucherByCode(t: Tenant, code: string): Promise<Record<string, unknown> | undefined> {
    const r = await call(svc.base, 'GET', `/v1/vouchers?q=${encodeURIComponent(code)}`, { auth: t.apiKey });
    return (r.body.data as Record<string, unknown>[]).find((v) => v.code === code);
  }
  const count = async (t: Tenant): Promise<number> => (await call(svc.base, 'GET', '/v1/vouchers', { auth: t.apiKey })).body.total;

  test('imports a file with a BOM and CRLF; a code from it verifies at the portal as soon as the answer arrives', async ({ tenant: t, redis }) => {
    const a = `IMP-${uniq()}`, b = `IMP-${uniq()}`;
    const csv = `\uFEFF${HEADER}\r\n${a},3,,,front desk\r\n${b},,2030-01-01T00:00:00.000Z,premium,\r\n`;
    const r = await importCsv(t, csv);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ imported: 2, invalid: 0, invalid_rows: [], batch_id: expect.stringMatching(/^vbt_/) });
    const v = await verify(t, a);
    expect(v.status).toBe(200);
    expect(v.body.uses_left).toBe(2);
    const rowA = await voucherByCode(t, a);
    expect(rowA).toMatchObject({ max_uses: 3, notes: 'front desk', expires_at: null });
    const rowB = await voucherByCode(t, b);
    expect(rowB).toMatchObject({ max_uses: null, bandwidth_profile: 'premium', expires_at: '2030-01-01T00:00:00.000Z' });
    expect(rowB!.bandwidth_down_mbps).not.toBeNull();
    // The Redis hash is put-voucher's, as for any voucher.
    expect(await redis.hget(keys.voucher(t.tenantId, a), 'id')).toBe(rowA!.id);
    const { rows } = await svc.service.engine.pool.query('SELECT DISTINCT batch_id, source FROM vouchers WHERE tenant_id = $1', [t.tenantId]);
    expect(rows).toEqual([{ batch_id: r.body.batch_id, source: 'csv' }]);
  });

  test('a wrong or reordered header is 400 csv_header_invalid naming both headers, and nothing is imported', async ({ tenant: t }) => {
    const code = `HDR-${uniq()}`;
    for (const header of ['code,max_uses,expires_at,notes,bandwidth_profile', 'Code,max_uses,expires_at,bandwidth_profile,notes', 'voucher']) {
      const r = await importCsv(t, `${header}\n${code},1,,,\n`);
      expect(r.status, header).toBe(400);
      expect(r.body.error).toBe('csv_header_invalid');
      expect(r.body.message).toContain(`"${header}"`);
      expect(r.body.message).toContain(`"${HEADER}"`);
      expect(r.body).toMatchObject({ found: header, expected: HEADER });
    }
    expect((await importCsv(t, '')).body.error).toBe('csv_header_invalid');
    expect(await count(t)).toBe(0);
  });

  test('RFC 4180 quoting: quoted commas, quoted line breaks and doubled quotes; Turkish notes round-trip; line numbers are where records start', async ({ tenant: t }) => {
    const [a, b, c, d] = [`Q-${uniq()}`, `Q-${uniq()}`, `Q-${uniq()}`, `Q-${uniq()}`];
    const notes = 'Şişli, Çarşı "Ğüöı" İstanbul';
    const csv = [
      HEADER, // 1
      `${a},1,,,"a, b, c"`, // 2
      `${b},1,,,"first line`, // 3
      `second line"`, // 4
      'bad code!,1,,,x', // 5
      `${c},1,,,"${notes.replaceAll('"', '""')}"`, // 6
      `"${d}",1,,,"x\r\ny\r\nz"`, // 7-9 (CRLF inside the quotes)
      'x y,1,,,', // 10
      '',
    ].join('\n');
    const r = await importCsv(t, csv);
    expect(r.status).toBe(200);
    expect(r.body.imported).toBe(4);
    expect(r.body.invalid_rows.map((x) => [x.line, x.reason])).toEqual([[5, 'code_invalid'], [10, 'code_invalid']]);
    expect((await voucherByCode(t, a))!.notes).toBe('a, b, c');
    expect((await voucherByCode(t, b))!.notes).toBe('first line\nsecond line');
    expect((await voucherByCode(t, c))!.notes).toBe(notes);
    expect((await voucherByCode(t, d))!.notes).toBe('x\r\ny\r\nz');
  });

  test('CRLF file with a quoted CRLF break: the next records keep their line numbers', async ({ tenant: t }) => {
    const csv = [HEADER, `M-${uniq()},1,,,"one\r\ntwo"`, 'M-BAD,zero,,,', `M-${uniq()},,,nope,`].join('\r\n');
    const r = await importCsv(t, csv);
    expect(r.body.invalid_rows.map((x) => [x.line, x.reason])).toEqual([[4, 'max_uses_invalid'], [5, 'unknown_bandwidth_profile']]);
  });

  test('bad numbers, dates, profiles and column counts are reported by line and reason; the valid rows are imported', async ({ tenant: t }) => {
    const ok = `OK-${uniq()}`;
    const rows = [
      `${ok},2,2031-05-06,basic,`, // 2
      `N1-${uniq()},0,,,`, // 3
      `N2-${uniq()},-1,,,`, // 4
      `N3-${uniq()},1.5,,,`, // 5
      `N4-${uniq()},abc,,,`, // 6
      `D1-${uniq()},1,2031-02-30,,`, // 7
      `D2-${uniq()},1,31/12/2031,,`, // 8
      `D3-${uniq()},1,2031-12-31T10:00:00,,`, // 9: a timestamp without a zone
      `P1-${uniq()},1,,no-such-profile,`, // 10
      `P2-${uniq()},1,,constructor,`, // 11
      `C1-${uniq()},1,,`, // 12
      `C2-${uniq()},1,,,,extra`, // 13
      `T-${uniq()},1,,,${'x'.repeat(2001)}`, // 14
    ];
    const r = await importCsv(t, [HEADER, ...rows].join('\n'));
    expect(r.status).toBe(200);
    expect(r.body.imported).toBe(1);
    expect(r.body.invalid).toBe(12);
    expect(r.body.invalid_rows.map((x) => [x.line, x.reason])).toEqual([
      [3, 'max_uses_invalid'], [4, 'max_uses_invalid'], [5, 'max_uses_invalid'], [6, 'max_uses_invalid'],
      [7, 'expires_at_invalid'], [8, 'expires_at_invalid'], [9, 'expires_at_invalid'],
      [10, 'unknown_bandwidth_profile'], [11, 'unknown_bandwidth_profile'],
      [12, 'column_count'], [13, 'column_count'], [14, 'notes_invalid'],
    ]);
    for (const x of r.body.invalid_rows) expect(x.message.length).toBeGreaterThan(10);
    expect(await count(t)).toBe(1);
  });

  test('duplicates within the file (first imported) and against existing live codes; a deleted code may be imported again', async ({ tenant: t }) => {
    const dup = `DUP-${uniq()}`, old = `OLD-${uniq()}`, gone = `GONE-${uniq()}`;
    expect((await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: old } })).status).toBe(201);
    const del = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: gone } });
    expect((await call(svc.base, 'DELETE', `/v1/vouchers/${del.body.id}`, { auth: t.apiKey })).status).toBe(200);
    const r = await importCsv(t, [HEADER, `${dup},5,,,first`, `${old},1,,,`, `${dup},1,,,second`, `${gone},1,,,`].join('\n'));
    expect(r.body.imported).toBe(2);
    expect(r.body.invalid_rows.map((x) => [x.line, x.reason])).toEqual([[3, 'code_exists'], [4, 'duplicate_in_file']]);
    expect((await voucherByCode(t, dup))!.notes).toBe('first');
    expect((await verify(t, gone)).status).toBe(200);
  });

  test('duplicates across write chunks are still duplicate_in_file, the first imported', async ({ svc: s, tenant: t }) => {
    const { VoucherImport } = await import('../../engine/vouchers/voucher-import.js');
    const { Readable } = await import('node:stream');
    const engine = s.service.engine;
    const small = new VoucherImport(engine.pool, engine.redis, engine.bandwidthProfiles, 2);
    const codes = [`X1-${uniq()}`, `X2-${uniq()}`, `X3-${uniq()}`];
    const csv = [HEADER, `${codes[0]},1,,,a`, `${codes[1]},1,,,`, `${codes[2]},1,,,`, `${codes[0]},1,,,b`].join('\n');
    const r = await small.import(t.tenantId, Readable.from([Buffer.from(csv)]), { valid_from: null, valid_until: null });
    expect([r.imported, r.invalid_rows.map((x) => [x.line, x.reason])]).toEqual([3, [[5, 'duplicate_in_file']]]);
    expect((await voucherByCode(t, codes[0]!))!.notes).toBe('a');
  });

  test('Redis failing part-way: the chunk is withdrawn from Postgres, the error names the batch and what was imported, and those codes work', async ({ svc: s, tenant: t }) => {
    const { VoucherImport } = await import('../../engine/vouchers/voucher-import.js');
    const { defineScripts } = await import('../../engine/redis/scripts.js');
    const { Readable } = await import('node:stream');
    const { Redis } = await import('ioredis');
    const engine = s.service.engine;
    // A Redis connection of the import's own, lost once the second chunk is committed to Postgres.
    const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    defineScripts(redis);
    await new Promise((ready) => redis.once('ready', ready)); // no offline queue: connected before the first chunk
    let inserts = 0;
    const pool = new Proxy(engine.pool, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (prop !== 'query') return typeof v === 'function' ? v.bind(target) : v;
        return async (...args: Parameters<typeof target.query>) => {
          const out = await (target.query as (...a: unknown[]) => Promise<unknown>)(...args);
          if (String(args[0]).startsWith('INSERT INTO vouchers') && ++inserts === 2) redis.disconnect();
          return out;
        };
      },
    });
    const small = new VoucherImport(pool, redis, engine.bandwidthProfiles, 2);
    const codes = [1, 2, 3, 4, 5].map(() => `RF-${uniq()}`);
    const csv = [HEADER, ...codes.map((c) => `${c},1,,,`)].join('\n');
    const err = await small.import(t.tenantId, Readable.from([Buffer.from(csv)]), { valid_from: null, valid_until: null }).then(() => null, (e: unknown) => e);
    // Redis is away, so the failed chunk's codes cannot be confirmed gone from it: their Postgres rows stay and count.
    expect(err).toMatchObject({ code: 'voucher_import_interrupted', status: 503, fields: { imported: 4, batch_id: expect.stringMatching(/^vbt_/) } });
    const { rows } = await engine.pool.query('SELECT code FROM vouchers WHERE tenant_id = $1 AND deleted_at IS NULL ORDER BY code', [t.tenantId]);
    expect(rows.map((r: { code: string }) => r.code).sort()).toEqual(codes.slice(0, 4).sort());
    for (const c of codes.slice(0, 2)) expect((await verify(t, c)).status).toBe(200);
    expect((await verify(t, codes[4]!)).status).toBe(404);
    redis.disconnect();
  });

  test("a date is the end of that day in the hotspot's zone: ahead of UTC, behind it, and UTC for a tenant of two hotspots", async ({ tenant: ist }) => {
    const day = '2031-12-01';
    const ny = await newTenant(svc.service);
    await svc.service.engine.pool.query("UPDATE hotspots SET timezone = 'America/New_York' WHERE tenant_id = $1", [ny.tenantId]);
    const two = await newTenant(svc.service);
    await svc.service.engine.hotspots.create(two.tenantId, { name: 'Second', timezone: 'Asia/Tokyo' });
    const cases: [Tenant, string, string][] = [
      [ist, '2031-12-01T20:59:59.999Z', 'Europe/Istanbul'], // UTC+3
      [ny, '2031-12-02T04:59:59.999Z', 'America/New_York'], // UTC-5 in December
      [two, '2031-12-01T23:59:59.999Z', 'UTC'],
    ];
    for (const [t, expected, zone] of cases) {
      const code = `Z-${uniq()}`;
      const r = await importCsv(t, `${HEADER}\n${code},1,${day},,\n`);
      expect(r.body.time_zone).toBe(zone);
      expect((await voucherByCode(t, code))!.expires_at, zone).toBe(expected);
    }
  });

  test('multipart with the file in "file" (the console surface too), and valid_from/valid_until applied to every row', async ({ tenant: t }) => {
    const code = `MP-${uniq()}`;
    const form = new FormData();
    form.append('note', 'ignored');
    form.append('file', new Blob([`${HEADER}\n${code},1,,,\n`], { type: 'text/csv' }), 'vouchers.csv');
    const query = '?valid_from=2031-06-01T10:00:00Z&valid_until=2031-06-01T22:00:00Z';
    const res = await fetch(`${svc.base}/api/v1/vouchers/import${query}`, { method: 'POST', headers: { 'x-api-key': t.apiKey }, body: form });
    const body = await res.json() as Report;
    expect([res.status, body.imported]).toEqual([200, 1]);
    const { rows } = await svc.service.engine.pool.query('SELECT valid_from, valid_until FROM vouchers WHERE tenant_id = $1 AND code = $2', [t.tenantId, code]);
    expect(rows[0]).toEqual({ valid_from: new Date('2031-06-01T10:00:00Z'), valid_until: new Date('2031-06-01T22:00:00Z') });

    const empty = new FormData();
    empty.append('other', new Blob(['x']), 'x.csv');
    const missing = await fetch(`${svc.base}/v1/vouchers/import`, { method: 'POST', headers: { 'x-api-key': t.apiKey }, body: empty });
    expect([missing.status, (await missing.json()).error]).toEqual([400, 'validation_failed']);
    const json = await importCsv(t, '{}', { type: 'application/json' });
    expect([json.status, json.body.error]).toEqual([415, 'unsupported_media_type']);
  });

  test('413 payload_too_large beyond VOUCHER_IMPORT_MAX_BYTES: declared, and found while streaming a chunked body', async ({ tenant: t }) => {
    const big = `${HEADER}\n${Array.from({ length: 4000 }, (_, i) => `BIG-${i}-${uniq()},1,,,`).join('\n')}\n`;
    expect(Buffer.byteLength(big)).toBeGreaterThan(LIMIT);
    const declared = await importCsv(t, big);
    expect([declared.status, declared.body.error]).toEqual([413, 'payload_too_large']);
    // No Content-Length: a stream of chunks, refused when the count passes the limit.
    const bytes = Buffer.from(big);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 8192) c.enqueue(bytes.subarray(i, i + 8192));
        c.close();
      },
    });
    const res = await fetch(`${svc.base}/v1/vouchers/import`, {
      method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'text/csv' }, body: stream, duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await res.json()).error).toBe('payload_too_large');
  });

  test("tenant isolation: another tenant's same code imports fine and is never mentioned", async ({ tenant: t }) => {
    const other = await newTenant(svc.service);
    const code = `ISO-${uniq()}`;
    expect((await importCsv(other, `${HEADER}\n${code},1,,,theirs\n`)).body.imported).toBe(1);
    const r = await importCsv(t, `${HEADER}\n${code},1,,,ours\n`);
    expect(r.body).toMatchObject({ imported: 1, invalid: 0, invalid_rows: [] });
    expect((await voucherByCode(t, code))!.notes).toBe('ours');
    expect((await voucherByCode(other, code))!.notes).toBe('theirs');
    expect((await verify(t, code)).status).toBe(200);
  });

  test('the import is audited with its counts and batch, and needs credentials', async ({ tenant: t }) => {
    const r = await importCsv(t, `${HEADER}\nAUD-${uniq()},1,,,\nbad!,1,,,\n`);
    const anon = await fetch(`${svc.base}/v1/vouchers/import`, { method: 'POST', headers: { 'content-type': 'text/csv' }, body: HEADER });
    expect(anon.status).toBe(401);
    // The chain is written by the outbox sink, a moment after the answer.
    const audited = (): Promise<{ rows: { details: Record<string, unknown> }[] }> => svc.service.engine.pool.query(
      `SELECT details FROM audit_records WHERE tenant_id = $1 AND event_type = 'voucher_import'`, [t.tenantId]);
    await until(async () => (await audited()).rows.length > 0);
    const again = await audited();
    expect(again.rows[0]!.details).toMatchObject({ batch_id: r.body.batch_id, imported: 1, invalid: 1 });
  });

  test('the valid_from/valid_until window is checked as a creation checks it: until not after from, or already past, is 400 and imports nothing', async ({ tenant: t }) => {
    const csv = `${HEADER}\nWIN-${uniq()},1,,,\n`;
    for (const query of ['?valid_from=2031-06-01T22:00:00Z&valid_until=2031-06-01T10:00:00Z', '?valid_from=2031-06-01T10:00:00Z&valid_until=2031-06-01T10:00:00Z',
      '?valid_until=2020-01-01T00:00:00Z']) {
      const r = await importCsv(t, csv, { query });
      expect([r.status, r.body.error], query).toEqual([400, 'validation_failed']);
      expect((r.body.details as { field: string }[])[0]!.field).toBe('valid_until');
    }
    expect(await count(t)).toBe(0);
  });

  test('an unterminated quote or a record past 16384 characters is 400 csv_record_unreadable naming its line; nothing of a one-chunk file is imported', async ({ tenant: t }) => {
    const open = await importCsv(t, [HEADER, `UQ-${uniq()},1,,,x`, `UQ-${uniq()},1,,,"never closed`, `UQ-${uniq()},1,,,`, ''].join('\n'));
    expect([open.status, open.body.error, open.body.line]).toEqual([400, 'csv_record_unreadable', 3]);
    expect(open.body.message).toContain('line 3');
    const long = await importCsv(t, [HEADER, `UL-${uniq()},1,,,x`, `UL-${uniq()},1,,,${'y'.repeat(20_000)}`, ''].join('\n'));
    expect([long.status, long.body.error, long.body.line]).toEqual([400, 'csv_record_unreadable', 3]);
    expect(await count(t)).toBe(0);
  });

  test('an import failing after a chunk was committed answers the batch and count, and is audited with them (those vouchers are live)', async ({ tenant: t }) => {
    const rows = Array.from({ length: 5001 }, (_, i) => `P${String(i).padStart(4, '0')},,,,`);
    const r = await importCsv(t, [HEADER, ...rows, 'PX,1,,,"open', ''].join('\n'));
    expect([r.status, r.body.error, r.body.imported, r.body.line], JSON.stringify(r.body)).toEqual([400, 'csv_record_unreadable', 5000, 5003]);
    expect((await verify(t, 'P0000')).status).toBe(200);
    const audited = (): Promise<{ rows: { details: Record<string, unknown> }[] }> => svc.service.engine.pool.query(
      `SELECT details FROM audit_records WHERE tenant_id = $1 AND event_type = 'voucher_import'`, [t.tenantId]);
    await until(async () => (await audited()).rows.length > 0);
    expect((await audited()).rows[0]!.details).toMatchObject({ batch_id: r.body.batch_id, imported: 5000, error: 'csv_record_unreadable' });
    const unconfirmed = await svc.service.engine.pool.query(
      `SELECT 1 FROM audit_records WHERE tenant_id = $1 AND event_type = 'operator_change_unconfirmed'`, [t.tenantId]);
    expect(unconfirmed.rowCount).toBe(0);
  });
});
