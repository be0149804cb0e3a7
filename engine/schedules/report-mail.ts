import type { DailySummary, DaySummary } from '../compliance/daily-summary.js';
import type { PrivacyService } from '../privacy/privacy-service.js';
import type { ReportPdfService } from '../reports/report-pdf-service.js';
import type { ReportService } from '../reports/report-service.js';
import { csvCell } from '../util/csv-cell.js';
import { mailSubject, MAIL_WORDS, type ComplianceFacts, type MailFacts } from './mail-text.js';
import { addDays } from '../util/local-day.js';
import { localTime } from './schedule-periods.js';
import type { ScheduleContent, ScheduleLang } from './schedule-store.js';

/** One attachment, whole: a summary, the PDF, or the session CSV read up to its cap. */
export interface MailAttachment {
  filename: string;
  contentType: string;
  content: string | Buffer;
}

/** REPORT_MAIL_MAX_CSV_BYTES's default: 10 MiB, about 13.4 MB once base64-encoded, under the ~25 MB most SMTP servers take. */
export const DEFAULT_MAX_CSV_BYTES = 10 * 1024 * 1024;

export interface MailContent {
  subject: string;
  text: string;
  attachments: MailAttachment[];
}

/** What a run needs to be written. */
export interface MailJob {
  tenantId: string;
  hotspotId: string | null;
  content: ScheduleContent;
  lang: ScheduleLang;
  facts: MailFacts;
  /** The session CSV attached up to this many bytes (REPORT_MAIL_MAX_CSV_BYTES); past it a partial one, named so, and the body says where the whole is. */
  maxCsvBytes: number;
}

export interface MailSources {
  reports: ReportService;
  /** The PDF report (drawn on its piscina thread), attached whole: tens to a few hundred KB. */
  pdf: ReportPdfService;
  dailySummary: DailySummary;
  privacy: PrivacyService;
}

/**
 * Writes a scheduled mail (docs/reports.md, Scheduled e-mail): `report` the
 * figures in plain words, the PDF report, and the period's sessions as CSV,
 * read from Postgres's COPY up to `maxCsvBytes` (a mail server refuses a
 * message past ~25 MB, and a busy venue's month can be hundreds of MB): past
 * the cap the COPY is ended, the attachment is the whole rows before it, named
 * `-partial.csv`, and the body says so and where the whole CSV is;
 * `compliance` the 5651 daily log summaries and the personal-data audit
 * summary, each as JSON and as CSV.
 */
export async function writeMail(src: MailSources, job: MailJob): Promise<MailContent> {
  const w = MAIL_WORDS[job.lang];
  const f = job.facts;
  const head = f.late ? w.lateNotice(f) : '';
  const subject = mailSubject(job.lang, job.content, f);
  if (job.content === 'report') {
    const q = { from: f.from, to: f.to, ...(job.hotspotId ? { hotspotId: job.hotspotId } : {}) };
    const analytics = await src.reports.analytics(job.tenantId, q);
    // Drawn before the CSV is opened: the CSV's COPY holds a Postgres connection only while the message is written.
    const pdf = await src.pdf.renderBuffer(job.tenantId, { from: f.from, to: f.to, hotspotIds: job.hotspotId ? [job.hotspotId] : [], lang: job.lang });
    const csv = await csvUpTo((await src.reports.sessionsCsv(job.tenantId, q)).stream, job.maxCsvBytes);
    const csvName = `sessions-${f.from}-${f.to}${csv.whole ? '' : '-partial'}.csv`;
    const partial = csv.whole ? null : {
      rows: csv.rows, maxBytes: job.maxCsvBytes,
      url: `/v1/reports/sessions?format=csv&from=${f.from}&to=${f.to}${job.hotspotId ? `&hotspot_id=${encodeURIComponent(job.hotspotId)}` : ''}`,
    };
    return {
      subject,
      text: head + w.report(f, analytics, csvName, pdf.filename, job.lang, partial) + w.footer(f),
      attachments: [
        { filename: pdf.filename, contentType: 'application/pdf', content: pdf.pdf },
        { filename: csvName, contentType: 'text/csv; charset=utf-8', content: csv.bytes },
      ],
    };
  }
  // The 5651 summaries are of UTC days, as the evidence pack's access log is; the local days of the period name them.
  const days: DaySummary[] = [];
  for (let d = f.from; d <= f.to; d = addDays(d, 1)) days.push(await src.dailySummary.day(job.tenantId, d));
  const privacy = await src.privacy.summary(job.tenantId, new Date(localTime(f.from, 0, f.zone)), new Date(localTime(addDays(f.to, 1), 0, f.zone)));
  const facts = complianceFacts(days, privacy);
  const base = `${f.from}_${f.to}`;
  const files = [`5651-daily-summary-${base}.json`, `5651-daily-summary-${base}.csv`, `personal-data-summary-${base}.json`, `personal-data-summary-${base}.csv`];
  return {
    subject,
    text: head + w.compliance(f, facts, files, job.lang) + w.footer(f),
    attachments: [
      { filename: files[0]!, contentType: 'application/json', content: JSON.stringify({ days }, null, 2) },
      { filename: files[1]!, contentType: 'text/csv; charset=utf-8', content: dailyCsv(days) },
      { filename: files[2]!, contentType: 'application/json', content: JSON.stringify(privacy, null, 2) },
      { filename: files[3]!, contentType: 'text/csv; charset=utf-8', content: privacyCsv(privacy) },
    ],
  };
}

/**
 * The CSV read up to `max` bytes: whole when it ends by then; else its whole
 * rows before the cap (a line break outside quotes: COPY quotes a field holding
 * one), and the COPY ended by leaving the loop (its connection and download
 * slot go back). Held in memory, at most `max` bytes: the mail needs its
 * name (partial or not) before its first byte goes out.
 */
export async function csvUpTo(stream: AsyncIterable<Buffer>, max: number): Promise<{ bytes: Buffer; whole: boolean; /** the data rows kept, when not whole */ rows: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of stream) {
    if (size + c.length > max) {
      chunks.push(c.subarray(0, max - size));
      const head = Buffer.concat(chunks);
      let quoted = false;
      let end = 0;
      let lines = 0;
      for (let i = 0; i < head.length; i++) {
        const b = head[i];
        if (b === 0x22) quoted = !quoted;
        else if (b === 0x0a && !quoted) { end = i + 1; lines++; }
      }
      return { bytes: head.subarray(0, end), whole: false, rows: Math.max(0, lines - 1) };
    }
    chunks.push(c);
    size += c.length;
  }
  return { bytes: Buffer.concat(chunks), whole: true, rows: 0 };
}

interface PrivacyCategory { category: string; lives_in: string; records: number; oldest: string | null; retention: string; compliant: boolean }
interface PrivacyShape {
  categories?: PrivacyCategory[];
  requests?: { open: number; overdue: number; filed: number; closed: number; closed_late: number };
  deletions?: { kind: string; category: string; rows: number; runs: number }[];
}

function complianceFacts(days: DaySummary[], privacy: Record<string, unknown>): ComplianceFacts {
  const p = privacy as PrivacyShape;
  const r = p.requests ?? { open: 0, overdue: 0, filed: 0, closed: 0, closed_late: 0 };
  return {
    days: days.length,
    records: days.reduce((s, d) => s + d.totals.record_count, 0),
    sessions: days.reduce((s, d) => s + d.totals.session_count, 0),
    brokenOn: days.find((d) => !d.totals.chain_valid)?.date ?? null,
    stamped: days.filter((d) => d.totals.tsa_status === 'granted').length,
    warnings: days.reduce((s, d) => s + d.totals.warnings.length, 0),
    requests: { filed: r.filed, closed: r.closed, open: r.open, overdue: r.overdue },
    deletions: (p.deletions ?? []).reduce((s, d) => s + d.runs, 0),
  };
}

const row = (cells: (string | number | boolean | null)[]): string => `${cells.map((c) => csvCell(c === null ? null : String(c))).join(',')}\r\n`;

/** One line per day and hotspot, and one per day for the tenant as a whole (hotspot empty). */
function dailyCsv(days: DaySummary[]): string {
  let out = row(['date', 'hotspot_id', 'hotspot', 'record_count', 'session_count', 'chain_valid', 'tsa_status', 'warnings', 'log_sha256']);
  for (const d of days) {
    out += row([d.date, '', '', d.totals.record_count, d.totals.session_count, d.totals.chain_valid, d.totals.tsa_status, d.totals.warnings.length, d.log_sha256]);
    for (const h of d.hotspots) out += row([d.date, h.hotspot_id, h.name, h.record_count, h.session_count, h.chain_valid, h.tsa_status, h.warnings.length, '']);
  }
  return out;
}

/** The categories held (with retention compliance), then the requests, then the deletions, each a section of its own. */
function privacyCsv(privacy: Record<string, unknown>): string {
  const p = privacy as PrivacyShape;
  let out = row(['section', 'name', 'lives_in', 'records', 'oldest', 'retention', 'compliant']);
  for (const c of p.categories ?? []) out += row(['category', c.category, c.lives_in, c.records, c.oldest, c.retention, c.compliant]);
  for (const [k, v] of Object.entries(p.requests ?? {})) out += row(['requests', k, '', v, '', '', '']);
  for (const d of p.deletions ?? []) out += row(['deletions', `${d.kind}:${d.category}`, '', d.rows, '', `${d.runs} run(s)`, '']);
  return out;
}
