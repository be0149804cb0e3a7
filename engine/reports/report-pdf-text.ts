import type { DeviceType } from './device-type.js';
import type { ReportMethod } from './hour-figures.js';
import type { ReportFigures } from './report-document.js';

/** The languages a PDF report is written in. */
export const REPORT_PDF_LANGS = ['tr', 'en'] as const;
export type ReportPdfLang = (typeof REPORT_PDF_LANGS)[number];

/** Every fixed word of a PDF report, per language (the report has no catalogue file of its own: this is its catalogue). */
interface Words {
  locale: string;
  title: string;
  venue: string;
  venues: string;
  more: (n: number) => string;
  period: string;
  days: (n: number) => string;
  generated: string;
  zone: string;
  glance: string;
  kpi: { sessions: string; devices: string; duration: string; peak: string; dataIn: string; dataOut: string };
  none: string;
  notes: string;
  charts: { daily: string; hours: string; methods: string; devices: string };
  tables: { methods: string; devices: string; daily: string; method: string; device: string; date: string; sessions: string; share: string; avg: string; dataIn: string; dataOut: string };
  methods: Record<ReportMethod, string>;
  deviceTypes: Record<DeviceType, string>;
  page: (n: number) => string;
  minutes: (m: number) => string;
  percent: (p: number) => string;
  busiest: (day: string, n: string) => string;
  peakHour: (from: string, to: string) => string;
  leading: (method: string, share: string) => string;
  device: (type: string, share: string) => string;
  avgDuration: (d: string) => string;
  change: (dir: 'up' | 'down' | 'same', pct: string, days: number, prev: string, prevN: string) => string;
  noPrevious: (days: number, prev: string) => string;
}

const previousEn = (days: number): string => (days === 1 ? 'day' : `${days} days`);

const EN: Words = {
  locale: 'en-GB',
  title: 'Wi-Fi usage report', venue: 'Venue', venues: 'Venues', more: (n) => `and ${n} more`,
  period: 'Period', days: (n) => `${n} day${n === 1 ? '' : 's'}`, generated: 'Generated', zone: 'Time zone',
  glance: 'At a glance',
  kpi: { sessions: 'Sessions', devices: 'Unique devices', duration: 'Average duration', peak: 'Peak hour', dataIn: 'Data in', dataOut: 'Data out' },
  none: 'There was no session in this period.',
  notes: 'Notes',
  charts: { daily: 'Sessions per day', hours: 'Sessions by hour of day', methods: 'Sign-in methods', devices: 'Device types' },
  tables: {
    methods: 'Per sign-in method', devices: 'Per device type', daily: 'Per day', method: 'Method', device: 'Device type', date: 'Date',
    sessions: 'Sessions', share: 'Share', avg: 'Avg duration', dataIn: 'Data in', dataOut: 'Data out',
  },
  methods: { sms_otp: 'SMS code', msgapp_otp: 'Messaging app code', email: 'E-mail', voucher: 'Voucher', sponsor: 'Sponsor approval', pms: 'Hotel room (PMS)' },
  deviceTypes: { ios: 'iOS', android: 'Android', windows: 'Windows', macos: 'macOS', other: 'Other' },
  page: (n) => `Page ${n}`,
  minutes: (m) => (m < 60 ? `${m} min` : `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`),
  percent: (p) => `${p}%`,
  busiest: (day, n) => `The busiest day was ${day}, with ${n} sessions.`,
  peakHour: (f, t) => `Most sessions started between ${f} and ${t}.`,
  leading: (m, s) => `The leading sign-in method was ${m}, with ${s} of sessions.`,
  device: (t, s) => `The most common device type was ${t}, with ${s} of sessions.`,
  avgDuration: (d) => `A session lasted ${d} on average.`,
  change: (dir, pct, days, prev, n) => (dir === 'same'
    ? `Sessions were as many as in the previous ${previousEn(days)} (${prev}: ${n}).`
    : `Sessions ${dir === 'up' ? 'rose' : 'fell'} by ${pct} against the previous ${previousEn(days)} (${prev}: ${n}).`),
  noPrevious: (days, prev) => `There was no session in the previous ${previousEn(days)} (${prev}), so there is nothing to compare with.`,
};

const TR: Words = {
  locale: 'tr-TR',
  title: 'Wi-Fi kullanım raporu', venue: 'Mekân', venues: 'Mekânlar', more: (n) => `ve ${n} mekân daha`,
  period: 'Dönem', days: (n) => `${n} gün`, generated: 'Oluşturulma', zone: 'Saat dilimi',
  glance: 'Özet',
  kpi: { sessions: 'Oturum', devices: 'Tekil cihaz', duration: 'Ortalama süre', peak: 'En yoğun saat', dataIn: 'Gelen veri', dataOut: 'Giden veri' },
  none: 'Bu dönemde hiç oturum olmadı.',
  notes: 'Notlar',
  charts: { daily: 'Günlük oturum sayısı', hours: 'Günün saatine göre oturumlar', methods: 'Giriş yöntemleri', devices: 'Cihaz türleri' },
  tables: {
    methods: 'Giriş yöntemine göre', devices: 'Cihaz türüne göre', daily: 'Günlere göre', method: 'Yöntem', device: 'Cihaz türü', date: 'Tarih',
    sessions: 'Oturum', share: 'Pay', avg: 'Ort. süre', dataIn: 'Gelen veri', dataOut: 'Giden veri',
  },
  methods: { sms_otp: 'SMS kodu', msgapp_otp: 'Mesajlaşma uygulaması kodu', email: 'E-posta', voucher: 'Kupon', sponsor: 'Sponsor onayı', pms: 'Otel odası (PMS)' },
  deviceTypes: { ios: 'iOS', android: 'Android', windows: 'Windows', macos: 'macOS', other: 'Diğer' },
  page: (n) => `Sayfa ${n}`,
  minutes: (m) => (m < 60 ? `${m} dk` : `${Math.floor(m / 60)} sa${m % 60 ? ` ${m % 60} dk` : ''}`),
  percent: (p) => `%${p}`,
  busiest: (day, n) => `En yoğun gün ${n} oturumla ${day} oldu.`,
  peakHour: (f, t) => `Oturumların çoğu ${f} ile ${t} arasında başladı.`,
  leading: (m, s) => `En çok kullanılan giriş yöntemi, oturumların ${s} payıyla ${m} oldu.`,
  device: (t, s) => `En yaygın cihaz türü, oturumların ${s} payıyla ${t} oldu.`,
  avgDuration: (d) => `Bir oturum ortalama ${d} sürdü.`,
  change: (dir, pct, days, prev, n) => (dir === 'same'
    ? `Oturum sayısı önceki ${days} günle (${prev}: ${n}) aynı kaldı.`
    : `Oturum sayısı önceki ${days} güne (${prev}: ${n}) göre ${pct} ${dir === 'up' ? 'arttı' : 'azaldı'}.`),
  noPrevious: (days, prev) => `Önceki ${days} günde (${prev}) hiç oturum olmadığı için karşılaştırma yapılamadı.`,
};

export const REPORT_WORDS: Record<ReportPdfLang, Words> = { en: EN, tr: TR };

/** A calendar date (YYYY-MM-DD) in words: "5 May 2026", "5 Mayıs 2026"; with the weekday when asked. */
export function dateInWords(lang: ReportPdfLang, day: string, weekday = false): string {
  return new Intl.DateTimeFormat(REPORT_WORDS[lang].locale, {
    day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC', ...(weekday ? { weekday: 'long' } : {}),
  }).format(new Date(`${day}T00:00:00Z`));
}

/** A short date for chart axes: "5 May", "5 May" (the locale's short month). */
export function shortDate(lang: ReportPdfLang, day: string): string {
  return new Intl.DateTimeFormat(REPORT_WORDS[lang].locale, { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
}

/** A range in words, both ends included: "1 May 2026 – 7 May 2026", or one date when from = to. */
export function rangeInWords(lang: ReportPdfLang, from: string, to: string): string {
  return from === to ? dateInWords(lang, from) : `${dateInWords(lang, from)} – ${dateInWords(lang, to)}`;
}

/** An instant in a zone, date and time in words; a zone Intl does not know is shown in UTC. */
export function instantInWords(lang: ReportPdfLang, ms: number, timeZone: string): string {
  const opts = { dateStyle: 'long', timeStyle: 'short' } as const;
  try {
    return new Intl.DateTimeFormat(REPORT_WORDS[lang].locale, { ...opts, timeZone }).format(ms);
  } catch {
    return `${new Intl.DateTimeFormat(REPORT_WORDS[lang].locale, { ...opts, timeZone: 'UTC' }).format(ms)} UTC`;
  }
}

/** A whole number with the language's grouping: 1,234 / 1.234. */
export function count(lang: ReportPdfLang, n: number): string {
  return new Intl.NumberFormat(REPORT_WORDS[lang].locale).format(n);
}

/** A share of a whole as a rounded percentage in the language's form: 62% / %62. */
export function share(lang: ReportPdfLang, part: number, whole: number): string {
  return REPORT_WORDS[lang].percent(whole > 0 ? Math.round((part / whole) * 100) : 0);
}

/** Bytes in decimal units with one decimal: 1.5 GB / 1,5 GB. */
export function bytes(lang: ReportPdfLang, n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  const f = new Intl.NumberFormat(REPORT_WORDS[lang].locale, { maximumFractionDigits: u === 0 ? 0 : 1 });
  return `${f.format(v)} ${units[u]}`;
}

/** An hour of day as HH:00. */
export const hourText = (h: number): string => `${String(h).padStart(2, '0')}:00`;

/**
 * The notes in plain words, made from the figures alone: the busiest day,
 * the peak hour, the leading method and device type with their shares, the
 * average duration, and the change against the previous period of equal
 * length. No session: the one sentence that says so.
 */
export function reportNotes(lang: ReportPdfLang, f: ReportFigures, days: number): string[] {
  const w = REPORT_WORDS[lang];
  if (f.sessions === 0) {
    const notes = [w.none];
    if (f.previous.sessions > 0) notes.push(w.change('down', w.percent(100), days, rangeInWords(lang, f.previous.from, f.previous.to), count(lang, f.previous.sessions)));
    return notes;
  }
  const notes: string[] = [];
  // The first of the busiest days, so the sentence names one.
  const busiest = f.daily.reduce((a, b) => (b.sessions > a.sessions ? b : a), f.daily[0]!);
  if (days > 1) notes.push(w.busiest(dateInWords(lang, busiest.date, true), count(lang, busiest.sessions)));
  if (f.peakHour !== null) notes.push(w.peakHour(hourText(f.peakHour), hourText((f.peakHour + 1) % 24)));
  const method = [...f.methods].sort((a, b) => b.sessions - a.sessions)[0];
  if (method && method.sessions > 0) notes.push(w.leading(w.methods[method.method], share(lang, method.sessions, f.sessions)));
  const device = [...f.devices].sort((a, b) => b.sessions - a.sessions)[0];
  if (device && device.sessions > 0) notes.push(w.device(w.deviceTypes[device.type], share(lang, device.sessions, f.sessions)));
  notes.push(w.avgDuration(w.minutes(f.avgDurationMinutes)));
  const prev = rangeInWords(lang, f.previous.from, f.previous.to);
  if (f.previous.sessions === 0) notes.push(w.noPrevious(days, prev));
  else {
    const pct = Math.round(((f.sessions - f.previous.sessions) / f.previous.sessions) * 100);
    notes.push(w.change(pct > 0 ? 'up' : pct < 0 ? 'down' : 'same', w.percent(Math.abs(pct)), days, prev, count(lang, f.previous.sessions)));
  }
  return notes;
}
