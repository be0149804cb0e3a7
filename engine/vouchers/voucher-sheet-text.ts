/** The languages a voucher sheet is printed in. */
export const SHEET_LANGS = ['tr', 'en'] as const;
export type SheetLang = (typeof SHEET_LANGS)[number];

/** One voucher as the sheet worker draws it: plain data, already in words where words depend on the tenant. */
export interface SheetVoucher {
  code: string;
  /** The portal URL the QR code holds (code and hotspot_id as query parameters). */
  url: string;
  /** Validity and limits, one line each, in the sheet's language. */
  lines: string[];
}

/** The fields of a voucher the words are made from (a subset of VoucherRow). */
export interface VoucherTerms {
  max_uses: number | null;
  duration_minutes: number | null;
  daily_quota_mb: number | null;
  session_quota_mb: number | null;
  bandwidth_down_mbps: number | null;
  expires_at: Date | null;
  valid_from: Date | null;
  valid_until: Date | null;
}

interface Words {
  title: string;
  scan: string;
  code: string;
  single: string;
  uses: (n: number) => string;
  unlimited: string;
  duration: (d: string) => string;
  minutes: (n: number) => string;
  hours: (n: number) => string;
  days: (n: number) => string;
  expires: (when: string) => string;
  window: (from: string, until: string) => string;
  from: (when: string) => string;
  until: (when: string) => string;
  dailyQuota: (mb: string) => string;
  sessionQuota: (mb: string) => string;
  speed: (mbps: number) => string;
}

/** Every word on a sheet, per language (the sheet has no catalogue file of its own: these are its catalogue). */
export const SHEET_WORDS: Record<SheetLang, Words> = {
  en: {
    title: 'Wi-Fi voucher', scan: 'Scan to connect, or enter the code on the Wi-Fi page', code: 'Code',
    single: 'Single use', uses: (n) => `Up to ${n} uses`, unlimited: 'Unlimited uses',
    duration: (d) => `Online time per sign-in: ${d}`,
    minutes: (n) => `${n} minute${n === 1 ? '' : 's'}`, hours: (n) => `${n} hour${n === 1 ? '' : 's'}`, days: (n) => `${n} day${n === 1 ? '' : 's'}`,
    expires: (w) => `Use by ${w}`, window: (f, u) => `Valid only from ${f} to ${u}`, from: (w) => `Valid from ${w}`, until: (w) => `Valid until ${w}`,
    dailyQuota: (mb) => `Data: ${mb} per day`, sessionQuota: (mb) => `Data: ${mb} per sign-in`, speed: (n) => `Speed: up to ${n} Mbit/s`,
  },
  tr: {
    title: 'Wi-Fi kuponu', scan: 'Bağlanmak için okutun ya da kodu Wi-Fi sayfasına girin', code: 'Kod',
    single: 'Tek kullanımlık', uses: (n) => `En fazla ${n} kullanım`, unlimited: 'Sınırsız kullanım',
    duration: (d) => `Her girişte çevrimiçi süre: ${d}`,
    minutes: (n) => `${n} dakika`, hours: (n) => `${n} saat`, days: (n) => `${n} gün`,
    expires: (w) => `Son kullanma: ${w}`, window: (f, u) => `Yalnızca ${f} ile ${u} arasında geçerli`, from: (w) => `Geçerlilik başlangıcı: ${w}`,
    until: (w) => `Geçerlilik bitişi: ${w}`,
    dailyQuota: (mb) => `Veri: günde ${mb}`, sessionQuota: (mb) => `Veri: giriş başına ${mb}`, speed: (n) => `Hız: en fazla ${n} Mbit/sn`,
  },
};

function durationWords(w: Words, minutes: number): string {
  if (minutes % 1440 === 0) return w.days(minutes / 1440);
  if (minutes % 60 === 0) return w.hours(minutes / 60);
  return w.minutes(minutes);
}

function megabytes(mb: number): string {
  return mb >= 1024 && mb % 1024 === 0 ? `${mb / 1024} GB` : `${mb} MB`;
}

// Building an Intl.DateTimeFormat costs far more than using one: a document of 10,000 vouchers uses one or two.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(lang: SheetLang, timeZone: string): Intl.DateTimeFormat {
  const key = `${lang} ${timeZone}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(lang === 'tr' ? 'tr-TR' : 'en-GB', {
      day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone, timeZoneName: 'short',
    });
    formatters.set(key, f);
  }
  return f;
}

/**
 * A voucher's validity and limits in words, in the sheet's language, with
 * times in the hotspot's zone (named, so a guest abroad is not misled).
 */
export function termsInWords(v: VoucherTerms, lang: SheetLang, timeZone: string): string[] {
  const w = SHEET_WORDS[lang];
  const fmt = formatter(lang, timeZone);
  const when = (d: Date): string => fmt.format(d);
  const out: string[] = [];
  out.push(v.max_uses === null ? w.unlimited : v.max_uses === 1 ? w.single : w.uses(v.max_uses));
  if (v.duration_minutes !== null) out.push(w.duration(durationWords(w, v.duration_minutes)));
  if (v.valid_from && v.valid_until) out.push(w.window(when(v.valid_from), when(v.valid_until)));
  else if (v.valid_from) out.push(w.from(when(v.valid_from)));
  else if (v.valid_until) out.push(w.until(when(v.valid_until)));
  if (v.expires_at) out.push(w.expires(when(v.expires_at)));
  if (v.daily_quota_mb !== null) out.push(w.dailyQuota(megabytes(v.daily_quota_mb)));
  if (v.session_quota_mb !== null) out.push(w.sessionQuota(megabytes(v.session_quota_mb)));
  if (v.bandwidth_down_mbps !== null) out.push(w.speed(v.bandwidth_down_mbps));
  return out;
}
