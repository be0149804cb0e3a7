import type { Analytics } from '../reports/report-service.js';
import type { Frequency } from './schedule-periods.js';
import type { ScheduleLang } from './schedule-store.js';

/** What a scheduled mail's words are made of. */
export interface MailFacts {
  site: string;
  from: string;
  to: string;
  zone: string;
  frequency: Frequency;
  scheduleId: string;
  scheduleName: string;
  /** Set when the mail is late: its due time and the time it goes, both local (YYYY-MM-DD HH:MM). */
  late: { due: string; sent: string } | null;
}

/** The session CSV cut at REPORT_MAIL_MAX_CSV_BYTES: the rows attached, the cap, and the API path of the whole. */
export interface CsvPartial {
  rows: number;
  maxBytes: number;
  url: string;
}

/** The 5651 daily summaries and the personal-data summary, as the compliance mail's body counts them. */
export interface ComplianceFacts {
  days: number;
  records: number;
  sessions: number;
  /** The first day whose chain breaks, or null. */
  brokenOn: string | null;
  stamped: number;
  warnings: number;
  requests: { filed: number; closed: number; open: number; overdue: number };
  deletions: number;
}

const n = (lang: ScheduleLang, v: number): string => v.toLocaleString(lang === 'tr' ? 'tr-TR' : 'en-GB');
/** A byte count as MiB, KiB or bytes, one decimal at most. */
const size = (b: number): string => (b >= 1_048_576 ? `${Math.round((b / 1_048_576) * 10) / 10} MiB` : b >= 1024 ? `${Math.round((b / 1024) * 10) / 10} KiB` : `${b} bytes`);
const label = (f: MailFacts): string => (f.from === f.to ? f.from : `${f.from} – ${f.to}`);

interface Words {
  late: string;
  reportSubject: string;
  complianceSubject: string;
  lateNotice(f: MailFacts): string;
  frequency: Record<Frequency, string>;
  footer(f: MailFacts): string;
  report(f: MailFacts, a: Analytics, csv: string, pdf: string | null, lang: ScheduleLang, partial: CsvPartial | null): string;
  compliance(f: MailFacts, c: ComplianceFacts, files: string[], lang: ScheduleLang): string;
}

const EN: Words = {
  late: '[Late] ',
  reportSubject: 'Wi-Fi report',
  complianceSubject: 'Compliance package',
  lateNotice: (f) => `This mail is late. It was due at ${f.late!.due} (${f.zone}) and goes out at ${f.late!.sent}: `
    + 'no engine process was running at its time, or the mail server could not take it. The figures are those of the period all the same.\n\n',
  frequency: { daily: 'daily', weekly: 'weekly', monthly: 'monthly' },
  footer: (f) => `\n--\nSent by the ${EN.frequency[f.frequency]} schedule${f.scheduleName ? ` "${f.scheduleName}"` : ''} (${f.scheduleId}). `
    + `To stop it, delete the schedule in the console or with DELETE /v1/reports/schedules/${f.scheduleId}.\n`,
  report: (f, a, csv, pdf, lang, partial) => {
    const m = a.auth_methods;
    const d = a.device_types;
    const lines = a.total_sessions === 0
      ? ['No guest used the Wi-Fi in this period.']
      : [
        `Sessions: ${n(lang, a.total_sessions)}`,
        `Different devices: ${n(lang, a.unique_devices)}`,
        `Average session: ${n(lang, a.avg_duration_minutes)} minutes (of the sessions that ended)`,
        `Busiest hour: ${a.peak_hour ?? '-'}`,
        `Sign-ins by method: voucher ${n(lang, m.voucher)}, SMS code ${n(lang, m.sms_otp)}, messaging-app code ${n(lang, m.msgapp_otp)}, `
          + `e-mail code ${n(lang, m.email)}, sponsor ${n(lang, m.sponsor)}`,
        `Devices: iOS ${n(lang, d.ios)}, Android ${n(lang, d.android)}, Windows ${n(lang, d.windows)}, macOS ${n(lang, d.macos)}`,
      ];
    return `Guest Wi-Fi at ${f.site}, ${label(f)} (days in ${f.zone}).\n\n${lines.join('\n')}\n\n`
      + `Attached: ${csv}, ${partial ? `the first ${n(lang, partial.rows)} sessions of the period only` : 'every session of the period'}, one a line`
      + `${pdf ? `; ${pdf}, the report with its charts` : ''}.\n`
      + (partial ? `\nThe whole session CSV is larger than ${size(partial.maxBytes)}, more than this mail may carry, so ${csv} is cut there. `
        + `The whole CSV: GET ${partial.url} (with an API key of this tenant).\n` : '');
  },
  compliance: (f, c, files, lang) => `Compliance package of ${f.site}, ${label(f)}.\n\n`
    + `Law 5651 access log, ${n(lang, c.days)} day(s): ${n(lang, c.records)} audit records, ${n(lang, c.sessions)} sessions; `
    + `hash chain ${c.brokenOn ? `BROKEN on ${c.brokenOn}` : 'intact'}; ${n(lang, c.stamped)} of ${n(lang, c.days)} day(s) time-stamped; `
    + `${n(lang, c.warnings)} warning(s).\n`
    + `Personal data: ${n(lang, c.requests.filed)} data-subject request(s) filed and ${n(lang, c.requests.closed)} closed in the period; `
    + `${n(lang, c.requests.open)} open now, ${n(lang, c.requests.overdue)} overdue; ${n(lang, c.deletions)} deletion(s) logged.\n\n`
    + `Attached:\n${files.map((x) => `- ${x}`).join('\n')}\n`,
};

const TR: Words = {
  late: '[Gecikmeli] ',
  reportSubject: 'Wi-Fi raporu',
  complianceSubject: 'Uyum paketi',
  lateNotice: (f) => `Bu e-posta gecikmeli. ${f.late!.due} (${f.zone}) saatinde gönderilmesi gerekiyordu, ${f.late!.sent} saatinde gönderiliyor: `
    + 'o saatte çalışan bir sunucu süreci yoktu ya da e-posta sunucusu iletiyi alamadı. Rakamlar yine de dönemin rakamlarıdır.\n\n',
  frequency: { daily: 'günlük', weekly: 'haftalık', monthly: 'aylık' },
  footer: (f) => `\n--\nBu e-posta ${TR.frequency[f.frequency]} zamanlamayla${f.scheduleName ? ` ("${f.scheduleName}")` : ''} gönderildi (${f.scheduleId}). `
    + `Durdurmak için zamanlamayı konsoldan ya da DELETE /v1/reports/schedules/${f.scheduleId} ile silin.\n`,
  report: (f, a, csv, pdf, lang, partial) => {
    const m = a.auth_methods;
    const d = a.device_types;
    const lines = a.total_sessions === 0
      ? ['Bu dönemde Wi-Fi ağını kullanan misafir olmadı.']
      : [
        `Oturum: ${n(lang, a.total_sessions)}`,
        `Farklı cihaz: ${n(lang, a.unique_devices)}`,
        `Ortalama oturum: ${n(lang, a.avg_duration_minutes)} dakika (biten oturumların)`,
        `En yoğun saat: ${a.peak_hour ?? '-'}`,
        `Yönteme göre girişler: kupon ${n(lang, m.voucher)}, SMS kodu ${n(lang, m.sms_otp)}, mesajlaşma uygulaması kodu ${n(lang, m.msgapp_otp)}, `
          + `e-posta kodu ${n(lang, m.email)}, sponsor ${n(lang, m.sponsor)}`,
        `Cihazlar: iOS ${n(lang, d.ios)}, Android ${n(lang, d.android)}, Windows ${n(lang, d.windows)}, macOS ${n(lang, d.macos)}`,
      ];
    return `${f.site} misafir Wi-Fi ağı, ${label(f)} (günler ${f.zone} saatine göre).\n\n${lines.join('\n')}\n\n`
      + `Ekler: ${csv}, ${partial ? `dönemin yalnızca ilk ${n(lang, partial.rows)} oturumu` : 'dönemin bütün oturumları'}, her satırda bir oturum`
      + `${pdf ? `; ${pdf}, grafikleriyle rapor` : ''}.\n`
      + (partial ? `\nOturumların tamamının CSV dosyası ${size(partial.maxBytes)} sınırını aşıyor, bu e-postanın taşıyabileceğinden fazla; bu yüzden ${csv} orada kesildi. `
        + `CSV'nin tamamı: GET ${partial.url} (bu kiracının bir API anahtarıyla).\n` : '');
  },
  compliance: (f, c, files, lang) => `${f.site} uyum paketi, ${label(f)}.\n\n`
    + `5651 sayılı Kanun erişim kaydı, ${n(lang, c.days)} gün: ${n(lang, c.records)} denetim kaydı, ${n(lang, c.sessions)} oturum; `
    + `hash zinciri ${c.brokenOn ? `${c.brokenOn} tarihinde KIRIK` : 'sağlam'}; ${n(lang, c.days)} günün ${n(lang, c.stamped)} tanesi zaman damgalı; `
    + `${n(lang, c.warnings)} uyarı.\n`
    + `Kişisel veriler: dönemde ${n(lang, c.requests.filed)} ilgili kişi başvurusu alındı, ${n(lang, c.requests.closed)} başvuru kapandı; `
    + `şu anda ${n(lang, c.requests.open)} açık, ${n(lang, c.requests.overdue)} süresi geçmiş; ${n(lang, c.deletions)} silme kaydı.\n\n`
    + `Ekler:\n${files.map((x) => `- ${x}`).join('\n')}\n`,
};

export const MAIL_WORDS: Record<ScheduleLang, Words> = { en: EN, tr: TR };

/** The subject line: late first (so an inbox sorted by subject shows it), then what and where and when. */
export function mailSubject(lang: ScheduleLang, kind: 'report' | 'compliance', f: MailFacts): string {
  const w = MAIL_WORDS[lang];
  return `${f.late ? w.late : ''}${kind === 'report' ? w.reportSubject : w.complianceSubject}, ${f.site}: ${label(f)}`;
}
