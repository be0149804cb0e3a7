import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect } from 'vitest';
import { consoleReport } from '../../http/routes/console-reports.schemas.js';
import { DEFAULT_MODULES } from '../../engine/tenants/tenant-service.js';
import { call, newTenant, serviceTest, until, type Tenant } from '../support/fixture.js';

const test = serviceTest();
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
/** The answer as the OpenAPI document describes it (additionalProperties false throughout): the schema and the engine agree. */
const matchesSchema = addFormats(new Ajv({ strict: false })).compile(consoleReport.schema);
const hourOf = (iso: string): number => Math.floor(Date.parse(iso) / 3_600_000);
const PHONE = '+905551110001';

/**
 * Sessions of hotspot A (Istanbul, +3) whose right answers over 2026-03-05 (Thu) .. 2026-03-10 (Tue) are worked
 * out by hand in the test below. [id, mac, method, username, ssid, local start, minutes (null: live), bytes in, out, device type].
 */
const A_ROWS: [string, string, string, string | null, string, string, number | null, number, number, string][] = [
  ['s0', 'M1', 'sms_otp', PHONE, 'Guest', '2026-03-01 12:00', 30, 0, 0, 'ios'], // before: the phone's first visit
  ['s9', 'M3', 'voucher', null, 'Guest', '2026-02-25 10:00', 30, 0, 0, 'android'], // before: M3's first visit
  ['s8', 'M4', 'voucher', null, 'Guest', '2026-02-20 10:00', 30, 0, 0, 'windows'], // before: M4 as a MAC visitor
  ['s1', 'M2', 'sms_otp', PHONE, 'Guest', '2026-03-05 09:10', 30, 1000, 2000, 'ios'], // the phone on another MAC: returning
  ['s2', 'M3', 'voucher', null, 'Guest', '2026-03-05 09:50', 60, 3_000_000_000, 5_000_000_000, 'android'],
  ['s3', 'M3', 'voucher', null, 'Staff', '2026-03-05 18:20', 30, 10, 20, 'android'],
  ['s4', 'M4', 'email', 'a@b.co', 'Guest', '2026-03-09 00:30', 60, 0, 0, 'windows'], // 21:30Z on the 8th; a new identity
  ['s5', 'M1', 'sms_otp', PHONE, 'Guest', '2026-03-10 09:05', null, 0, 0, 'ios'],
  ['s6', 'M5', 'voucher', null, 'Guest', '2026-03-11 00:10', 10, 0, 0, 'other'], // the 10th in UTC, the 11th here: out
  ['s7', 'M5', 'voucher', null, 'Guest', '2026-03-04 23:50', 10, 0, 0, 'other'], // out
];

async function seed(db: { query: (q: string, p: unknown[]) => Promise<unknown> }, t: Tenant, hs: string, zone: string,
  rows: typeof A_ROWS, mac: (k: string) => string): Promise<void> {
  for (const [id, m, method, user, ssid, start, min, bin, bout, dt] of rows) {
    await db.query(
      `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, username, auth_method, ssid, started_at, ends_at, ended_at, status, bytes_in, bytes_out, device_type)
       VALUES ($1, $2, $3, $4, $5, $6, $7, ($8::timestamp AT TIME ZONE $9), ($8::timestamp AT TIME ZONE $9) + interval '1 day',
               ($8::timestamp AT TIME ZONE $9) + $10 * interval '1 minute', CASE WHEN $10::int IS NULL THEN 'active' ELSE 'ended' END, $11, $12, $13)`,
      [`sess_${id}${hs}`, t.tenantId, hs, mac(m), user, method, ssid, start, zone, min, bin, bout, dt]);
  }
}

describe('GET /api/v1/reports/console', () => {
  test('every field over seeded sessions and real recorded sign-in decisions, one venue, then two', async ({ svc, db }) => {
    const eng = svc.service.engine;
    const t = await newTenant(svc.service, 'Console Report', [...DEFAULT_MODULES, 'multi_venue']);
    const macOf = (k: string): string => `02:C0:00:00:00:0${k.slice(1)}`;
    await seed(db, t, t.hotspotId, 'Europe/Istanbul', A_ROWS, macOf);
    // Sign-in decisions through the real recorder (its Redis flush) and the mover (into Postgres).
    const d = (method: string, outcome: 'accept' | 'reject', at: string, n = 1) => {
      for (let i = 0; i < n; i++) eng.decisions.record({ tenantId: t.tenantId, hotspotId: t.hotspotId, method: method as 'voucher', outcome, reason: outcome === 'reject' ? 'voucher_not_found' : '', at: Date.parse(at) });
    };
    d('voucher', 'reject', '2026-03-05T07:00:00Z', 3); // 10:00 on the 5th
    d('voucher', 'accept', '2026-03-05T07:01:00Z', 2);
    d('sms_otp', 'reject', '2026-03-08T22:15:00Z'); // 01:15 on the 9th
    d('email', 'accept', '2026-03-08T21:30:00Z'); // 00:30 on the 9th
    d('sms_otp', 'accept', '2026-03-10T06:00:00Z', 2);
    d('voucher', 'reject', '2026-03-10T21:30:00Z'); // 00:30 on the 11th: out
    d('mac_auth', 'reject', '2026-03-06T10:00:00Z', 5); // a NAS asking again: no sign-in
    await eng.decisions.flush();
    await eng.signInMover.moveTenant(t.tenantId, hourOf('2026-03-05T00:00:00Z'), hourOf('2026-03-11T00:00:00Z'));
    await eng.reports.rebuild(t.tenantId, '2026-02-01', '2026-03-31');

    const q = (s: string) => call(svc.base, 'GET', `/api/v1/reports/console?${s}`, { auth: t.apiKey });
    const r = await q(`preset=custom&from=2026-03-05&to=2026-03-10&hotspot_id=${t.hotspotId}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(matchesSchema(r.body), JSON.stringify(matchesSchema.errors)).toBe(true);
    const zero = { sessions: 0, unique_devices: 0, signins_failed: 0, bytes_in: 0, bytes_out: 0 };
    expect(r.body).toEqual({
      period: { from: '2026-03-05', to: '2026-03-10', preset: 'custom', time_zone: 'Europe/Istanbul', days: 6 },
      hotspots: [{ id: t.hotspotId, name: 'Lobby' }],
      summary: {
        total_sessions: 5, unique_devices: 4, signins_succeeded: 5, signins_failed: 4,
        bytes_in: 3_000_001_010, bytes_out: 5_000_002_020, avg_duration_minutes: 45, peak_hour: '09:00',
      },
      daily: [
        { date: '2026-03-05', sessions: 3, unique_devices: 2, signins_failed: 3, bytes_in: 3_000_001_010, bytes_out: 5_000_002_020 },
        { date: '2026-03-06', ...zero }, { date: '2026-03-07', ...zero }, { date: '2026-03-08', ...zero },
        { date: '2026-03-09', ...zero, sessions: 1, unique_devices: 1, signins_failed: 1 },
        { date: '2026-03-10', ...zero, sessions: 1, unique_devices: 1 },
      ],
      hours: Array.from({ length: 24 }, (_, hour) => ({ hour, sessions: hour === 9 ? 3 : hour === 18 || hour === 0 ? 1 : 0 })),
      ssids: [{ ssid: 'Guest', sessions: 4 }, { ssid: 'Staff', sessions: 1 }],
      top_devices: [
        { mac: '02:C0:00:00:**:**', sessions: 2, last_seen: '2026-03-05T15:20:00Z' }, // M3
        { mac: '02:C0:00:00:**:**', sessions: 1, last_seen: '2026-03-10T06:05:00Z' }, // M1
        { mac: '02:C0:00:00:**:**', sessions: 1, last_seen: '2026-03-08T21:30:00Z' }, // M4
        { mac: '02:C0:00:00:**:**', sessions: 1, last_seen: '2026-03-05T06:10:00Z' }, // M2
      ],
      methods: [
        { method: 'sms_otp', sessions: 2, attempts: 3, succeeded: 2, failed: 1, success_rate: 0.6667 },
        { method: 'msgapp_otp', sessions: 0, attempts: 0, succeeded: 0, failed: 0, success_rate: null },
        { method: 'email', sessions: 1, attempts: 1, succeeded: 1, failed: 0, success_rate: 1 },
        { method: 'voucher', sessions: 2, attempts: 5, succeeded: 2, failed: 3, success_rate: 0.4 },
        { method: 'sponsor', sessions: 0, attempts: 0, succeeded: 0, failed: 0, success_rate: null },
        { method: 'pms', sessions: 0, attempts: 0, succeeded: 0, failed: 0, success_rate: null },
      ],
      guests: {
        // The phone (two MACs, once; seen on 1 March), M3 by its MAC (seen 25 February), a@b.co (new, though its MAC was seen).
        visitors: 3, returning_visitors: 2, returning_rate: 0.6667, avg_dwell_minutes: 45,
        device_types: { ios: 2, android: 2, windows: 1, macos: 0, other: 0 },
        weeks: [
          { week_start: '2026-03-05', visitors: 2, returning_rate: 1, avg_dwell_minutes: 40 },
          { week_start: '2026-03-09', visitors: 2, returning_rate: 0.5, avg_dwell_minutes: 60 },
        ],
      },
    });

    // A second venue in New York (behind UTC; DST begins there on 8 March): M3 once more, at 01:30 EST on the 8th.
    const b = await eng.hotspots.create(t.tenantId, { name: 'Annex', timezone: 'America/New_York' });
    await seed(db, t, b.id, 'America/New_York', [['s10', 'M3', 'voucher', null, 'Annex', '2026-03-08 01:30', 30, 5, 5, 'android']], macOf);
    await eng.reports.rebuild(t.tenantId, '2026-03-01', '2026-03-31', b.id);
    // Repeated and comma-separated ids alike; for several venues the first one's zone when the tenant has none.
    for (const ids of [`hotspot_id=${b.id}&hotspot_id=${t.hotspotId}`, `hotspot_id=${b.id},${t.hotspotId}`]) {
      const two = await q(`preset=custom&from=2026-03-05&to=2026-03-10&${ids}`);
      expect(two.status, JSON.stringify(two.body)).toBe(200);
      const body = two.body as Record<string, any>;
      expect(body.period.time_zone).toBe('America/New_York');
      expect(body.hotspots).toEqual([{ id: b.id, name: 'Annex' }, { id: t.hotspotId, name: 'Lobby' }]);
      expect(body.summary).toMatchObject({ total_sessions: 6, unique_devices: 4, bytes_in: 3_000_001_015, avg_duration_minutes: 42 });
      expect(body.daily[3]).toEqual({ date: '2026-03-08', sessions: 1, unique_devices: 1, signins_failed: 0, bytes_in: 5, bytes_out: 5 });
      expect(body.ssids).toEqual([{ ssid: 'Guest', sessions: 4 }, { ssid: 'Annex', sessions: 1 }, { ssid: 'Staff', sessions: 1 }]);
      expect(body.top_devices[0]).toEqual({ mac: '02:C0:00:00:**:**', sessions: 3, last_seen: '2026-03-08T06:30:00Z' });
      expect(body.guests).toMatchObject({ visitors: 3, returning_visitors: 2 });
    }
    await db.query(`UPDATE tenants SET settings = settings || '{"timezone": "Europe/Istanbul"}' WHERE id = $1`, [t.tenantId]);
    const zoned = await q(`preset=today&hotspot_id=${b.id},${t.hotspotId}`);
    expect((zoned.body as { period: { time_zone: string } }).period.time_zone).toBe('Europe/Istanbul');

    // Eleven venues: 400 (before anything is looked up); another tenant's hotspot: 404, as if unknown.
    const many = await q(`hotspot_id=${Array.from({ length: 11 }, (_, i) => `hsp_${i}`).join(',')}`);
    expect([many.status, many.body]).toEqual([400, expect.objectContaining({ error: 'report_too_many_venues', max_venues: 10 })]);
    const other = await newTenant(svc.service, 'Other', [...DEFAULT_MODULES, 'multi_venue']);
    expect((await q(`hotspot_id=${other.hotspotId}`)).body).toMatchObject({ error: 'hotspot_not_found' });
    expect((await q(`hotspot_id=${t.hotspotId},${other.hotspotId}`)).status).toBe(404);
    expect((await q('preset=custom&from=2026-03-10&to=2026-03-01&hotspot_id=' + t.hotspotId)).body).toMatchObject({ error: 'report_range_reversed' });
    expect((await q('preset=custom&from=2025-01-01&to=2026-01-02&hotspot_id=' + t.hotspotId)).body).toMatchObject({ error: 'report_range_too_long' });
    expect((await q('preset=custom&hotspot_id=' + t.hotspotId)).body).toMatchObject({ error: 'report_date_invalid' });
    // The other tenant's own report of the same days sees none of this one's data.
    const theirs = await call(svc.base, 'GET', `/api/v1/reports/console?preset=custom&from=2026-03-05&to=2026-03-10&hotspot_id=${other.hotspotId}`, { auth: other.apiKey });
    expect((theirs.body as { summary: unknown }).summary).toMatchObject({ total_sessions: 0, signins_failed: 0 });
  });

  test('several venues need the multi_venue module: 403 without it, one venue is fine', async ({ svc, tenant }) => {
    const b = await svc.service.engine.hotspots.create(tenant.tenantId, { name: 'Annex', timezone: 'UTC' });
    const two = await call(svc.base, 'GET', `/api/v1/reports/console?hotspot_id=${tenant.hotspotId}&hotspot_id=${b.id}`, { auth: tenant.apiKey });
    expect([two.status, two.body]).toEqual([403, expect.objectContaining({ error: 'module_not_licensed' })]);
    const one = await call(svc.base, 'GET', `/api/v1/reports/console?hotspot_id=${b.id}`, { auth: tenant.apiKey });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ period: { preset: 'last_7_days', days: 7, time_zone: 'UTC' }, summary: { peak_hour: null } });
    expect((one.body as { daily: unknown[] }).daily).toHaveLength(7);
    expect(matchesSchema(one.body), JSON.stringify(matchesSchema.errors)).toBe(true);
    const doc = (await call(svc.base, 'GET', '/v1/openapi.json')).body as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/v1/reports/console', '/api/v1/reports/sessions']));
    expect((await call(svc.base, 'GET', '/api/v1/reports/console', { auth: tenant.apiKey })).status).toBe(400);
  });

  test('failed sign-ins through the portal are counted; the move into Postgres is idempotent', async ({ svc, tenant, voucher, mac, db }) => {
    const eng = svc.service.engine;
    const verify = (code: string) => fetch(`${svc.base}/api/v1/hotspot-portal/voucher/verify`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hotspot_id: tenant.hotspotId, code, mac: mac(), ip: '10.1.2.3' }),
    });
    const before = Date.now();
    for (const code of ['WRONG-0001', 'WRONG-0002']) expect((await verify(code)).status).toBeGreaterThanOrEqual(400);
    expect((await verify(voucher.code)).status).toBe(200);
    const after = Date.now();
    // One row per hour: attempts that straddle an hour change are split over two rows, so the totals are summed.
    const stored = async () => (await db.query<{ outcome: string; attempts: number }>(
      `SELECT outcome, sum(attempts)::int AS attempts FROM report_signins WHERE tenant_id = $1 AND method = 'voucher' GROUP BY outcome ORDER BY outcome`,
      [tenant.tenantId])).rows;
    const expected = [{ outcome: 'accept', attempts: 1 }, { outcome: 'reject', attempts: 2 }];
    const move = () => eng.signInMover.moveTenant(tenant.tenantId, hourOf(new Date(before).toISOString()) - 1, hourOf(new Date().toISOString()));
    // The recorder flushes every 250 ms; move until the whole flush has landed.
    await until(async () => { await move(); return JSON.stringify(await stored()) === JSON.stringify(expected); }, { what: 'the sign-in counts moved into Postgres' });
    // Moved again, by two movers at once and by the periodic run: the values, not sums.
    await Promise.all([move(), move(), eng.signInMover.runOnce()]);
    expect(await stored()).toEqual(expected);
    // The venue's local days the attempts were made on (two if its midnight passed meanwhile), not "today" when asked.
    const day = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Istanbul' }).format(ms);
    const r = await call(svc.base, 'GET', `/api/v1/reports/console?preset=custom&from=${day(before)}&to=${day(after)}&hotspot_id=${tenant.hotspotId}`, { auth: tenant.apiKey });
    expect((r.body as { summary: unknown }).summary).toMatchObject({ signins_succeeded: 1, signins_failed: 2 });
    expect((r.body as { methods: unknown[] }).methods).toContainEqual({ method: 'voucher', sessions: expect.any(Number), attempts: 3, succeeded: 1, failed: 2, success_rate: 0.3333 });
  });

  test('the session report CSV on the console surface', async ({ svc, tenant }) => {
    const res = await fetch(`${svc.base}/api/v1/reports/sessions?from=2026-03-05&to=2026-03-05&format=csv&hotspot_id=${tenant.hotspotId}`, { headers: { 'x-api-key': tenant.apiKey } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect((await res.text()).split('\n')[0]).toBe('session_id,hotspot_id,ssid,mac,auth_method,device_type,started_at,ended_at,duration_minutes,bytes_in,bytes_out,end_reason');
  });

  test('a sign-in through the portal reaches the SSID and visitor rollups by the sink; erasure removes the visitor keys', async ({ svc, tenant, voucher, mac, db }) => {
    const m = mac();
    const res = await fetch(`${svc.base}/api/v1/hotspot-portal/voucher/verify`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hotspot_id: tenant.hotspotId, code: voucher.code, mac: m, ip: '10.1.2.3', ssid: 'Lobby-WiFi' }),
    });
    expect(res.status).toBe(200);
    const key = `report_visitor_key($1, 'mac', $2)`;
    const visitorRows = async (kind: string, v: string) => (await db.query<{ n: number }>(
      `SELECT ((SELECT count(*) FROM report_visits WHERE tenant_id = $1 AND visitor = ${key.replace("'mac'", `'${kind}'`)})
             + (SELECT count(*) FROM report_visitors WHERE tenant_id = $1 AND visitor = ${key.replace("'mac'", `'${kind}'`)}))::int AS n`, [tenant.tenantId, v])).rows[0]!.n;
    await until(async () => (await visitorRows('mac', m)) === 2, { what: 'the visit and the visitor kept by the sink' });
    const ssids = await db.query<{ ssid: string; sessions: number }>('SELECT ssid, sessions FROM report_ssids WHERE tenant_id = $1', [tenant.tenantId]);
    expect(ssids.rows).toEqual([{ ssid: 'Lobby-WiFi', sessions: 1 }]);
    // The rebuild from the raw rows makes exactly what the sink kept.
    const kept = async () => (await db.query(
      `SELECT 's' AS k, hotspot_id, day::text, ssid AS v, sessions AS n FROM report_ssids WHERE tenant_id = $1
       UNION ALL SELECT 'v', hotspot_id, day::text, encode(visitor, 'hex'), 0 FROM report_visits WHERE tenant_id = $1
       UNION ALL SELECT 'f', hotspot_id, first_day::text, encode(visitor, 'hex'), 0 FROM report_visitors WHERE tenant_id = $1 ORDER BY 1, 2, 3, 4`,
      [tenant.tenantId])).rows;
    const bySink = await kept();
    expect(bySink).toHaveLength(3);
    await svc.service.engine.reports.rebuild(tenant.tenantId);
    expect(await kept()).toEqual(bySink);
    // No clear MAC in the visitor tables.
    const clear = await db.query(`SELECT 1 FROM report_visits WHERE tenant_id = $1 AND position(convert_to($2, 'UTF8') IN visitor) > 0`, [tenant.tenantId, m]);
    expect(clear.rowCount).toBe(0);

    // A phone that signed in on two devices, and another guest's device: erasing the phone takes its key and its devices'.
    const other = '02:EE:00:00:00:09';
    await seed(db, tenant, tenant.hotspotId, 'Europe/Istanbul', [
      ['e1', 'X1', 'sms_otp', PHONE, 'Guest', '2026-03-02 10:00', 30, 0, 0, 'ios'],
      ['e2', 'X2', 'voucher', null, 'Guest', '2026-03-03 10:00', 30, 0, 0, 'ios'],
      ['e3', 'X3', 'voucher', null, 'Guest', '2026-03-03 11:00', 30, 0, 0, 'ios'],
    ], (k) => ({ X1: '02:EE:00:00:00:01', X2: '02:EE:00:00:00:02', X3: other })[k]!);
    // X2 is the phone's device too (it signed in there with the phone once).
    await db.query(`INSERT INTO sessions (id, tenant_id, hotspot_id, mac, username, auth_method, started_at, ends_at, ended_at, status)
      VALUES ('sess_e4' || $1, $1, $2, '02:EE:00:00:00:02', $3, 'sms_otp', '2026-03-01T08:00:00Z', '2026-03-02T08:00:00Z', '2026-03-01T08:10:00Z', 'ended')`,
    [tenant.tenantId, tenant.hotspotId, PHONE]);
    await svc.service.engine.reports.rebuild(tenant.tenantId, '2026-03-01', '2026-03-31');
    expect(await visitorRows('id', PHONE)).toBe(3); // visits on 1 and 2 March, and its first day
    expect(await visitorRows('mac', '02:EE:00:00:00:02')).toBe(2);
    expect(await visitorRows('mac', other)).toBe(2);
    const filed = await call(svc.base, 'POST', '/v1/privacy/requests', { auth: tenant.apiKey, body: { type: 'erasure', subject: { phone: PHONE } } });
    expect(filed.status, JSON.stringify(filed.body)).toBe(201);
    const closed = await call(svc.base, 'POST', `/v1/privacy/requests/${(filed.body as { id: string }).id}/close`, { auth: tenant.apiKey, body: { outcome: 'completed' } });
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    expect(await visitorRows('id', PHONE)).toBe(0);
    expect(await visitorRows('mac', '02:EE:00:00:00:02')).toBe(0);
    expect(await visitorRows('mac', other)).toBe(2); // another guest's: kept
    // A rebuild afterwards does not bring them back (the rows are under a legal hold).
    await svc.service.engine.reports.rebuild(tenant.tenantId, '2026-03-01', '2026-03-31');
    expect(await visitorRows('id', PHONE)).toBe(0);
    expect(await visitorRows('mac', '02:EE:00:00:00:02')).toBe(0);
    const deleted = await db.query<{ rows: string }>(`SELECT rows FROM privacy_deletions WHERE tenant_id = $1 AND category = 'report_visitors'`, [tenant.tenantId]);
    expect(deleted.rows.map((r) => Number(r.rows))).toEqual([5]); // the phone's 3 rows, X2's 2 (X1 has none: it signed in by phone)
  });
});
