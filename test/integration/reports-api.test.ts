import { describe, expect } from 'vitest';
import { call, newTenant, serviceTest, until } from '../support/fixture.js';

const test = serviceTest();

const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';

/** GET /v1/reports/sessions and /v1/reports/analytics over HTTP, from a real portal sign-in to the answer. */
describe('reports API', () => {
  test('a portal sign-in carries its device type to Postgres and into the analytics', async ({ svc, tenant, voucher, mac, db }) => {
    const m = mac();
    const res = await fetch(`${svc.base}/api/v1/hotspot-portal/voucher/verify`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': IPHONE },
      body: JSON.stringify({ hotspot_id: tenant.hotspotId, code: voucher.code, mac: m, ip: '10.1.2.3' }),
    });
    expect(res.status).toBe(200);
    const { session_id: sid } = (await res.json()) as { session_id: string };
    const read = async () => (await db.query<{ device_type: string; day: string }>(
      "SELECT device_type, (started_at AT TIME ZONE 'Europe/Istanbul')::date::text AS day FROM sessions WHERE id = $1", [sid])).rows[0];
    await until(async () => (await read()) !== undefined, { what: 'the session row stored by the sink' });
    const row = (await read())!;
    expect(row.device_type).toBe('ios');
    const a = await call(svc.base, 'GET', `/v1/reports/analytics?from=${row.day}&to=${row.day}&hotspot_id=${tenant.hotspotId}`, { auth: tenant.apiKey });
    expect(a.status, JSON.stringify(a.body)).toBe(200);
    expect(a.body).toMatchObject({
      period: { from: row.day, to: row.day }, total_sessions: 1, unique_devices: 1, avg_duration_minutes: 0,
      auth_methods: { voucher: 1, sms_otp: 0, msgapp_otp: 0, sponsor: 0, email: 0 }, device_types: { ios: 1, android: 0, windows: 0, macos: 0 },
    });
    expect(Object.keys(a.body as object).sort()).toEqual(['auth_methods', 'avg_duration_minutes', 'device_types', 'peak_hour', 'period', 'total_sessions', 'unique_devices']);
    expect((a.body as { peak_hour: string }).peak_hour).toMatch(/^\d\d:00$/);
  });

  test('the session report as streamed CSV with a header row, and as JSON with totals', async ({ svc, tenant, db }) => {
    // 3,000 sessions on 5 May 2026 in Istanbul (UTC+3), one with a formula for an SSID, and one on the 6th that stays out.
    await db.query(`INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, ssid, started_at, ends_at, ended_at, bytes_in, bytes_out, device_type)
      SELECT 'sess_csv' || $1 || lpad(g::text, 5, '0'), $1, $2, '02:00:00:00:' || lpad(to_hex(g % 256), 2, '0') || ':01', 'voucher',
             CASE WHEN g = 1 THEN '=HYPERLINK("x")' ELSE 'Guest' END,
             timestamptz '2026-05-05 09:00:00+03' + g * interval '1 second', timestamptz '2026-05-05 23:00:00+03',
             timestamptz '2026-05-05 09:30:00+03' + g * interval '1 second', 100, 200, 'android'
      FROM generate_series(1, 3000) g`, [tenant.tenantId, tenant.hotspotId]);
    await db.query(`INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, started_at, ends_at)
      VALUES ('sess_csvlate' || $1, $1, $2, '02:00:00:00:ff:02', 'voucher', timestamptz '2026-05-06 00:30:00+03', timestamptz '2026-05-06 02:00:00+03')`,
    [tenant.tenantId, tenant.hotspotId]);
    const res = await fetch(`${svc.base}/v1/reports/sessions?from=2026-05-05&to=2026-05-05&format=csv`, { headers: { 'x-api-key': tenant.apiKey } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    // Streamed: no length known in advance.
    expect(res.headers.get('content-length')).toBeNull();
    const text = await res.text();
    const lines = text.trimEnd().split('\n');
    // One hotspot named: its local midnights bound the rows exactly (another query plan), the same file.
    const one = await fetch(`${svc.base}/v1/reports/sessions?from=2026-05-05&to=2026-05-05&format=csv&hotspot_id=${tenant.hotspotId}`, { headers: { 'x-api-key': tenant.apiKey } });
    expect(await one.text()).toBe(text);
    expect(lines[0]).toBe('session_id,hotspot_id,ssid,mac,auth_method,device_type,started_at,ended_at,duration_minutes,bytes_in,bytes_out,end_reason');
    expect(lines).toHaveLength(3001);
    expect(lines[1]).toBe(`ses_csv${tenant.tenantId}00001,${tenant.hotspotId},"'=HYPERLINK(""x"")",02:00:00:00:01:01,voucher,android,2026-05-05T06:00:01.000Z,2026-05-05T06:30:01.000Z,30,100,200,`);
    const json = await call(svc.base, 'GET', '/v1/reports/sessions?from=2026-05-05&to=2026-05-05', { auth: tenant.apiKey });
    expect(json.status).toBe(200);
    const body = json.body as { period: unknown; data: { session_id: string }[]; totals: unknown };
    expect(body.period).toEqual({ from: '2026-05-05', to: '2026-05-05' });
    expect(body.data).toHaveLength(3000);
    expect(body.totals).toEqual({ sessions: 3000, ended: 3000, duration_minutes: 90_000, bytes_in: 300_000, bytes_out: 600_000 });
    const late = await call(svc.base, 'GET', '/v1/reports/sessions?from=2026-05-06&to=2026-05-06', { auth: tenant.apiKey });
    expect((late.body as { data: { session_id: string }[] }).data.map((r) => r.session_id)).toEqual([`ses_csvlate${tenant.tenantId}`]);
    const lateOne = await call(svc.base, 'GET', `/v1/reports/sessions?from=2026-05-06&to=2026-05-06&hotspot_id=${tenant.hotspotId}`, { auth: tenant.apiKey });
    expect(lateOne.body).toEqual(late.body);
  });

  test('366 days are allowed, 367 refused; a reversed range and a bad date are 400 with their own codes', async ({ svc, tenant }) => {
    const get = (q: string) => call(svc.base, 'GET', `/v1/reports/analytics?${q}`, { auth: tenant.apiKey });
    expect((await get('from=2024-01-01&to=2024-12-31')).status).toBe(200); // 366 days, a leap year
    const long = await get('from=2024-01-01&to=2025-01-01');
    expect(long.status).toBe(400);
    expect(long.body).toMatchObject({ error: 'report_range_too_long', max_days: 366 });
    expect((long.body as { message: string }).message).toContain('367 days');
    expect((await get('from=2026-03-10&to=2026-03-09')).body).toMatchObject({ error: 'report_range_reversed' });
    expect((await get('from=2026-02-30&to=2026-03-09')).body).toMatchObject({ error: 'report_date_invalid', field: 'from' });
    expect((await get('from=2026-02-01&to=tomorrow')).body).toMatchObject({ error: 'report_date_invalid', field: 'to' });
    const csv = await call(svc.base, 'GET', '/v1/reports/sessions?from=2024-01-01&to=2025-01-01&format=csv', { auth: tenant.apiKey });
    expect(csv.status).toBe(400);
    expect(csv.body).toMatchObject({ error: 'report_range_too_long' });
  });

  test("another tenant's hotspot is unknown; a tenant without the reports module is refused", async ({ svc, tenant }) => {
    const other = await newTenant(svc.service, 'Other Venue');
    for (const path of ['/v1/reports/analytics', '/v1/reports/sessions']) {
      const r = await call(svc.base, 'GET', `${path}?from=2026-05-05&to=2026-05-05&hotspot_id=${other.hotspotId}`, { auth: tenant.apiKey });
      expect(r.status, path).toBe(404);
      expect(r.body).toMatchObject({ error: 'hotspot_not_found' });
    }
    const unlicensed = await newTenant(svc.service, 'No Reports', ['vouchers', 'sessions']);
    const r = await call(svc.base, 'GET', '/v1/reports/analytics?from=2026-05-05&to=2026-05-05', { auth: unlicensed.apiKey });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ error: 'module_not_licensed' });
  });

  test('the OpenAPI document describes both paths', async ({ svc }) => {
    const doc = (await call(svc.base, 'GET', '/v1/openapi.json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/reports/sessions', '/v1/reports/analytics']));
  });

  test('JSON keeps the SSID as it is (the formula guard is the CSV\'s); a row under a legal hold shows no MAC in either', async ({ svc, tenant, db }) => {
    await db.query(`INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, ssid, started_at, ends_at, legal_hold)
      VALUES ('sess_f1' || $1, $1, $2, '02:00:00:00:aa:01', 'voucher', '=1+2', timestamptz '2026-04-04 10:00:00+03', timestamptz '2026-04-04 12:00:00+03', NULL),
             ('sess_f2' || $1, $1, $2, '02:00:00:00:aa:02', 'voucher', 'Guest', timestamptz '2026-04-04 11:00:00+03', timestamptz '2026-04-04 12:00:00+03', 'lh_test')`,
    [tenant.tenantId, tenant.hotspotId]);
    const json = await call(svc.base, 'GET', '/v1/reports/sessions?from=2026-04-04&to=2026-04-04', { auth: tenant.apiKey });
    const data = (json.body as { data: { ssid: string; mac: string }[] }).data;
    expect(data.map((r) => [r.ssid, r.mac])).toEqual([['=1+2', '02:00:00:00:aa:01'], ['Guest', 'erased']]);
    const csv = await (await fetch(`${svc.base}/v1/reports/sessions?from=2026-04-04&to=2026-04-04&format=csv`, { headers: { 'x-api-key': tenant.apiKey } })).text();
    const rows = csv.trimEnd().split('\n').slice(1).map((l) => l.split(','));
    expect(rows.map((r) => [r[2], r[3]])).toEqual([["'=1+2", '02:00:00:00:aa:01'], ['Guest', 'erased']]);
    expect(csv).not.toContain('aa:02');
  });

  test('session report downloads are capped per process: beyond the cap, 503 service_unavailable until one ends', async ({ svc, tenant }) => {
    const { MAX_CONCURRENT_REPORTS } = await import('../../engine/reports/report-service.js');
    const reports = svc.service.engine.reports;
    const q = { from: '2026-05-05', to: '2026-05-05' };
    // Downloads whose readers stop after the first chunk: each holds its place (and its connection) meanwhile.
    const held: AsyncIterator<Buffer>[] = [];
    for (let i = 0; i < MAX_CONCURRENT_REPORTS; i++) {
      const it = (i % 2 ? (await reports.sessionsCsv(tenant.tenantId, q)).stream : await reports.sessionsJson(tenant.tenantId, q))[Symbol.asyncIterator]();
      expect((await it.next()).done).toBe(false);
      held.push(it);
    }
    try {
      for (const format of ['', '&format=csv']) {
        const r = await call(svc.base, 'GET', `/v1/reports/sessions?from=2026-05-05&to=2026-05-05${format}`, { auth: tenant.apiKey });
        expect([r.status, (r.body as { error: string }).error], format).toEqual([503, 'service_unavailable']);
      }
    } finally {
      for (const it of held) await it.return?.();
    }
    const r = await call(svc.base, 'GET', '/v1/reports/sessions?from=2026-05-05&to=2026-05-05', { auth: tenant.apiKey });
    expect(r.status).toBe(200);
  });
});
