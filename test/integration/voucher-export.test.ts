import type pg from 'pg';
import { describe, expect } from 'vitest';
import { call, newTenant, serviceTest, until, type Running } from '../support/fixture.js';

const test = serviceTest();
const HEADER = 'code,max_uses,expires_at,bandwidth_profile,notes';

/** RFC 4180 records of a CSV text (quoted fields may hold commas, quotes doubled, line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [], cell = '', quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (ch === '"') quoted = false; else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { row.push(cell); cell = ''; } else if (ch === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; } else if (ch !== '\r') cell += ch;
  }
  if (cell !== '' || row.length) { row.push(cell); rows.push(row); }
  return rows;
}

/** The export's COPY statements of a tenant running in Postgres now. */
async function copies(db: pg.Client, tenantId: string): Promise<Array<{ state: string; wait_event: string | null }>> {
  const { rows } = await db.query<{ state: string; wait_event: string | null }>(
    `SELECT state, wait_event FROM pg_stat_activity WHERE query LIKE 'COPY (SELECT v.code%' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()`,
    [tenantId]);
  return rows;
}

/**
 * GET /v1/vouchers/export (issue 20 item 2): the import's header, RFC 4180
 * quoting, formula injection guarded, full ISO timestamps, selected by batch
 * or the list's filter, tenant-scoped, matched before /v1/vouchers/:id, and
 * streamed from Postgres with the client's back-pressure (memory flat).
 */
describe('voucher CSV export', () => {
  let svc: Running;
  test.beforeAll(({ svc: s }) => { svc = s; });
  const get = (path: string, apiKey: string): Promise<Response> => fetch(svc.base + path, { headers: { 'x-api-key': apiKey } });

  test('the header, quoting, formula guard and timestamps; an export holds what the import takes', async ({ tenant: t }) => {
    const notes: Record<string, string> = {
      'EX-COMMA': 'gate 3, row 12', 'EX-QUOTE': 'say "hi"', 'EX-BREAK': 'line one\r\nline two', 'EX-FORMULA': '=HYPERLINK("http://x","y")',
      'EX-AT': '@SUM(A1)', 'EX-PHONE': '+905321234567', 'EX-TR': 'Şükrü Saraçoğlu, kapı İ',
    };
    for (const [code, note] of Object.entries(notes)) {
      const r = await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code, notes: note, max_uses: 3, expires_at: '2031-05-04T20:45:00+03:00', bandwidth_profile: 'standard' } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    await call(svc.base, 'POST', '/v1/vouchers', { auth: t.apiKey, body: { code: 'EX-OPEN', max_uses: null } });

    const res = await get('/v1/vouchers/export', t.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="vouchers-[0-9-]+\.csv"$/);
    const text = await res.text();
    expect(text.split('\n')[0]).toBe(HEADER);
    const rows = parseCsv(text);
    expect(rows[0]).toEqual(HEADER.split(','));
    const byCode = new Map(rows.slice(1).map((r) => [r[0]!, r]));
    expect(byCode.size).toBe(8);
    expect(byCode.get('EX-COMMA')).toEqual(['EX-COMMA', '3', '2031-05-04T17:45:00.000Z', 'standard', 'gate 3, row 12']);
    expect(byCode.get('EX-QUOTE')![4]).toBe('say "hi"');
    expect(text).toContain('"say ""hi"""');
    expect(byCode.get('EX-BREAK')![4]).toBe('line one\r\nline two');
    expect(byCode.get('EX-FORMULA')![4]).toBe('\'=HYPERLINK("http://x","y")');
    expect(byCode.get('EX-AT')![4]).toBe("'@SUM(A1)");
    expect(byCode.get('EX-PHONE')![4]).toBe('+905321234567');
    expect(byCode.get('EX-TR')![4]).toBe('Şükrü Saraçoğlu, kapı İ');
    expect(byCode.get('EX-OPEN')).toEqual(['EX-OPEN', '', '', '', '']);
    // Nothing else opens a formula; a plain signed number (a phone) is left as it is.
    for (const r of rows.slice(1)) for (const cell of r.slice(1)) if (!/^[+-]\d+$/.test(cell)) expect(cell, cell).not.toMatch(/^[=+\-@\t\r]/);

    // The list's filter: text, and status.
    const q = parseCsv(await (await get('/v1/vouchers/export?q=saraço', t.apiKey)).text());
    expect(q.slice(1).map((r) => r[0])).toEqual(['EX-TR']);
    expect(parseCsv(await (await get('/v1/vouchers/export?status=expired', t.apiKey)).text())).toEqual([HEADER.split(',')]);
    expect((await get('/v1/vouchers/export?status=nonsense', t.apiKey)).status).toBe(400);
  });

  test('a batch by its id, on both surfaces; another tenant\'s batch id gives the header alone; `export` is no voucher id', async ({ svc: s, tenant: t }) => {
    const batch = await call(s.base, 'POST', '/api/v1/vouchers', { auth: t.apiKey, body: { count: 5, max_uses: 2 } });
    expect(batch.status).toBe(201);
    const codes = (batch.body.vouchers as Array<{ code: string }>).map((v) => v.code).sort();
    for (const path of ['/v1/vouchers/export', '/api/v1/vouchers/export']) {
      const res = await get(`${path}?batch_id=${batch.body.batch_id}`, t.apiKey);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="vouchers-${batch.body.batch_id}.csv"`);
      const rows = parseCsv(await res.text());
      expect(rows.slice(1).map((r) => r[0]).sort()).toEqual(codes);
    }
    const other = await newTenant(s.service, 'Other Venue');
    const theirs = await get(`/v1/vouchers/export?batch_id=${batch.body.batch_id}`, other.apiKey);
    expect(theirs.status).toBe(200);
    expect(await theirs.text()).toBe(`${HEADER}\n`);
    expect(parseCsv(await (await get('/v1/vouchers/export', other.apiKey)).text())).toEqual([HEADER.split(',')]);
    expect((await get('/v1/vouchers/export', 'not-a-key')).status).toBe(401);
    // A real id still reads as one.
    const one = await call(s.base, 'GET', `/v1/vouchers/${(batch.body.vouchers as Array<{ id: string }>)[0]!.id}`, { auth: t.apiKey });
    expect(one.status).toBe(200);
  });

  test('streamed: the first bytes arrive while Postgres is still writing the rest, held by the client\'s pace; all rows arrive', async ({ svc: s, db }) => {
    const t = await newTenant(s.service, 'Stream Venue');
    const N = 3000;
    // 3,000 rows of 20 kB notes (60 MB): far more than every socket buffer on the way holds.
    await db.query(
      `INSERT INTO vouchers (id, tenant_id, code, max_uses, notes, source)
       SELECT 'vch_st' || lpad(i::text, 10, '0') || substr($1, 5, 8), $1, 'ST-' || i, 1, repeat('n', 20000), 'test' FROM generate_series(1, $2) i`,
      [t.tenantId, N]);
    const res = await get('/v1/vouchers/export', t.apiKey);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    let received = first.value!.byteLength;
    // The client reads no further: were the answer built whole before its first byte, the COPY would be over by now.
    // Streamed, the COPY waits on its socket (ClientWrite) until the client reads on.
    await until(async () => (await copies(db, t.tenantId)).some((c) => c.state === 'active' && c.wait_event === 'ClientWrite'),
      { what: 'the export COPY waiting for the client', timeoutMs: 30_000, seen: () => copies(db, t.tenantId) });
    expect(received).toBeLessThan(N * 20_000);
    const decoder = new TextDecoder();
    let text = decoder.decode(first.value, { stream: true });
    let lines = 0;
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      received += r.value.byteLength;
      text += decoder.decode(r.value, { stream: true });
      const cut = text.lastIndexOf('\n');
      lines += text.slice(0, cut + 1).split('\n').length - 1;
      text = text.slice(cut + 1);
    }
    expect(lines).toBe(N + 1);
    expect(received).toBeGreaterThan(N * 20_000);
    // Ended: no backend runs it. A pooled connection that ran it keeps it as its last query while
    // idle (pg_stat_activity.query), until another query takes that connection or the pool closes it.
    await until(async () => (await copies(db, t.tenantId)).every((c) => c.state !== 'active'),
      { what: 'the COPY to end', seen: () => copies(db, t.tenantId) });
  });

  test('a client that goes away mid-file ends the COPY in Postgres', async ({ svc: s, db }) => {
    const t = await newTenant(s.service, 'Abort Venue');
    await db.query(
      `INSERT INTO vouchers (id, tenant_id, code, max_uses, notes, source)
       SELECT 'vch_ab' || lpad(i::text, 10, '0') || substr($1, 5, 8), $1, 'AB-' || i, 1, repeat('n', 20000), 'test' FROM generate_series(1, 3000) i`,
      [t.tenantId]);
    const ac = new AbortController();
    const res = await fetch(`${s.base}/v1/vouchers/export`, { headers: { 'x-api-key': t.apiKey }, signal: ac.signal });
    const reader = res.body!.getReader();
    await reader.read();
    await until(async () => (await copies(db, t.tenantId)).length > 0, { what: 'the COPY to run' });
    ac.abort();
    await until(async () => (await copies(db, t.tenantId)).length === 0, { what: 'the COPY to end after the client left', timeoutMs: 30_000, seen: () => copies(db, t.tenantId) });
    // The service still answers exports (its connection went back, or was replaced).
    const small = await get('/v1/vouchers/export?q=AB-2999', t.apiKey);
    expect(small.status).toBe(200);
    expect(parseCsv(await small.text()).map((r) => r[0])).toEqual(['code', 'AB-2999']);
  });
});
