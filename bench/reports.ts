import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { createLogger } from '../engine/index.js';
import { ReportService } from '../engine/reports/report-service.js';
import { migrate } from '../engine/store/postgres.js';
import { localStack, percentile, say, Teardown } from './bench-kit.js';

/**
 * Scenario: a year of sessions at one venue, then (1) analytics over one day
 * and over 366 days, (2) the session report's CSV export of the year against
 * a bare `COPY (SELECT * FROM sessions ...) TO STDOUT` of the same rows.
 *
 * Scale: BENCH_PER_DAY sessions a day (default 2,000) for 366 days, about
 * 0.73 million rows (the 50,000 a day is 18 million: too long to seed
 * on a shared two-core machine; the figures below show why the smaller scale
 * says the same: analytics read rollups, whose size does not grow with
 * sessions a day, and the export's time is linear in its rows, measured on
 * half the year and the whole). Sessions are written by SQL straight into
 * `sessions` (a sign-in per row would measure the sign-in); the rollups are
 * then made by the rebuild (cli reports rebuild), which the tests hold equal
 * to what the sink keeps incrementally.
 *
 * Figures, each a ratio in the same run:
 * - analytics p95 over 366 days / p95 over one day (target <= 2), the two
 *   alternating, BENCH_ROUNDS x 50 calls each, through ReportService in this
 *   process (no HTTP: its fixed cost would only flatten the ratio);
 * - CSV export rows/s / bare COPY rows/s (target >= 0.5), the export
 *   consumed as the HTTP layer consumes it, and the growth of this process's
 *   RSS while it streams (flat memory: a few MB whatever the rows);
 * - export time for 366 days / for 183 days (about 2: linear).
 * Everything on loopback, in a throw-away Postgres. One summary line on
 * stdout; exit 0 pass, 2 a target missed, 1 error.
 */

const PER_DAY = Number(process.env.BENCH_PER_DAY ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const DAYS = 366;
const FIRST = '2025-01-01';
const LAST = '2026-01-01'; // 366 days, both ends included
const MID = '2025-07-02'; // 183 days from FIRST

const undo = new Teardown();
undo.guard('reports', 200_000);

async function main(): Promise<void> {
  const stack = await localStack('reports', undo);
  const pool = new pg.Pool({ connectionString: stack.env.DATABASE_URL, max: 4 });
  undo.push(() => pool.end());
  await migrate(pool, createLogger('warn'));
  const tenant = 'tn_bench_reports';
  const hotspot = 'hs_bench_reports';
  await pool.query(`INSERT INTO tenants (id, name, modules) VALUES ($1, 'Bench Venue', '{reports}')`, [tenant]);
  await pool.query(`INSERT INTO hotspots (id, tenant_id, name, timezone) VALUES ($1, $2, 'Lobby', 'Europe/Istanbul')`, [hotspot, tenant]);

  // A year of sessions: starts spread over the day, six methods, five device types, 20,000 devices, 5-125 minutes each.
  let t0 = Date.now();
  for (let d = 0; d < DAYS; d += 31) {
    await pool.query(
      `INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, ssid, started_at, ends_at, ended_at, bytes_in, bytes_out, device_type, status)
       SELECT 'sess_b' || lpad(g::text, 9, '0'), $1, $2,
              '02:00:' || lpad(to_hex((g::bigint * 7919 % 20000) / 256), 2, '0') || ':' || lpad(to_hex((g::bigint * 7919 % 20000) % 256), 2, '0') || ':00:01',
              (ARRAY['voucher','sms_otp','msgapp_otp','email','sponsor','pms'])[g % 6 + 1], 'Guest',
              st, st + interval '2 hours', st + (5 + g % 121) * interval '1 minute', g % 100000, g % 50000,
              (ARRAY['ios','android','windows','macos','other'])[g % 5 + 1], 'ended'
       FROM generate_series($3::int, $4::int) g,
            LATERAL (SELECT timestamptz '2025-01-01 00:00:00+03' + (g / $5) * interval '1 day' + (g % $5) * (interval '86399 seconds' / $5) AS st) s`,
      [tenant, hotspot, d * PER_DAY, Math.min(d + 31, DAYS) * PER_DAY - 1, PER_DAY]);
  }
  await pool.query('ANALYZE sessions');
  const seedS = (Date.now() - t0) / 1000;
  const rows = Number((await pool.query('SELECT count(*) AS n FROM sessions WHERE tenant_id = $1', [tenant])).rows[0].n);
  say(`seeded ${rows} sessions (${PER_DAY}/day x ${DAYS} days) in ${seedS.toFixed(1)} s`);

  const reports = new ReportService(pool);
  t0 = Date.now();
  const rolled = await reports.rebuild(tenant, FIRST, LAST);
  const rebuildS = (Date.now() - t0) / 1000;
  // The rebuild rewrote each month row once per day row (the triggers): vacuum, as autovacuum would, so the
  // month tables are read at their steady size (a few dozen live rows a month) rather than with the rebuild's dead versions.
  await pool.query('VACUUM ANALYZE report_hours, report_devices, report_month_mix, report_month_hours, report_device_months');
  const rollupRows = Number((await pool.query('SELECT count(*) AS n FROM report_hours WHERE tenant_id = $1', [tenant])).rows[0].n);
  const monthRows = Number((await pool.query('SELECT (SELECT count(*) FROM report_month_mix) + (SELECT count(*) FROM report_month_hours) AS n')).rows[0].n);
  say(`rollups rebuilt from ${rolled} sessions in ${rebuildS.toFixed(1)} s: ${rollupRows} report_hours rows, ${monthRows} month rows, ${DAYS} day sketches`);

  // (1) Analytics: one day against the whole year, alternating.
  const day: number[] = [];
  const year: number[] = [];
  const time = async (from: string, to: string, into: number[]): Promise<void> => {
    const s = process.hrtime.bigint();
    await reports.analytics(tenant, { from, to, hotspotId: hotspot });
    into.push(Number(process.hrtime.bigint() - s) / 1e6);
  };
  for (let i = 0; i < 20; i++) { await time('2025-06-15', '2025-06-15', []); await time(FIRST, LAST, []); } // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (let i = 0; i < 50; i++) await time('2025-06-15', '2025-06-15', day);
    for (let i = 0; i < 50; i++) await time(FIRST, LAST, year);
  }
  day.sort((a, b) => a - b);
  year.sort((a, b) => a - b);
  const p95Day = percentile(day, 95);
  const p95Year = percentile(year, 95);
  const yearAnswer = await reports.analytics(tenant, { from: FIRST, to: LAST, hotspotId: hotspot });
  say(`analytics p95: one day ${p95Day.toFixed(2)} ms, 366 days ${p95Year.toFixed(2)} ms (p50 ${percentile(day, 50).toFixed(2)} / ${percentile(year, 50).toFixed(2)}); `
    + `year: ${yearAnswer.total_sessions} sessions, ${yearAnswer.unique_devices} unique devices (20,000 seeded), peak ${yearAnswer.peak_hour}`);

  // (2) CSV export against a bare COPY of the same rows.
  const drain = async (it: AsyncIterable<Buffer>): Promise<{ bytes: number; lines: number; ms: number; rssGrowthMb: number }> => {
    const rss0 = process.memoryUsage().rss;
    let peak = rss0;
    const s = Date.now();
    let bytes = 0;
    let lines = 0;
    let n = 0;
    for await (const chunk of it) {
      bytes += chunk.length;
      for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines += 1;
      if (++n % 64 === 0) peak = Math.max(peak, process.memoryUsage().rss);
    }
    return { bytes, lines, ms: Date.now() - s, rssGrowthMb: (Math.max(peak, process.memoryUsage().rss) - rss0) / 1048576 };
  };
  const bare = async (from: string, to: string) => {
    const c = await pool.connect();
    try {
      const sql = `COPY (SELECT * FROM sessions WHERE tenant_id = '${tenant}' AND started_at >= timestamptz '${from} 00:00:00+03'
        AND started_at < timestamptz '${to} 00:00:00+03' + interval '1 day' ORDER BY started_at, id) TO STDOUT WITH (FORMAT csv, HEADER)`;
      return await drain(c.query(copyTo(sql)) as unknown as AsyncIterable<Buffer>);
    } finally {
      c.release();
    }
  };
  const exportOf = async (from: string, to: string) => drain((await reports.sessionsCsv(tenant, { from, to, hotspotId: hotspot })).stream);
  await exportOf('2025-06-15', '2025-06-15'); // warm-up
  const results: { exp: Awaited<ReturnType<typeof exportOf>>; raw: Awaited<ReturnType<typeof bare>> }[] = [];
  // Interleaved, best of three each: a neighbour's burst on this shared machine then hits both alike.
  for (let i = 0; i < 3; i++) results.push({ raw: await bare(FIRST, LAST), exp: await exportOf(FIRST, LAST) });
  const half = await exportOf(FIRST, MID);
  const best = <T extends { ms: number }>(xs: T[]): T => xs.reduce((a, b) => (b.ms < a.ms ? b : a));
  const exp = best(results.map((r) => r.exp));
  const raw = best(results.map((r) => r.raw));
  const ratio = (exp.lines / exp.ms) / (raw.lines / raw.ms);
  const growth = exp.ms / half.ms;
  say(`CSV export: ${exp.lines - 1} rows, ${(exp.bytes / 1048576).toFixed(1)} MB in ${exp.ms} ms (${Math.round((exp.lines / exp.ms) * 1000)} rows/s), `
    + `RSS growth ${exp.rssGrowthMb.toFixed(1)} MB; bare COPY: ${raw.lines - 1} rows, ${(raw.bytes / 1048576).toFixed(1)} MB in ${raw.ms} ms; `
    + `183 days: ${half.lines - 1} rows in ${half.ms} ms`);

  const analyticsRatio = p95Year / p95Day;
  const pass = analyticsRatio <= 2 && ratio >= 0.5;
  process.stdout.write(`reports: ${rows} sessions (${PER_DAY}/day x ${DAYS} d); analytics p95 1 d ${p95Day.toFixed(2)} ms, 366 d ${p95Year.toFixed(2)} ms, `
    + `ratio ${analyticsRatio.toFixed(2)} (target <= 2); CSV export ${Math.round((exp.lines / exp.ms) * 1000)} rows/s = ${ratio.toFixed(2)} x bare COPY (target >= 0.5), `
    + `RSS +${exp.rssGrowthMb.toFixed(1)} MB; export 366 d / 183 d time ${growth.toFixed(2)} (linear ~2); ${pass ? 'PASS' : 'MISS'}\n`);
  process.exitCode = pass ? 0 : 2;
}

main().catch((err: unknown) => {
  say(`error: ${(err as Error).stack ?? String(err)}`);
  process.exitCode = 1;
}).finally(() => undo.run());
