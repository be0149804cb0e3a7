import nodemailer from 'nodemailer';
import { AppError, Errors } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics.js';
import type { OutboundPolicy } from '../net/outbound-target.js';
import { pinnedSmtpOptions, smtpFailure } from '../signin/providers/email-sender.js';
import type { Pool } from '../store/postgres.js';
import { DEFAULT_MAX_CSV_BYTES, writeMail, type MailSources } from './report-mail.js';
import { catchUp, localClock, periodsDue, type Frequency } from './schedule-periods.js';
import { knownZone } from '../util/local-day.js';
import { ZONE_SQL, type ScheduleRow } from './schedule-store.js';

/** Attempts a run gets (the first and its retries) before it stays failed. */
export const MAX_ATTEMPTS = 6;
/** A run taken up (the attempt that sends it) this long after its due time is late: its mail says so. */
export const LATE_AFTER_MS = 15 * 60_000;
/** The longest wait between retries of a failed run. */
const MAX_BACKOFF_MS = 3_600_000;
/** nodemailer's waits at each step, ms: nobody waits on a scheduled mail, a big attachment takes time. */
const SMTP_CONNECT_MS = 30_000;
const SMTP_SOCKET_MS = 120_000;
/**
 * Waits between tries to store `sent` once the SMTP server took the mail (ms; five
 * tries after the first, 6.2 s in all): a Postgres blip must not turn a
 * delivered mail into a failed run that is sent again.
 */
const SENT_RETRY_MS: readonly number[] = [200, 400, 800, 1600, 3200];

export interface SchedulerSettings {
  /** How often each process looks for due periods and runs to send (REPORT_SCHEDULE_POLL_MS). */
  pollMs: number;
  /** How long a claimed run is this process's before another may take it over (REPORT_SCHEDULE_LEASE_SEC, in ms here). */
  leaseMs: number;
  /** The session CSV attached up to this many bytes (REPORT_MAIL_MAX_CSV_BYTES); DEFAULT_MAX_CSV_BYTES when not given. */
  maxCsvBytes?: number;
}

export interface SchedulerDeps {
  pool: Pool;
  sources: MailSources;
  /** The service-wide SMTP_URL (never logged) and SMTP_FROM. */
  smtpUrl: string | undefined;
  smtpFrom: string;
  outbound: OutboundPolicy;
  metrics: Metrics;
  log: Logger;
  nodeId: string;
  now: () => number;
  settings: SchedulerSettings;
}

interface ClaimedRun {
  schedule_id: string;
  tenant_id: string;
  period_start: string;
  period_end: string;
  due_at: Date;
  time_zone: string;
  attempts: number;
  late: boolean;
}

type ScheduleOfRun = Pick<ScheduleRow, 'name' | 'frequency' | 'recipients' | 'hotspot_id' | 'content' | 'lang'> & { site: string };

/**
 * Sends the scheduled report mails (docs/reports.md, Scheduled e-mail). Every
 * engine process runs one; Postgres decides who sends what:
 *
 * 1. Record: each due period of each schedule becomes a run row, unique per
 *    (schedule, period_start), inserted ON CONFLICT DO NOTHING, so processes
 *    that find the same period make one row. After downtime only the newest
 *    CATCH_UP_MAX periods are `due`; older ones are `skipped`.
 * 2. Claim: one run at a time, oldest due first, taken with FOR UPDATE SKIP
 *    LOCKED and marked `sending` under a lease (this process's NODE_ID and an
 *    end time), extended every third of the lease while the mail is written
 *    and sent, so a long send keeps it. A run is claimable while `due`, when
 *    its lease ran out (its process died mid-send), or when `failed` with
 *    attempts left and its retry time come.
 * 3. Send, then mark `sent`, both guarded by this claim (claimed_by and the
 *    attempt number): a process that lost its lease cannot overwrite the one
 *    that took over. Once the SMTP server took the mail the run is never
 *    marked `failed`: storing `sent` is tried again for a few seconds, and if
 *    Postgres stays away the claim is left to lapse.
 *
 * The window left: a process that dies after the SMTP server accepted the
 * message and before `sent` is stored (or cannot reach Postgres for the
 * seconds of SENT_RETRY_MS) leaves the run `sending`; when its lease runs out
 * another process sends it again. The resend carries the same Message-ID (per
 * schedule and period) and the same subject (`late` is kept across a
 * takeover), so mail systems and readers can see it is the same message.
 */
export class ReportScheduler {
  /** Scheduler passes this process finished (a test waits on it instead of a fixed time). */
  ticks = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly domain: string;

  constructor(private readonly d: SchedulerDeps) {
    this.domain = /@([A-Za-z0-9.-]+)/.exec(d.smtpFrom)?.[1] ?? 'guest-wifi.invalid';
    d.metrics.counter('report_schedule_sent_total', 'Scheduled report mails this process sent');
    d.metrics.counter('report_schedule_failures_total', 'Scheduled report mails that failed in this process (the run is recorded failed and retried while attempts last)', 'reason');
    d.metrics.counterFrom('report_schedule_ticks_total', 'Passes of the report scheduler this process finished', () => this.ticks);
  }

  start(): void {
    this.stopped = false;
    this.loop();
  }

  /** Stops after the run being sent (no further run is claimed). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private loop(): void {
    if (this.stopped) return;
    this.running = this.tick()
      .catch((err: Error) => this.d.log.warn({ err: err.message }, 'report scheduler pass failed'))
      .finally(() => {
        this.running = null;
        if (this.stopped) return;
        this.timer = setTimeout(() => this.loop(), this.d.settings.pollMs);
        this.timer.unref();
      });
  }

  /** One pass: record the periods that fell due, then send what is claimable, oldest first. */
  async tick(): Promise<void> {
    await this.record();
    while (!this.stopped) {
      const run = await this.claim();
      if (!run) break;
      await this.send(run);
    }
    this.ticks++;
  }

  private async record(): Promise<void> {
    const now = this.d.now();
    const { rows } = await this.d.pool.query<{ tenant_id: string; id: string; frequency: Frequency; created_at: Date; last_due_at: Date | null; zone: string }>(
      // A period falls due at least 23 hours (a day, 167 a week, 671 a month, a daylight-saving hour less) after the last
      // one recorded: schedules whose next one cannot be due yet are left out, so a pass looks at few of them.
      `SELECT s.tenant_id, s.id, s.frequency, s.created_at, s.last_due_at, ${ZONE_SQL} AS zone
       FROM report_schedules s JOIN tenants t ON t.id = s.tenant_id
       WHERE 'reports' = ANY(t.modules)
         AND (s.last_due_at IS NULL OR s.last_due_at <= $1::timestamptz - CASE s.frequency WHEN 'daily' THEN interval '23 hours'
              WHEN 'weekly' THEN interval '167 hours' ELSE interval '671 hours' END)`, [new Date(now)]);
    for (const s of rows) {
      const zone = knownZone(s.zone);
      const due = periodsDue(s.frequency, zone, (s.last_due_at ?? s.created_at).getTime(), now);
      if (due.length === 0) continue;
      const { send, skip } = catchUp(due);
      const all = [...skip.map((p) => ({ p, status: 'skipped' })), ...send.map((p) => ({ p, status: 'due' }))];
      try {
        await this.d.pool.query(
          `INSERT INTO report_schedule_runs (schedule_id, tenant_id, period_start, period_end, due_at, time_zone, status)
           SELECT $1, $2, f::date, t::date, d, $3, st FROM unnest($4::text[], $5::text[], $6::timestamptz[], $7::text[]) AS x(f, t, d, st)
           ON CONFLICT (schedule_id, period_start) DO NOTHING`,
          [s.id, s.tenant_id, zone, all.map((x) => x.p.from), all.map((x) => x.p.to), all.map((x) => new Date(x.p.dueAt)), all.map((x) => x.status)]);
        await this.d.pool.query('UPDATE report_schedules SET last_due_at = $2 WHERE id = $1 AND (last_due_at IS NULL OR last_due_at < $2)',
          [s.id, new Date(due[due.length - 1]!.dueAt)]);
      } catch (err) {
        // The schedule deleted meanwhile (its runs' foreign key), or Postgres away: the next pass sees.
        this.d.log.debug({ err: (err as Error).message, schedule_id: s.id }, 'report schedule periods not recorded');
      }
      if (skip.length > 0) this.d.log.warn({ schedule_id: s.id, skipped: skip.length }, 'report schedule periods older than the catch-up cap skipped');
    }
  }

  private async claim(): Promise<ClaimedRun | null> {
    const now = this.d.now();
    const { rows } = await this.d.pool.query<ClaimedRun>(
      `UPDATE report_schedule_runs r SET status = 'sending', claimed_by = $1, lease_until = $2, attempts = r.attempts + 1,
         -- A takeover of a run left \`sending\` keeps its \`late\`: its mail may have gone, and the resend's subject must be the same.
         late = CASE WHEN r.status = 'sending' AND r.late IS NOT NULL THEN r.late ELSE r.due_at < $4 END
       FROM (SELECT schedule_id, period_start FROM report_schedule_runs
             WHERE status = 'due' OR (status = 'sending' AND lease_until < $3) OR (status = 'failed' AND attempts < $5 AND retry_at <= $3)
             ORDER BY due_at, schedule_id LIMIT 1 FOR UPDATE SKIP LOCKED) c
       WHERE r.schedule_id = c.schedule_id AND r.period_start = c.period_start
       RETURNING r.schedule_id, r.tenant_id, r.period_start::text AS period_start, r.period_end::text AS period_end, r.due_at, r.time_zone, r.attempts, r.late`,
      [this.d.nodeId, new Date(now + this.d.settings.leaseMs), new Date(now), new Date(now - LATE_AFTER_MS), MAX_ATTEMPTS]);
    return rows[0] ?? null;
  }

  private async send(run: ClaimedRun): Promise<void> {
    const log = this.d.log.child({ schedule_id: run.schedule_id, period: run.period_start, attempt: run.attempts });
    const messageId = `<${run.schedule_id}.${run.period_start}@${this.domain}>`;
    const lease = this.keepLease(run, log);
    let accepted = false;
    try {
      const s = await this.scheduleOf(run);
      if (!s) return; // deleted while claimed: its runs went with it
      if (!this.d.smtpUrl) throw Errors.REPORT_SMTP_NOT_CONFIGURED();
      // The server's address first: a mail that cannot go is not written (nor its PDF drawn).
      const options = await pinnedSmtpOptions(this.d.smtpUrl, this.d.outbound.operatorChosen());
      const zone = run.time_zone;
      const content = await writeMail(this.d.sources, {
        tenantId: run.tenant_id, hotspotId: s.hotspot_id, content: s.content, lang: s.lang, maxCsvBytes: this.d.settings.maxCsvBytes ?? DEFAULT_MAX_CSV_BYTES,
        facts: {
          site: s.site, from: run.period_start, to: run.period_end, zone, frequency: s.frequency, scheduleId: run.schedule_id, scheduleName: s.name,
          late: run.late ? { due: localClock(run.due_at.getTime(), zone), sent: localClock(this.d.now(), zone) } : null,
        },
      });
      // nodemailer's own logger stays off (its default): it would print the AUTH exchange.
      const transport = nodemailer.createTransport({ ...options, connectionTimeout: SMTP_CONNECT_MS, greetingTimeout: SMTP_CONNECT_MS, socketTimeout: SMTP_SOCKET_MS });
      try {
        await transport.sendMail({
          from: this.d.smtpFrom, to: s.recipients, subject: content.subject, text: content.text, messageId,
          attachments: content.attachments.map((a) => ({ filename: a.filename, contentType: a.contentType, content: a.content })),
          headers: { 'X-Report-Schedule': run.schedule_id, 'X-Report-Period': `${run.period_start}/${run.period_end}` },
        });
      } finally {
        transport.close();
      }
      accepted = true;
      await this.storeSent(run, messageId, log);
    } catch (err) {
      // storeSent does not throw; were it ever to, a mail the server took must still not be recorded failed (and sent again).
      if (accepted) log.error({ err: (err as Error).message }, 'scheduled report mail sent but not recorded; the run is left to its lease');
      else await this.storeFailed(run, err, log);
    } finally {
      lease.stop();
    }
  }

  /**
   * Extends the claim's lease every third of REPORT_SCHEDULE_LEASE_SEC while the mail is
   * written and sent (a month's CSV to a slow server can outlast one lease), guarded as
   * every write of the claim is. One extension at a time; stopped when the send ends.
   */
  private keepLease(run: ClaimedRun, log: Logger): { stop(): void } {
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.d.pool.query(
        `UPDATE report_schedule_runs SET lease_until = $5
         WHERE schedule_id = $1 AND period_start = $2 AND claimed_by = $3 AND attempts = $4 AND status = 'sending'`,
        [run.schedule_id, run.period_start, this.d.nodeId, run.attempts, new Date(this.d.now() + this.d.settings.leaseMs)])
        .then((r) => { if (!r.rowCount) log.warn('scheduled report run no longer held by this process (its lease ran out and another took it over, or it was deleted)'); })
        .catch((err: Error) => log.warn({ err: err.message }, 'scheduled report run lease not extended'))
        .finally(() => { busy = false; });
    }, Math.max(1, Math.floor(this.d.settings.leaseMs / 3)));
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }

  /**
   * Marks the run `sent` once the SMTP server took the mail. Counted and logged as sent
   * only when the row changed: a process whose claim was taken over logs a warning
   * instead. Postgres errors are retried (SENT_RETRY_MS); past them the run stays
   * `sending` under a lease no longer extended, and is sent again when it runs out.
   */
  private async storeSent(run: ClaimedRun, messageId: string, log: Logger): Promise<void> {
    for (let i = 0; ; i++) {
      try {
        const { rowCount } = await this.d.pool.query(
          `UPDATE report_schedule_runs SET status = 'sent', sent_at = $4, message_id = $5, error = NULL, lease_until = NULL
           WHERE schedule_id = $1 AND period_start = $2 AND claimed_by = $3 AND attempts = $6`,
          [run.schedule_id, run.period_start, this.d.nodeId, new Date(this.d.now()), messageId, run.attempts]);
        if (rowCount) {
          this.d.metrics.inc('report_schedule_sent_total');
          log.info({ late: run.late }, 'scheduled report mail sent');
        } else {
          log.warn({ late: run.late }, 'scheduled report mail sent, but this process no longer held its run (another took it over, or the schedule was deleted): not recorded or counted here');
        }
        return;
      } catch (err) {
        const wait = SENT_RETRY_MS[i];
        if (wait === undefined) {
          log.error({ err: (err as Error).message, tries: i + 1 },
            'scheduled report mail sent but its run could not be stored as sent: it stays sending, and is sent again under the same Message-ID when its lease runs out');
          return;
        }
        await new Promise<void>((resolve) => setTimeout(resolve, wait).unref());
      }
    }
  }

  /** Records the attempt failed: tried again after a back-off unless the failure is permanent (an SMTP 5xx). */
  private async storeFailed(run: ClaimedRun, err: unknown, log: Logger): Promise<void> {
    const why = failureOf(err);
    this.d.metrics.inc('report_schedule_failures_total', why.code);
    const backoff = Math.min(this.d.settings.pollMs * 2 ** (run.attempts - 1), MAX_BACKOFF_MS);
    // A permanent failure gets no retry time: the claim's `retry_at <= now` never holds for it.
    await this.d.pool.query(
      `UPDATE report_schedule_runs SET status = 'failed', error = $4, retry_at = $5, lease_until = NULL
       WHERE schedule_id = $1 AND period_start = $2 AND claimed_by = $3 AND attempts = $6`,
      [run.schedule_id, run.period_start, this.d.nodeId, why.error, why.retryable ? new Date(this.d.now() + backoff) : null, run.attempts])
      .catch((e: Error) => log.warn({ err: e.message }, 'scheduled report run failure not recorded; the run is left to its lease'));
    log.warn({ code: why.code, detail: why.detail, last: !why.retryable || run.attempts >= MAX_ATTEMPTS }, 'scheduled report mail failed');
  }

  private async scheduleOf(run: ClaimedRun): Promise<ScheduleOfRun | null> {
    const { rows } = await this.d.pool.query<ScheduleOfRun>(
      `SELECT s.name, s.frequency, s.recipients, s.hotspot_id, s.content, s.lang,
              COALESCE((SELECT h.name FROM hotspots h WHERE h.id = s.hotspot_id AND h.tenant_id = s.tenant_id), t.name) AS site
       FROM report_schedules s JOIN tenants t ON t.id = s.tenant_id WHERE s.id = $1`, [run.schedule_id]);
    return rows[0] ?? null;
  }
}

/**
 * What a failed attempt stores as its run's `error` (GET .../runs shows it): a code and a
 * fixed sentence per kind, never the error's own message (an SMTP reply can quote an
 * address or the server's words); that goes to the log as `detail`. Every form is in the
 * README's error table.
 */
export function failureOf(err: unknown): { code: string; error: string; retryable: boolean; detail: string } {
  const detail = ((err as Error | undefined)?.message ?? String(err)).slice(0, 500);
  if (err instanceof AppError) {
    // report_smtp_not_configured's catalogue sentence is fixed; other catalogue errors (a download or printer slot busy...) get one sentence.
    const sentence = err.code === 'report_smtp_not_configured' ? err.message : 'the mail could not be written; tried again (the log of the process says why)';
    return { code: err.code, error: `${err.code}: ${sentence}`, retryable: true, detail };
  }
  if (isSmtpError(err)) {
    const f = smtpFailure(err);
    return { code: f.code, error: `${f.code}: ${f.meaning}${f.retryable ? '; tried again' : ', a permanent refusal: not tried again'}`, retryable: f.retryable, detail };
  }
  return { code: 'report_mail_failed', error: 'report_mail_failed: the mail could not be written or sent; tried again (the log of the process says why)', retryable: true, detail };
}

/** nodemailer's errors: an SMTP reply, or its own E-codes (ECONNECTION, ESOCKET, EAUTH, ETIMEDOUT...). */
function isSmtpError(err: unknown): boolean {
  const e = err as { responseCode?: unknown; code?: unknown };
  return typeof e.responseCode === 'number' || (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code));
}
