import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, inject } from 'vitest';
import { createLogger, projectPath } from '../../engine/index.js';
import { Metrics } from '../../engine/metrics.js';
import { ReportService } from '../../engine/reports/report-service.js';
import { BatchWriter } from '../../engine/store/batch-writer.js';
import type { OutboxRecord } from '../../engine/store/outbox-writer.js';
import { JWT_SECRET, mac, poolTest as test } from '../support/fixture.js';

/**
 * The rollups as the outbox sink keeps them (BatchWriter, the sink's own
 * write path) and the analytics read from them, on sessions whose right
 * answers are worked out by hand below: a Berlin hotspot across both DST
 * changes of 2026 (29 March, 25 October), a Tokyo one (UTC+9, ahead) and a
 * New York one (UTC-4 then, behind).
 */
describe('report rollups', () => {
  let pool: pg.Pool;
  let writer: BatchWriter;
  let reports: ReportService;
  const tenant = `tn_rep${randomBytes(4).toString('hex')}`;
  const hs = { berlin: `hs_ber${randomBytes(3).toString('hex')}`, tokyo: `hs_tyo${randomBytes(3).toString('hex')}`, ny: `hs_nyc${randomBytes(3).toString('hex')}` };
  const device = { a: mac(1, 0x5a), b: mac(2, 0x5a), c: mac(3, 0x5a), d: mac(4, 0x5a), e: mac(5, 0x5a), f: mac(6, 0x5a), g: mac(7, 0x5a) };

  const ms = (iso: string): string => String(Date.parse(iso));
  const start = (sid: string, h: string, m: string, at: string, method: string, dt: string): OutboxRecord => ({
    tenant, f: { type: 'session_start', sid, hs: h, mac: m, ip: '10.0.0.9', ssid: 'Guest', at: ms(at), until: ms('2027-01-01T00:00:00Z'),
      user: 'u', method, vid: '', ...(dt ? { dt } : {}) },
  });
  const end = (sid: string, h: string, m: string, at: string, bin = '1000', bout = '500'): OutboxRecord => ({
    tenant, f: { type: 'session_end', sid, hs: h, mac: m, at: ms(at), reason: 'session_timeout', bin, bout, ip: '10.0.0.9', ssid: 'Guest', user: 'u', method: '', by: '' },
  });
  const sid = (): string => `sess_${randomBytes(8).toString('hex')}`;
  const ids = Array.from({ length: 12 }, sid);

  // Berlin, spring: clocks go from 02:00 CET to 03:00 CEST on Sunday 29 March 2026 (01:00 UTC).
  const spring: OutboxRecord[][] = [[
    // 23:30 local on the 28th, ends 01:30 on the 29th: crosses midnight, counts on the 28th at 23:00. 120 min.
    start(ids[0]!, hs.berlin, device.a, '2026-03-28T22:30:00Z', 'voucher', 'ios'),
    // 01:45 CET, ends 03:45 CEST: crosses the change; 60 real minutes (two on the wall clock). Hour 01.
    start(ids[1]!, hs.berlin, device.b, '2026-03-29T00:45:00Z', 'sms_otp', 'android'),
    // 03:15 CEST, same device as the one before (one unique device), 30 min. Hour 03.
    start(ids[2]!, hs.berlin, device.b, '2026-03-29T01:15:00Z', 'sms_otp', 'android'),
  ], [
    end(ids[0]!, hs.berlin, device.a, '2026-03-29T00:30:00Z'),
    end(ids[1]!, hs.berlin, device.b, '2026-03-29T01:45:00Z'),
    end(ids[2]!, hs.berlin, device.b, '2026-03-29T01:45:00Z'),
    // 12:00 CEST, e-mail, Windows, still live.
    start(ids[3]!, hs.berlin, device.c, '2026-03-29T10:00:00Z', 'email', 'windows'),
    // 12:20 CEST, a room sign-in with no browser claim (other), 40 min: counts in the total only.
    start(ids[4]!, hs.berlin, device.d, '2026-03-29T10:20:00Z', 'pms', ''),
  ], [
    end(ids[4]!, hs.berlin, device.d, '2026-03-29T11:00:00Z'),
    // Tokyo (UTC+9): 16:00 UTC on the 28th is 01:00 on the 29th there.
    start(ids[5]!, hs.tokyo, device.e, '2026-03-28T16:00:00Z', 'voucher', 'macos'),
    // New York (EDT, UTC-4): 02:00 UTC on the 29th is 22:00 on the 28th there.
    start(ids[6]!, hs.ny, device.f, '2026-03-29T02:00:00Z', 'sponsor', 'ios'),
  ]];
  // Berlin, autumn: 03:00 CEST back to 02:00 CET on Sunday 25 October 2026 (01:00 UTC): 02:xx happens twice.
  const autumn: OutboxRecord[] = [
    start(ids[7]!, hs.berlin, device.a, '2026-10-25T00:30:00Z', 'voucher', 'ios'), // 02:30 CEST
    start(ids[8]!, hs.berlin, device.g, '2026-10-25T01:30:00Z', 'msgapp_otp', 'android'), // 02:30 CET
    start(ids[9]!, hs.berlin, device.c, '2026-10-25T11:00:00Z', 'email', 'windows'), // 12:00 CET
  ];

  const deliver = (records: OutboxRecord[]): Promise<void> => writer.write(records);

  test.beforeAll(async ({ pool: p, redis }) => {
    pool = p;
    writer = new BatchWriter(redis, pool, createLogger('silent'), new Metrics());
    reports = new ReportService(pool);
    await pool.query('INSERT INTO tenants (id, name) VALUES ($1, $2)', [tenant, 'Rollup Venue']);
    for (const [id, zone] of [[hs.berlin, 'Europe/Berlin'], [hs.tokyo, 'Asia/Tokyo'], [hs.ny, 'America/New_York']] as const) {
      await pool.query('INSERT INTO hotspots (id, tenant_id, name, timezone) VALUES ($1, $2, $3, $4)', [id, tenant, id, zone]);
    }
    for (const batch of spring) await deliver(batch);
    await deliver(autumn);
  });

  test('every analytics field on the day of the spring change (Berlin)', async () => {
    expect(await reports.analytics(tenant, { from: '2026-03-29', to: '2026-03-29', hotspotId: hs.berlin })).toEqual({
      period: { from: '2026-03-29', to: '2026-03-29' },
      total_sessions: 4,
      unique_devices: 3,
      // Ended: 60 + 30 + 40 minutes (the e-mail one is live) over 3.
      avg_duration_minutes: 43,
      auth_methods: { sms_otp: 2, msgapp_otp: 0, sponsor: 0, voucher: 0, email: 1 },
      device_types: { ios: 0, android: 2, windows: 1, macos: 0 },
      peak_hour: '12:00',
    });
  });

  test('a session crossing midnight counts on the day and hour it started', async () => {
    const a = await reports.analytics(tenant, { from: '2026-03-28', to: '2026-03-28', hotspotId: hs.berlin });
    expect(a).toMatchObject({ total_sessions: 1, unique_devices: 1, avg_duration_minutes: 120, peak_hour: '23:00', auth_methods: { voucher: 1 }, device_types: { ios: 1 } });
    const both = await reports.analytics(tenant, { from: '2026-03-28', to: '2026-03-29', hotspotId: hs.berlin });
    // (120 + 60 + 30 + 40) / 4 = 62.5, rounded.
    expect(both).toMatchObject({ total_sessions: 5, unique_devices: 4, avg_duration_minutes: 63, peak_hour: '12:00' });
  });

  test('the repeated hour of the autumn change holds both of its sessions', async () => {
    expect(await reports.analytics(tenant, { from: '2026-10-25', to: '2026-10-25', hotspotId: hs.berlin })).toEqual({
      period: { from: '2026-10-25', to: '2026-10-25' },
      total_sessions: 3, unique_devices: 3, avg_duration_minutes: 0,
      auth_methods: { sms_otp: 0, msgapp_otp: 1, sponsor: 0, voucher: 1, email: 1 },
      device_types: { ios: 1, android: 1, windows: 1, macos: 0 },
      peak_hour: '02:00',
    });
  });

  test('a hotspot ahead of UTC and one behind count their own local days', async () => {
    expect(await reports.analytics(tenant, { from: '2026-03-29', to: '2026-03-29', hotspotId: hs.tokyo }))
      .toMatchObject({ total_sessions: 1, peak_hour: '01:00', device_types: { macos: 1 }, auth_methods: { voucher: 1 } });
    expect((await reports.analytics(tenant, { from: '2026-03-28', to: '2026-03-28', hotspotId: hs.tokyo })).total_sessions).toBe(0);
    expect(await reports.analytics(tenant, { from: '2026-03-28', to: '2026-03-28', hotspotId: hs.ny }))
      .toMatchObject({ total_sessions: 1, peak_hour: '22:00', device_types: { ios: 1 }, auth_methods: { sponsor: 1 } });
    expect((await reports.analytics(tenant, { from: '2026-03-29', to: '2026-03-29', hotspotId: hs.ny })).total_sessions).toBe(0);
    // All hotspots: each venue's own 29 March (Berlin 4, Tokyo 1, New York none).
    expect(await reports.analytics(tenant, { from: '2026-03-29', to: '2026-03-29' })).toMatchObject({ total_sessions: 5, unique_devices: 4 });
  });

  test('an empty range answers zeros and no peak hour', async () => {
    expect(await reports.analytics(tenant, { from: '2025-01-01', to: '2025-12-31' })).toEqual({
      period: { from: '2025-01-01', to: '2025-12-31' }, total_sessions: 0, unique_devices: 0, avg_duration_minutes: 0,
      auth_methods: { sms_otp: 0, msgapp_otp: 0, sponsor: 0, voucher: 0, email: 0 }, device_types: { ios: 0, android: 0, windows: 0, macos: 0 },
      peak_hour: null,
    });
  });

  const snapshot = async (): Promise<unknown[]> => [
    ...(await pool.query(`SELECT hotspot_id, day::text, hour, auth_method, device_type, sessions, ended, duration_s::text, bytes_in::text, bytes_out::text
      FROM report_hours WHERE tenant_id = $1 ORDER BY 1, 2, 3, 4, 5`, [tenant])).rows,
    ...(await pool.query(`SELECT hotspot_id, day::text, encode(sketch, 'hex') AS sketch FROM report_devices WHERE tenant_id = $1 ORDER BY 1, 2`, [tenant])).rows,
    // The month-level copies (the counts kept by triggers, the sketch by the sink and the rebuild; zero rows left by a subtraction are kept too, and must match).
    ...(await pool.query(`SELECT hotspot_id, month::text, auth_method, device_type, sessions, ended, duration_s::text, bytes_in::text, bytes_out::text
      FROM report_month_mix WHERE tenant_id = $1 AND (sessions <> 0 OR ended <> 0) ORDER BY 1, 2, 3, 4`, [tenant])).rows,
    ...(await pool.query(`SELECT hotspot_id, month::text, hour, sessions FROM report_month_hours WHERE tenant_id = $1 AND sessions <> 0 ORDER BY 1, 2, 3`, [tenant])).rows,
    ...(await pool.query(`SELECT hotspot_id, month::text, encode(sketch, 'hex') AS sketch FROM report_device_months WHERE tenant_id = $1 ORDER BY 1, 2`, [tenant])).rows,
  ];

  test('a record delivered twice counts once (starts, ends, one at a time and whole batches)', async () => {
    const before = await snapshot();
    for (const batch of spring) await deliver(batch);
    for (const r of [...spring.flat(), ...autumn]) await deliver([r]);
    expect(await snapshot()).toEqual(before);
    expect((await reports.analytics(tenant, { from: '2026-03-29', to: '2026-03-29', hotspotId: hs.berlin })).total_sessions).toBe(4);
  });

  test('an end stored before its start (a waiting end) is rolled up once it applies', async () => {
    const s = ids[10]!;
    const m = mac(8, 0x5a);
    await deliver([end(s, hs.tokyo, m, '2026-06-01T03:30:00Z', '7', '9')]);
    await deliver([start(s, hs.tokyo, m, '2026-06-01T03:00:00Z', 'voucher', 'ios')]);
    const { applyWaiting } = await import('../../engine/store/outbox-writer.js');
    await applyWaiting(pool);
    const rows = (await pool.query(`SELECT sessions, ended, duration_s::int AS d, bytes_in::int AS i, bytes_out::int AS o FROM report_hours
      WHERE tenant_id = $1 AND hotspot_id = $2 AND day = '2026-06-01'`, [tenant, hs.tokyo])).rows;
    expect(rows).toEqual([{ sessions: 1, ended: 1, d: 1800, i: 7, o: 9 }]);
  });

  test('a rebuild from the raw rows equals what the sink kept', async () => {
    const kept = await snapshot();
    // Scramble what is there, then rebuild the whole year.
    await pool.query('UPDATE report_hours SET sessions = sessions + 5 WHERE tenant_id = $1', [tenant]);
    await pool.query("UPDATE report_devices SET sketch = decode(repeat('00', 4096), 'hex') WHERE tenant_id = $1", [tenant]);
    const n = await reports.rebuild(tenant, '2026-01-01', '2026-12-31');
    expect(n).toBe(11);
    expect(await snapshot()).toEqual(kept);
  });

  test('cli reports rebuild puts scrambled rollups back (every day the tenant has sessions)', async () => {
    const kept = await snapshot();
    await pool.query('UPDATE report_hours SET ended = ended + 3 WHERE tenant_id = $1', [tenant]);
    await pool.query('DELETE FROM report_devices WHERE tenant_id = $1', [tenant]);
    const { stdout } = await promisify(execFile)(process.execPath, [projectPath('dist', 'scripts', 'cli.js'), 'reports', 'rebuild', '--tenant', tenant, '--json'], {
      env: { ...process.env, REDIS_URL: inject('redisUrl'), DATABASE_URL: inject('databaseUrl'), JWT_SECRET },
    });
    expect(JSON.parse(stdout)).toEqual({ tenant_id: tenant, sessions: 11 });
    expect(await snapshot()).toEqual(kept);
  });

  test('a day sketch written by an older release (no device_months_kept) still reaches its month through the trigger; one written by this release does not go through it', async () => {
    const other = `hs_old${randomBytes(3).toString('hex')}`;
    await pool.query('INSERT INTO hotspots (id, tenant_id, name, timezone) VALUES ($1, $2, $3, $4)', [other, tenant, other, 'UTC']);
    const month = (): Promise<string | undefined> => pool.query<{ s: string }>(
      "SELECT encode(sketch, 'hex') AS s FROM report_device_months WHERE tenant_id = $1 AND hotspot_id = $2", [tenant, other]).then((r) => r.rows[0]?.s);
    const dayRow = `INSERT INTO report_devices (tenant_id, hotspot_id, day, sketch)
      SELECT $1, $2, '2026-05-02', report_hll_add(NULL, ARRAY[report_hll_reg($3)], ARRAY[report_hll_rank($3)])`;
    const c = await pool.connect();
    try {
      await c.query('BEGIN');
      await c.query("SELECT set_config('guestwifi.device_months_kept', 'on', true)");
      await c.query(dayRow, [tenant, other, device.a]);
      await c.query('COMMIT');
      expect(await month()).toBeUndefined(); // this release's writer keeps the month itself
      await c.query(`${dayRow.replace("'2026-05-02'", "'2026-05-03'")}`, [tenant, other, device.b]); // as an older release writes it
      const expected = await c.query<{ s: string }>(
        "SELECT encode(report_hll_add(NULL, ARRAY[report_hll_reg($1)], ARRAY[report_hll_rank($1)]), 'hex') AS s", [device.b]);
      expect(await month()).toBe(expected.rows[0]!.s);
    } finally {
      c.release();
      await pool.query('DELETE FROM report_device_months WHERE tenant_id = $1 AND hotspot_id = $2', [tenant, other]);
      await pool.query('DELETE FROM report_devices WHERE tenant_id = $1 AND hotspot_id = $2', [tenant, other]);
      await pool.query('DELETE FROM hotspots WHERE id = $1', [other]);
    }
  });

  test('a range of whole months (read from the month rollups) answers as its days do', async () => {
    const march = await reports.analytics(tenant, { from: '2026-03-01', to: '2026-03-31' });
    const byDays = await reports.analytics(tenant, { from: '2026-02-28', to: '2026-03-31' });
    // Hours 01 (Berlin, Tokyo) and 12 (Berlin) have two starts each: the earlier wins.
    expect(march).toMatchObject({ total_sessions: 7, unique_devices: 6, peak_hour: '01:00' });
    expect({ ...byDays, period: march.period }).toEqual(march);
    expect(await reports.analytics(tenant, { from: '2026-01-01', to: '2026-12-31' })).toMatchObject({ total_sessions: 11 });
  });

  test('a default rebuild leaves the days past retention alone: their expired MACs do not overwrite the device counts kept', async () => {
    const kept = await snapshot();
    // Two years on from early October 2026: the cutoff falls between the spring sessions and the autumn ones,
    // and retention has turned the spring MACs into `expired`, as its hourly run does.
    const later = new ReportService(pool, () => Date.parse('2028-10-10T12:00:00Z'));
    const { rows: macs } = await pool.query<{ id: string; mac: string }>(
      "SELECT id, mac FROM sessions WHERE tenant_id = $1 AND started_at < '2026-10-01'", [tenant]);
    expect(macs.length).toBe(8);
    await pool.query("UPDATE sessions SET mac = 'expired' WHERE tenant_id = $1 AND started_at < '2026-10-01'", [tenant]);
    try {
      await pool.query('UPDATE report_hours SET ended = ended + 3 WHERE tenant_id = $1', [tenant]);
      const n = await later.rebuild(tenant);
      expect(n).toBe(3); // the autumn sessions only
      const after = await snapshot();
      // The spring days' device sketches are as the sink kept them (not one `expired` device a day); their hours stay scrambled.
      const days = (rows: unknown[]): unknown[] => rows.filter((r) => { const o = r as Record<string, unknown>; return 'sketch' in o && 'day' in o; });
      expect(days(after)).toEqual(days(kept));
      expect(after).not.toEqual(kept);
    } finally {
      for (const m of macs) await pool.query('UPDATE sessions SET mac = $2 WHERE id = $1', [m.id, m.mac]);
      await reports.rebuild(tenant, '2026-01-01', '2026-12-31');
    }
    expect(await snapshot()).toEqual(kept);
  });
});
