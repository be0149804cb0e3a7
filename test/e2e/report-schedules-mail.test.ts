import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { createLogger } from '../../engine/index.js';
import { Metrics } from '../../engine/metrics.js';
import { OutboundPolicy } from '../../engine/net/outbound-target.js';
import type { MailSources } from '../../engine/schedules/report-mail.js';
import { ReportScheduler } from '../../engine/schedules/report-scheduler.js';
import { nextPeriod, periodsDue } from '../../engine/schedules/schedule-periods.js';
import type { Pool } from '../../engine/store/postgres.js';
import { localDate } from '../../engine/util/local-day.js';
import { call, serviceTest, spawnService, testEnv, until, type Running, type ServiceProcess } from '../support/fixture.js';
import { mailHeaders, mimeParts } from '../support/mime-parts.js';
import { SmtpListener, type ReceivedMail } from '../support/smtp-listener.js';

/**
 * Scheduled report e-mail (issue 21 item 5), received by a real SMTP server on
 * loopback. The first tests drive a scheduler of their own with a clock set to
 * a morning of May 2026 (on time, no SMTP); the last ones run the service as
 * production does, with the real clock, a schedule back-dated in Postgres. Only
 * this file's processes run the scheduler (testEnv turns it off elsewhere), and
 * its tests run one after another, each deleting its schedule at the end.
 */
const FROM = 'Reports <reports@wifi.example>';
const test = serviceTest();

let smtp: SmtpListener;
beforeAll(async () => { smtp = await SmtpListener.start(); });
afterAll(async () => { await smtp.close(); });

const to = (addr: string): ReceivedMail[] => smtp.messages.filter((m) => m.to.includes(addr));
const tag = (): string => randomBytes(4).toString('hex');
const textOf = (m: ReceivedMail): string => mimeParts(m.raw).find((p) => p.filename === null && /^text\/plain/i.test(p.contentType))!.body.toString('utf8').replace(/\r\n/g, '\n');

/** A scheduler on the in-process engine's services, with its own clock and SMTP setting. */
function schedulerAt(svc: Running, now: () => number, smtpUrl: string | undefined, metrics = new Metrics()): ReportScheduler {
  const e = svc.service.engine;
  return new ReportScheduler({
    pool: e.pool, sources: { reports: e.reports, pdf: e.reportPdf, dailySummary: e.dailySummary, privacy: e.privacy }, smtpUrl, smtpFrom: FROM,
    outbound: new OutboundPolicy({ allowPrivate: true }), metrics, log: createLogger('silent'), nodeId: `fake-clock-${tag()}`, now,
    settings: { pollMs: 60_000, leaseMs: 600_000 },
  });
}

/** A zone whose 08:00 is more than 20 minutes past and more than 10 minutes ahead: one due period, late, and no new one during the test. */
function quietZone(now: number): string {
  for (const z of ['Europe/Istanbul', 'Asia/Tokyo']) {
    const last = periodsDue('daily', z, now - 2 * 86_400_000, now).at(-1)!;
    if (now - last.dueAt > 20 * 60_000 && nextPeriod('daily', z, now).dueAt - now > 10 * 60_000) return z;
  }
  throw new Error('no quiet zone (Istanbul and Tokyo mornings are six hours apart)');
}

async function ticks(p: ServiceProcess): Promise<number> {
  const text = await (await fetch(`${p.base}/metrics`)).text();
  return Number(/^guestwifi_report_schedule_ticks_total (\d+)$/m.exec(text)?.[1] ?? -1);
}

/** Waits until each process has finished two more whole passes: whatever they were going to send by now is sent. */
async function twoMorePasses(procs: ServiceProcess[]): Promise<void> {
  const start = await Promise.all(procs.map(ticks));
  await until(async () => (await Promise.all(procs.map(ticks))).every((n, i) => n >= start[i]! + 2), { what: 'two more scheduler passes in every process' });
}

describe('scheduled report e-mail', () => {
  test('a daily report due at 08:00 goes once, on time, to every recipient: the figures in words, the PDF report and the session CSV attached, a stable Message-ID', async ({ svc, tenant, db }) => {
    await db.query(`INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, ssid, started_at, ends_at, ended_at, bytes_in, bytes_out, device_type)
      SELECT 'sess_rsc' || $1 || g, $1, $2, '02:00:00:00:5C:0' || g, 'voucher', 'Guest', timestamptz '2026-05-05 10:00:00+03' + g * interval '1 minute',
             timestamptz '2026-05-05 23:00:00+03', timestamptz '2026-05-05 10:30:00+03' + g * interval '1 minute', 1000, 2000, 'ios'
      FROM generate_series(1, 3) g`, [tenant.tenantId, tenant.hotspotId]);
    await svc.service.engine.reports.rebuild(tenant.tenantId, '2026-05-05', '2026-05-05');
    const t = tag();
    const rcpt = [`a-${t}@example.com`, `b-${t}@example.org`, `c-${t}@example.net`];
    const s = (await call(svc.base, 'POST', '/v1/reports/schedules', {
      auth: tenant.apiKey, body: { frequency: 'daily', recipients: rcpt, hotspot_id: tenant.hotspotId, content: 'report', lang: 'en', name: 'Front desk' },
    })).body;
    await db.query('UPDATE report_schedules SET created_at = $2 WHERE id = $1', [s.id, '2026-05-05T12:00:00Z']);
    try {
      // 08:01 in Istanbul on the 6th: the 5th's report fell due a minute ago.
      const sch = schedulerAt(svc, () => Date.parse('2026-05-06T05:01:00Z'), smtp.url);
      await sch.tick();
      const m = await smtp.waitFor(rcpt[0]!);
      expect([...m.to].sort()).toEqual([...rcpt].sort());
      expect(m.subject).toBe('Wi-Fi report, Lobby: 2026-05-05');
      expect(mailHeaders(m.raw)['message-id']).toBe(`<${s.id}.2026-05-05@wifi.example>`);
      const text = textOf(m);
      expect(text).toContain('Guest Wi-Fi at Lobby, 2026-05-05 (days in Europe/Istanbul)');
      expect(text).toContain('Sessions: 3\n');
      expect(text).toContain('Average session: 30 minutes');
      expect(text).toContain('voucher 3, SMS code 0');
      expect(text).toContain('iOS 3, Android 0');
      expect(text).not.toMatch(/late/i);
      expect(text).toContain('Attached: sessions-2026-05-05-2026-05-05.csv, every session of the period, one a line; report-2026-05-05-2026-05-05.pdf, the report with its charts.');
      expect(mimeParts(m.raw).filter((p) => p.filename).map((p) => p.filename)).toEqual(['report-2026-05-05-2026-05-05.pdf', 'sessions-2026-05-05-2026-05-05.csv']);
      // The PDF report of the same period and venue, in the schedule's language.
      const pdf = mimeParts(m.raw).find((p) => p.filename === 'report-2026-05-05-2026-05-05.pdf')!;
      expect(pdf.contentType).toMatch(/^application\/pdf/);
      const dir = mkdtempSync(join(tmpdir(), 'rsc-'));
      writeFileSync(join(dir, 'r.pdf'), pdf.body);
      const words = execFileSync('pdftotext', ['-layout', join(dir, 'r.pdf'), '-'], { encoding: 'utf8' });
      expect(words).toContain('Lobby');
      expect(words).toMatch(/5 May 2026/);
      const csv = mimeParts(m.raw).find((p) => p.filename === 'sessions-2026-05-05-2026-05-05.csv');
      expect(csv?.contentType).toMatch(/^text\/csv/);
      const lines = csv!.body.toString('utf8').trimEnd().split('\n');
      expect(lines[0]).toBe('session_id,hotspot_id,ssid,mac,auth_method,device_type,started_at,ended_at,duration_minutes,bytes_in,bytes_out,end_reason');
      expect(lines.slice(1)).toEqual([1, 2, 3].map((g) =>
        `ses_rsc${tenant.tenantId}${g},${tenant.hotspotId},Guest,02:00:00:00:5C:0${g},voucher,ios,2026-05-05T07:0${g}:00.000Z,2026-05-05T07:3${g}:00.000Z,30,1000,2000,`));
      const runs = (await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}/runs`, { auth: tenant.apiKey })).body.data;
      expect(runs).toEqual([{ period: { from: '2026-05-05', to: '2026-05-05' }, due_at: '2026-05-06T05:00:00.000Z', sent_at: '2026-05-06T05:01:00.000Z', late: false, status: 'sent', attempts: 1, error: null }]);
      // Another pass, and another process's pass at the same moment, send nothing more.
      await sch.tick();
      await schedulerAt(svc, () => Date.parse('2026-05-06T05:01:30Z'), smtp.url).tick();
      expect(to(rcpt[0]!)).toHaveLength(1);
      // The next morning: nothing a minute before 08:00, the 6th's mail (a day without guests) at 08:00.
      await schedulerAt(svc, () => Date.parse('2026-05-07T04:59:00Z'), smtp.url).tick();
      expect(to(rcpt[0]!)).toHaveLength(1);
      await schedulerAt(svc, () => Date.parse('2026-05-07T05:00:30Z'), smtp.url).tick();
      await until(() => to(rcpt[0]!).length === 2, { what: 'the next morning\'s mail' });
      expect(to(rcpt[0]!)[1]!.subject).toBe('Wi-Fi report, Lobby: 2026-05-06');
      expect(textOf(to(rcpt[0]!)[1]!)).toContain('No guest used the Wi-Fi in this period.');
    } finally {
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey });
    }
  });

  test('without SMTP the run is recorded failed with a clear error and counted; the next tick after the back-off sends the weekly compliance package (Turkish)', async ({ svc, tenant, db }) => {
    const rcpt = `dpo-${tag()}@example.com`;
    // An open data-subject request: the personal-data summary counts it.
    expect((await call(svc.base, 'POST', '/v1/privacy/requests', { auth: tenant.apiKey, body: { type: 'access', subject: { email: `guest-${tag()}@example.com` } } })).status).toBe(201);
    const s = (await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'weekly', recipients: [rcpt], content: 'compliance' } })).body;
    await db.query('UPDATE report_schedules SET created_at = $2 WHERE id = $1', [s.id, '2026-05-01T00:00:00Z']);
    try {
      // Monday 4 May 2026, 08:02 Istanbul: the week of 27 April to 3 May is due.
      const at = Date.parse('2026-05-04T05:02:00Z');
      const metrics = new Metrics();
      await schedulerAt(svc, () => at, undefined, metrics).tick();
      const runs = async () => (await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}/runs`, { auth: tenant.apiKey })).body.data;
      expect(await runs()).toMatchObject([{ period: { from: '2026-04-27', to: '2026-05-03' }, status: 'failed', attempts: 1, sent_at: null, late: false }]);
      expect((await runs())[0].error).toMatch(/^report_smtp_not_configured: SMTP_URL is not set/);
      expect(metrics.value('report_schedule_failures_total', 'report_smtp_not_configured')).toBe(1);
      // Not before its retry time (one poll interval later)...
      await schedulerAt(svc, () => at + 30_000, smtp.url).tick();
      expect((await runs())[0]).toMatchObject({ status: 'failed', attempts: 1 });
      // ...and at it, through the mail server now configured.
      await schedulerAt(svc, () => at + 60_000, smtp.url).tick();
      const m = await smtp.waitFor(rcpt);
      expect(await runs()).toMatchObject([{ status: 'sent', attempts: 2, error: null, late: false }]);
      expect(m.subject).toMatch(/^Uyum paketi, Test Venue [0-9a-z]+: 2026-04-27 – 2026-05-03$/);
      const text = textOf(m);
      expect(text).toContain('5651 sayılı Kanun erişim kaydı, 7 gün');
      expect(text).toContain('şu anda 1 açık');
      const parts = mimeParts(m.raw);
      expect(parts.filter((p) => p.filename).map((p) => p.filename)).toEqual([
        '5651-daily-summary-2026-04-27_2026-05-03.json', '5651-daily-summary-2026-04-27_2026-05-03.csv',
        'personal-data-summary-2026-04-27_2026-05-03.json', 'personal-data-summary-2026-04-27_2026-05-03.csv',
      ]);
      const days = JSON.parse(parts[1]!.body.toString('utf8')).days as { tenant_id: string; date: string; totals: { chain_valid: boolean } }[];
      expect(days.map((d) => d.date)).toEqual(['2026-04-27', '2026-04-28', '2026-04-29', '2026-04-30', '2026-05-01', '2026-05-02', '2026-05-03']);
      expect(days.every((d) => d.tenant_id === tenant.tenantId && d.totals.chain_valid)).toBe(true);
      expect(parts[2]!.body.toString('utf8').split('\r\n')[0]).toBe('date,hotspot_id,hotspot,record_count,session_count,chain_valid,tsa_status,warnings,log_sha256');
      const privacy = JSON.parse(parts[3]!.body.toString('utf8'));
      expect(privacy.requests).toMatchObject({ open: 1 });
      expect(privacy.categories.map((c: { category: string }) => c.category)).toContain('access_log_sessions');
      expect(parts[4]!.body.toString('utf8')).toContain('requests,open,,1,,,');
    } finally {
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey });
    }
  });

  test('a mail that goes out more than 15 minutes after its due time because its first attempt failed says it is late', async ({ svc, tenant, db }) => {
    const rcpt = `retry-late-${tag()}@example.com`;
    const s = (await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'monthly', recipients: [rcpt], content: 'report', lang: 'en' } })).body;
    await db.query('UPDATE report_schedules SET created_at = $2 WHERE id = $1', [s.id, '2026-04-15T00:00:00Z']);
    try {
      // 1 May 2026 08:01 Istanbul: the first attempt finds no SMTP server; the retry goes at 08:25.
      await schedulerAt(svc, () => Date.parse('2026-05-01T05:01:00Z'), undefined).tick();
      await schedulerAt(svc, () => Date.parse('2026-05-01T05:25:00Z'), smtp.url).tick();
      const m = await smtp.waitFor(rcpt);
      expect(m.subject).toMatch(/^\[Late\] Wi-Fi report, Test Venue [0-9a-z]+: 2026-04-01 – 2026-04-30$/);
      expect(textOf(m)).toMatch(/^This mail is late\. It was due at 2026-05-01 08:00 \(Europe\/Istanbul\) and goes out at 2026-05-01 08:25:/);
      expect((await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}/runs`, { auth: tenant.apiKey })).body.data).toMatchObject([
        { period: { from: '2026-04-01', to: '2026-04-30' }, status: 'sent', attempts: 2, late: true },
      ]);
    } finally {
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey });
    }
  });

  test('a run whose process died mid-send is taken over once its lease runs out, and sent again under the same Message-ID', async ({ svc, tenant, db }) => {
    const rcpt = `lease-${tag()}@example.com`;
    const s = (await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'daily', recipients: [rcpt], content: 'report', lang: 'en' } })).body;
    const at = Date.parse('2026-05-06T05:01:00Z');
    // What a process killed after its claim leaves: the period recorded, the run `sending` under its lease (10 minutes).
    await db.query('UPDATE report_schedules SET created_at = $2, last_due_at = $3 WHERE id = $1', [s.id, '2026-05-05T12:00:00Z', '2026-05-06T05:00:00Z']);
    await db.query(`INSERT INTO report_schedule_runs (schedule_id, tenant_id, period_start, period_end, due_at, time_zone, status, attempts, claimed_by, lease_until, late)
      VALUES ($1, $2, '2026-05-05', '2026-05-05', '2026-05-06T05:00:00Z', 'Europe/Istanbul', 'sending', 1, 'killed-node', $3, false)`, [s.id, tenant.tenantId, new Date(at + 600_000)]);
    try {
      await schedulerAt(svc, () => at + 60_000, smtp.url).tick();
      expect(to(rcpt)).toHaveLength(0);
      await schedulerAt(svc, () => at + 601_000, smtp.url).tick();
      const m = await smtp.waitFor(rcpt);
      expect(mailHeaders(m.raw)['message-id']).toBe(`<${s.id}.2026-05-05@wifi.example>`);
      expect((await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}/runs`, { auth: tenant.apiKey })).body.data).toMatchObject([{ status: 'sent', attempts: 2, late: false }]);
      // The dead process's late write (had it lived on past its lease) changes nothing: its claim is gone.
      const { rowCount } = await db.query(`UPDATE report_schedule_runs SET status = 'failed' WHERE schedule_id = $1 AND claimed_by = 'killed-node' AND attempts = 1`, [s.id]);
      expect(rowCount).toBe(0);
      expect(to(rcpt)).toHaveLength(1);
    } finally {
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey });
    }
  });

  const env = () => ({
    ...process.env,
    ...testEnv({ SMTP_URL: smtp.url, SMTP_FROM: FROM, REPORT_SCHEDULER: 'true', REPORT_SCHEDULE_POLL_MS: '200', RADIUS_ENABLED: 'false', ACTOR_THREADS: '1' }),
  });

  test('the service down across 08:00 and started again sends each missed morning exactly once, oldest first, marked late with the time it was due', async ({ svc, tenant, db }) => {
    const zone = quietZone(Date.now());
    const hs = await svc.service.engine.hotspots.create(tenant.tenantId, { name: 'Terrace', timezone: zone });
    const rcpt = `late-${tag()}@example.com`;
    const procs: ServiceProcess[] = [];
    const s = (await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'daily', recipients: [rcpt], hotspot_id: hs.id, content: 'report', lang: 'en' } })).body;
    const runs = async () => (await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}/runs`, { auth: tenant.apiKey })).body.data as { status: string }[];
    try {
      const first = await spawnService(env());
      procs.push(first);
      await twoMorePasses([first]);
      await first.stop();
      // While no process runs: the schedule was made a minute before the third-last 08:00 in its zone; three mornings passed unsent.
      const due = periodsDue('daily', zone, Date.now() - 4 * 86_400_000, Date.now()).slice(-3);
      await db.query('UPDATE report_schedules SET created_at = $2 WHERE id = $1', [s.id, new Date(due[0]!.dueAt - 60_000)]);
      expect(to(rcpt)).toHaveLength(0);

      const again = await spawnService(env());
      procs.push(again);
      await until(async () => to(rcpt).length >= 3, { what: 'three mails', timeoutMs: 60_000 });
      await until(async () => (await runs()).every((r) => r.status === 'sent'), { what: 'every run recorded sent' });
      await twoMorePasses([again]);
      const mails = to(rcpt);
      expect(mails).toHaveLength(3);
      // One process sends the oldest first.
      expect(mails.map((m) => m.subject)).toEqual(due.map((p) => `[Late] Wi-Fi report, Terrace: ${p.from}`));
      mails.forEach((m, i) => {
        expect(textOf(m)).toMatch(new RegExp(`^This mail is late\\. It was due at ${localDate(due[i]!.dueAt, zone)} 08:00 \\(${zone}\\) and goes out at `));
      });
      expect(await runs()).toEqual(due.map((p) => expect.objectContaining({
        period: { from: p.from, to: p.to }, due_at: new Date(p.dueAt).toISOString(), late: true, status: 'sent', attempts: 1, error: null,
      })).reverse());
    } finally {
      for (const p of procs) await p.stop();
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey });
    }
  });

  test('two engine processes running at once send each of three caught-up periods exactly once', async ({ svc, tenant, db }) => {
    const zone = quietZone(Date.now());
    const hs = await svc.service.engine.hotspots.create(tenant.tenantId, { name: 'Pool bar', timezone: zone });
    const rcpt = `twice-${tag()}@example.com`;
    const procs = await Promise.all([spawnService(env()), spawnService(env())]);
    const s = (await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'daily', recipients: [rcpt], hotspot_id: hs.id, content: 'report', lang: 'tr' } })).body;
    try {
      // Three mornings passed since the schedule was made; both processes find them at their next pass.
      const due = periodsDue('daily', zone, Date.now() - 4 * 86_400_000, Date.now()).slice(-3);
      await db.query('UPDATE report_schedules SET created_at = $2 WHERE id = $1', [s.id, new Date(due[0]!.dueAt - 60_000)]);
      await until(async () => to(rcpt).length >= 3, { what: 'three mails', timeoutMs: 60_000 });
      await until(async () => (await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}/runs`, { auth: tenant.apiKey })).body.data.every((r: { status: string }) => r.status === 'sent'),
        { what: 'every run recorded sent' });
      await twoMorePasses(procs);
      const mails = to(rcpt);
      expect(mails).toHaveLength(3);
      expect(mails.map((m) => mailHeaders(m.raw)['x-report-period']).sort()).toEqual(due.map((p) => `${p.from}/${p.to}`));
      expect(new Set(mails.map((m) => mailHeaders(m.raw)['message-id'])).size).toBe(3);
      // In Turkish, and late: each says so.
      expect(mails.every((m) => m.subject.startsWith('[Gecikmeli] Wi-Fi raporu, Pool bar: '))).toBe(true);
      const runs = (await call(svc.base, 'GET', `/v1/reports/schedules/${s.id}/runs`, { auth: tenant.apiKey })).body.data;
      expect(runs.map((r: { period: { from: string }; attempts: number }) => [r.period.from, r.attempts])).toEqual(due.map((p) => [p.from, 1]).reverse());
    } finally {
      for (const p of procs) await p.stop();
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey });
    }
  });
});

/**
 * The faults of a send (issue 21 item 5 review): a send longer than the lease,
 * Postgres failing after the SMTP server took the mail, a claim lost mid-send,
 * permanent and transient refusals, an error that must not reach the API, the
 * CSV cap, and a takeover's subject. In this file because its later tests' processes run the
 * scheduler: beside them (another file) they would take these runs up.
 */
describe('scheduled report e-mail: faults of a send', () => {
  interface Opts { smtpUrl?: string; now?: () => number; leaseMs?: number; maxCsvBytes?: number; pool?: Pool; sources?: Partial<MailSources>; metrics?: Metrics; nodeId?: string }
  function scheduler(svc: Running, o: Opts): ReportScheduler {
    const e = svc.service.engine;
    return new ReportScheduler({
      pool: o.pool ?? e.pool, sources: { reports: e.reports, pdf: e.reportPdf, dailySummary: e.dailySummary, privacy: e.privacy, ...o.sources },
      smtpUrl: o.smtpUrl, smtpFrom: FROM, outbound: new OutboundPolicy({ allowPrivate: true }), metrics: o.metrics ?? new Metrics(), log: createLogger('silent'),
      nodeId: o.nodeId ?? `faults-${tag()}`, now: o.now ?? Date.now,
      settings: { pollMs: 60_000, leaseMs: o.leaseMs ?? 600_000, ...(o.maxCsvBytes ? { maxCsvBytes: o.maxCsvBytes } : {}) },
    });
  }
  /** The pool, but its query fails while `failing(sql)` says so (Postgres away at that moment, for that statement). */
  function failingPool(pool: Pool, failing: (sql: string) => boolean): Pool {
    return new Proxy(pool, {
      get(target, prop, receiver) {
        if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
        return (sql: unknown, ...rest: unknown[]) => (typeof sql === 'string' && failing(sql)
          ? Promise.reject(new Error('Connection terminated unexpectedly'))
          : (target.query as (...a: unknown[]) => unknown)(sql, ...rest));
      },
    });
  }
  /** A daily schedule whose 5 May 2026 (Istanbul) is due at 08:00 on the 6th: clock `at` then sends it. */
  async function dailyDue(svc: Running, tenant: { apiKey: string }, db: pg.Client, rcpt: string, extra: Record<string, unknown> = {}): Promise<string> {
    const s = (await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'daily', recipients: [rcpt], content: 'report', lang: 'en', ...extra } })).body;
    await db.query('UPDATE report_schedules SET created_at = $2 WHERE id = $1', [s.id, '2026-05-05T12:00:00Z']);
    return s.id as string;
  }
  const AT = Date.parse('2026-05-06T05:01:00Z');
  const runsOf = async (svc: Running, apiKey: string, id: string) => (await call(svc.base, 'GET', `/v1/reports/schedules/${id}/runs`, { auth: apiKey })).body.data;
  const row = async (db: pg.Client, id: string) => (await db.query('SELECT status, attempts, claimed_by, lease_until, late FROM report_schedule_runs WHERE schedule_id = $1', [id])).rows[0];
  /** A second SMTP listener that holds the messages to `rcpt` until `release()` (others go through). */
  async function holding(rcpt: string): Promise<{ smtp: SmtpListener; release: () => void; held: () => number }> {
    const slow = await SmtpListener.start();
    let release!: () => void;
    let held = 0;
    const gate = new Promise<void>((resolve) => { release = resolve; });
    slow.onMessage = (rcptTo) => (rcptTo.includes(rcpt) ? (held++, gate) : Promise.resolve());
    return { smtp: slow, release, held: () => held };
  }

  test('a send that outlasts the lease keeps its run: the lease is extended while it lasts, another process takes nothing over, one mail goes', async ({ svc, tenant, db }) => {
    const rcpt = `long-${tag()}@example.com`;
    const { smtp: slow, release, held } = await holding(rcpt);
    const s = (await call(svc.base, 'POST', '/v1/reports/schedules', { auth: tenant.apiKey, body: { frequency: 'daily', recipients: [rcpt], content: 'report', lang: 'en' } })).body;
    // On the real clock: a run due a minute ago, and no period of the schedule left to record.
    await db.query('UPDATE report_schedules SET last_due_at = now() WHERE id = $1', [s.id]);
    await db.query(`INSERT INTO report_schedule_runs (schedule_id, tenant_id, period_start, period_end, due_at, time_zone, status)
      VALUES ($1, $2, '2026-05-05', '2026-05-05', now() - interval '1 minute', 'Europe/Istanbul', 'due')`, [s.id, tenant.tenantId]);
    try {
      const leaseMs = 6_000;
      const first = scheduler(svc, { smtpUrl: slow.url, leaseMs });
      const sending = first.tick();
      await until(() => held() === 1, { what: 'the mail at the (held) server' });
      const claimed = (await row(db, s.id)).lease_until.getTime() as number;
      // The lease the claim took has run out on the clock, and the row's lease is still ahead: it was extended.
      await until(async () => Date.now() > claimed && (await row(db, s.id)).lease_until.getTime() > Date.now() + 1_000,
        { what: 'the lease extended past its first end', timeoutMs: 4 * leaseMs, seen: () => row(db, s.id) });
      await scheduler(svc, { smtpUrl: smtp.url, leaseMs }).tick();
      expect(await row(db, s.id)).toMatchObject({ status: 'sending', attempts: 1 });
      release();
      await sending;
      expect(await runsOf(svc, tenant.apiKey, s.id)).toMatchObject([{ status: 'sent', attempts: 1 }]);
      expect(slow.messages.filter((m) => m.to.includes(rcpt))).toHaveLength(1);
      expect(to(rcpt)).toHaveLength(0);
    } finally {
      release();
      await slow.close();
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${s.id}`, { auth: tenant.apiKey });
    }
  });

  test('Postgres failing after the SMTP server took the mail: storing sent is tried again and the run is never failed; past the retries it is left to its lease', async ({ svc, tenant, db }) => {
    const rcpt = `pgdown-${tag()}@example.com`;
    const id = await dailyDue(svc, tenant, db, rcpt);
    try {
      let failures = 2;
      const metrics = new Metrics();
      const isSent = (sql: string) => sql.includes("SET status = 'sent'") && failures-- > 0;
      await scheduler(svc, { smtpUrl: smtp.url, now: () => AT, metrics, pool: failingPool(svc.service.engine.pool, isSent) }).tick();
      expect(to(rcpt)).toHaveLength(1);
      expect(await runsOf(svc, tenant.apiKey, id)).toMatchObject([{ status: 'sent', attempts: 1, error: null }]);
      expect(metrics.value('report_schedule_sent_total')).toBe(1);

      // The next morning Postgres stays away for every try: the run stays sending under its lease, not failed, and is not counted.
      const rcptRow = async () => (await db.query(`SELECT status, attempts, error FROM report_schedule_runs WHERE schedule_id = $1 AND period_start = '2026-05-06'`, [id])).rows[0];
      const next = Date.parse('2026-05-07T05:01:00Z');
      const down = new Metrics();
      await scheduler(svc, { smtpUrl: smtp.url, now: () => next, metrics: down, pool: failingPool(svc.service.engine.pool, (sql) => sql.includes("SET status = 'sent'")) }).tick();
      expect(to(rcpt)).toHaveLength(2);
      expect(await rcptRow()).toEqual({ status: 'sending', attempts: 1, error: null });
      expect(down.value('report_schedule_sent_total')).toBe(0);
      expect(down.value('report_schedule_failures_total', 'report_mail_failed')).toBe(0);
      // The window docs/reports.md names: once the lease ran out another process sends it again, under the same Message-ID.
      await scheduler(svc, { smtpUrl: smtp.url, now: () => next + 601_000 }).tick();
      expect(await rcptRow()).toMatchObject({ status: 'sent', attempts: 2 });
      expect(to(rcpt).slice(1).map((m) => mailHeaders(m.raw)['message-id'])).toEqual([`<${id}.2026-05-06@wifi.example>`, `<${id}.2026-05-06@wifi.example>`]);
    } finally {
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${id}`, { auth: tenant.apiKey });
    }
  });

  test('a process that lost its claim mid-send neither records nor counts the mail as its own', async ({ svc, tenant, db }) => {
    const rcpt = `lost-${tag()}@example.com`;
    const { smtp: slow, release, held } = await holding(rcpt);
    const id = await dailyDue(svc, tenant, db, rcpt);
    try {
      const metrics = new Metrics();
      const sending = scheduler(svc, { smtpUrl: slow.url, now: () => AT, metrics }).tick();
      await until(() => held() === 1, { what: 'the mail at the (held) server' });
      // Meanwhile its lease ran out and another process took the run over.
      await db.query(`UPDATE report_schedule_runs SET claimed_by = 'other-node', attempts = 2 WHERE schedule_id = $1`, [id]);
      release();
      await sending;
      expect(slow.messages.filter((m) => m.to.includes(rcpt))).toHaveLength(1);
      expect(metrics.value('report_schedule_sent_total')).toBe(0);
      expect(await row(db, id)).toMatchObject({ status: 'sending', attempts: 2, claimed_by: 'other-node' });
    } finally {
      release();
      await slow.close();
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${id}`, { auth: tenant.apiKey });
    }
  });

  test('a permanent SMTP refusal is recorded failed at once and not tried again; a transient one is tried again; neither stores the server\'s words', async ({ svc, tenant, db }) => {
    const hard = `hard-${tag()}@example.com`;
    const soft = `soft-${tag()}@example.com`;
    const refusing = await SmtpListener.start();
    let softTries = 0;
    refusing.onMessage = async (rcptTo) => {
      if (rcptTo.includes(hard)) return { code: 554, message: `5.7.1 Message to <${hard}> refused by policy` };
      if (rcptTo.includes(soft) && softTries++ === 0) return { code: 451, message: `4.3.0 <${soft}> try later` };
    };
    const ids = [await dailyDue(svc, tenant, db, hard), await dailyDue(svc, tenant, db, soft)];
    try {
      await scheduler(svc, { smtpUrl: refusing.url, now: () => AT }).tick();
      const [h, s] = [await runsOf(svc, tenant.apiKey, ids[0]!), await runsOf(svc, tenant.apiKey, ids[1]!)];
      expect(h).toMatchObject([{ status: 'failed', attempts: 1, error: 'smtp_554: SMTP server replied 554, a permanent refusal: not tried again' }]);
      expect(s).toMatchObject([{ status: 'failed', attempts: 1, error: 'smtp_451: SMTP server replied 451; tried again' }]);
      // An hour later (past every back-off): the transient one goes, the permanent one is left.
      await scheduler(svc, { smtpUrl: refusing.url, now: () => AT + 3_600_000 }).tick();
      expect(await runsOf(svc, tenant.apiKey, ids[0]!)).toMatchObject([{ status: 'failed', attempts: 1 }]);
      expect(await runsOf(svc, tenant.apiKey, ids[1]!)).toMatchObject([{ status: 'sent', attempts: 2, error: null }]);
      expect(refusing.messages.map((m) => m.to)).toEqual([[soft]]);
    } finally {
      await refusing.close();
      for (const id of ids) await call(svc.base, 'DELETE', `/v1/reports/schedules/${id}`, { auth: tenant.apiKey });
    }
  });

  test('an unexpected failure stores a fixed sentence, never the error\'s own message', async ({ svc, tenant, db }) => {
    const rcpt = `boom-${tag()}@example.com`;
    const id = await dailyDue(svc, tenant, db, rcpt);
    try {
      const pdf = { renderBuffer: () => Promise.reject(new Error('render failed for guest jane.doe@example.com at 10.1.2.3')) } as unknown as MailSources['pdf'];
      await scheduler(svc, { smtpUrl: smtp.url, now: () => AT, sources: { pdf } }).tick();
      const [r] = await runsOf(svc, tenant.apiKey, id);
      expect(r).toMatchObject({ status: 'failed', attempts: 1 });
      expect(r.error).toBe('report_mail_failed: the mail could not be written or sent; tried again (the log of the process says why)');
    } finally {
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${id}`, { auth: tenant.apiKey });
    }
  });

  test('a session CSV past REPORT_MAIL_MAX_CSV_BYTES goes as a partial file, named so, its whole rows only, and the body says where the whole CSV is', async ({ svc, tenant, db }) => {
    await db.query(`INSERT INTO sessions (id, tenant_id, hotspot_id, mac, auth_method, ssid, started_at, ends_at, ended_at, bytes_in, bytes_out, device_type)
      SELECT 'sess_cap' || $1 || g, $1, $2, '02:00:00:00:6C:' || lpad(g::text, 2, '0'), 'voucher', 'Guest', timestamptz '2026-05-05 10:00:00+03' + g * interval '1 minute',
             timestamptz '2026-05-05 23:00:00+03', timestamptz '2026-05-05 10:30:00+03' + g * interval '1 minute', 1000, 2000, 'ios'
      FROM generate_series(10, 29) g`, [tenant.tenantId, tenant.hotspotId]);
    await svc.service.engine.reports.rebuild(tenant.tenantId, '2026-05-05', '2026-05-05');
    const rcpt = `cap-${tag()}@example.com`;
    const id = await dailyDue(svc, tenant, db, rcpt, { hotspot_id: tenant.hotspotId });
    try {
      const whole = (await fetch(`${svc.base}/v1/reports/sessions?format=csv&from=2026-05-05&to=2026-05-05&hotspot_id=${tenant.hotspotId}`,
        { headers: { authorization: `Bearer ${tenant.apiKey}` } })).text();
      await scheduler(svc, { smtpUrl: smtp.url, now: () => AT, maxCsvBytes: 1_000 }).tick();
      const m = await smtp.waitFor(rcpt);
      const csv = mimeParts(m.raw).find((p) => p.filename?.startsWith('sessions-'))!;
      expect(csv.filename).toBe('sessions-2026-05-05-2026-05-05-partial.csv');
      const body = csv.body.toString('utf8');
      expect(body.length).toBeLessThanOrEqual(1_000);
      expect(body.endsWith('\n')).toBe(true);
      const full = await whole;
      expect(full.length).toBeGreaterThan(1_000);
      expect(full.startsWith(body)).toBe(true);
      const rows = body.trimEnd().split('\n').length - 1;
      expect(rows).toBeGreaterThan(0);
      expect(rows).toBeLessThan(20);
      const text = textOf(m);
      expect(text).toContain(`Attached: sessions-2026-05-05-2026-05-05-partial.csv, the first ${rows} sessions of the period only, one a line;`);
      expect(text).toContain('The whole session CSV is larger than 1000 bytes, more than this mail may carry');
      expect(text).toContain(`The whole CSV: GET /v1/reports/sessions?format=csv&from=2026-05-05&to=2026-05-05&hotspot_id=${tenant.hotspotId} (with an API key of this tenant).`);
      expect(await runsOf(svc, tenant.apiKey, id)).toMatchObject([{ status: 'sent', attempts: 1 }]);
    } finally {
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${id}`, { auth: tenant.apiKey });
    }
  });

  test('a takeover of a run left sending keeps its `late`, so the resend under the same Message-ID has the same subject', async ({ svc, tenant, db }) => {
    const rcpt = `keep-${tag()}@example.com`;
    const id = await dailyDue(svc, tenant, db, rcpt);
    // A process claimed it a minute after 08:00 (not late) and died; its lease ran out at 08:11.
    await db.query('UPDATE report_schedules SET last_due_at = $2 WHERE id = $1', [id, '2026-05-06T05:00:00Z']);
    await db.query(`INSERT INTO report_schedule_runs (schedule_id, tenant_id, period_start, period_end, due_at, time_zone, status, attempts, claimed_by, lease_until, late)
      VALUES ($1, $2, '2026-05-05', '2026-05-05', '2026-05-06T05:00:00Z', 'Europe/Istanbul', 'sending', 1, 'killed-node', '2026-05-06T05:11:00Z', false)`, [id, tenant.tenantId]);
    try {
      // Taken over at 08:40: it would be late by the clock, but its first mail (if it went) was not.
      await scheduler(svc, { smtpUrl: smtp.url, now: () => Date.parse('2026-05-06T05:40:00Z') }).tick();
      const m = await smtp.waitFor(rcpt);
      expect(m.subject).toMatch(/^Wi-Fi report, Test Venue [0-9a-z]+: 2026-05-05$/);
      expect(await runsOf(svc, tenant.apiKey, id)).toMatchObject([{ status: 'sent', attempts: 2, late: false }]);
    } finally {
      await call(svc.base, 'DELETE', `/v1/reports/schedules/${id}`, { auth: tenant.apiKey });
    }
  });
});
