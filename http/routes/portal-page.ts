import { readFileSync } from 'node:fs';
import {
  assetPath, gatewayQuery, handbackUrl, normalizeMac, offeredMethods, parseGatewayParams, unpackOpenNdsQuery,
  type Engine, type GatewayParams, type Handback, type HotspotRef, type PortalRecord, type PortalStarted,
} from '../../engine/index.js';
import { canonicalAddress } from '../client-address.js';
import { acceptsEncoding } from '../accept-encoding.js';
import { GzipRuns } from '../gzip-runs.js';
import { compileTemplate, esc, renderRuns, type TemplateNode, type View } from '../portal-template.js';
import type { Reply } from '../respond.js';
import type { PortalHeaders, Route, RouteContext } from '../router.js';

type Lang = 'tr' | 'en';
type Messages = Record<string, string>;

/** The page's sources (web/portal), read once at start-up; each catalogue also as the page's JSON. */
interface Assets { template: TemplateNode[]; css: string; js: string; messages: Record<Lang, Messages>; messagesJson: Record<Lang, string> }

/** Reads the page's sources; exported for tests. */
export function loadAssets(): Assets {
  const read = (f: string): string => readFileSync(assetPath('web', 'portal', f), 'utf8');
  const messages = { tr: JSON.parse(read('messages.tr.json')) as Messages, en: JSON.parse(read('messages.en.json')) as Messages };
  // JSON inside <script>: '<' escaped so no text can close the element.
  const json = (m: Messages): string => JSON.stringify(m).replace(/</g, '\\u003c');
  return {
    template: compileTemplate(read('page.html')), css: read('portal.css'), js: read('portal.js'),
    messages, messagesJson: { tr: json(messages.tr), en: json(messages.en) },
  };
}

/** ?lang=tr|en, else the first of Accept-Language's tags (by q) that is Turkish or English, else Turkish. */
export function pickLang(param: string | null, acceptLanguage: string): Lang {
  if (param === 'tr' || param === 'en') return param;
  const tags = acceptLanguage.split(',').map((part, i) => {
    const [tag = '', ...opts] = part.trim().toLowerCase().split(';');
    const q = opts.map((o) => o.trim()).find((o) => o.startsWith('q='));
    return { lang: tag.split('-')[0], q: q ? Number(q.slice(2)) || 0 : 1, i };
  }).filter((t) => t.q > 0).sort((a, b) => b.q - a.q || a.i - b.i);
  for (const t of tags) if (t.lang === 'tr' || t.lang === 'en') return t.lang;
  return 'tr';
}

/** Which field an error is about, for the error summary's link (GOV.UK pattern). */
const ERROR_FIELD: Record<string, string> = {
  voucher_not_found: 'code', voucher_expired: 'code', voucher_exhausted: 'code', voucher_ssid_not_allowed: 'code', too_many_attempts: 'code',
  voucher_not_yet_valid: 'code', validation_failed: 'code', terms_not_accepted: 'accept_terms', phone_invalid: 'phone', phone_prefix_blocked: 'phone',
  sponsor_not_allowed: 'sponsor_email',
  pms_guest_not_found: 'room-number', pms_unavailable: 'room-number',
};

/**
 * An error body as a sentence of the catalogue; unknown codes get the generic one. A
 * match-day voucher's start (`valid_from`) is written in the hotspot's zone, where the guest stands.
 */
export function errorSentence(m: Messages, body: Record<string, unknown>, lang: Lang = 'en', timeZone = 'UTC'): string {
  const code = String(body.error ?? 'internal');
  const text = m[`err_${code}`] ?? m.err_internal!;
  const from = typeof body.valid_from === 'string' && Number.isFinite(Date.parse(body.valid_from)) ? startTime(new Date(body.valid_from), lang, timeZone) : '';
  return text.replace('{attempts}', String(body.attempts_left ?? '')).replace('{wait}', String(body.retry_after ?? '')).replace('{from}', from);
}

/** A match-day voucher's start as the guest reads it: always with its date (a match is rarely today at the gate's opening hour). */
export function startTime(at: Date, lang: Lang, timeZone: string): string {
  return new Intl.DateTimeFormat(lang === 'tr' ? 'tr-TR' : 'en-GB', { day: 'numeric', month: 'long', hour: '2-digit', minute: '2-digit', timeZone }).format(at);
}

/** An http(s) URL or null: where we may send a browser. */
function safeUrl(raw: string | null | undefined): string | null {
  if (!raw) return null;
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.toString() : null;
  } catch {
    return null;
  }
}

function originalUrl(gw: GatewayParams | null, query: URLSearchParams): string | null {
  const fromGw = gw ? (gw.kind === 'uam' ? gw.userurl : gw.kind === 'mikrotik' ? gw.origUrl : gw.redir) : '';
  return safeUrl(fromGw || query.get('url') || query.get('userurl'));
}

function gatewayOf(src: URLSearchParams): GatewayParams | null {
  try {
    return parseGatewayParams(src);
  } catch {
    return null; // unusable gateway parameters: the page still works, without a hand-back
  }
}

/** The voucher field's limit (web/portal/page.html maxlength): a longer value is no code of ours. */
const MAX_CODE_CHARS = 128;

/** A code from a URL is hostile text: control characters out, bounded; the template escapes it. */
function codeText(raw: string | null | undefined): string {
  const v = (raw ?? '').replace(/[\u0000-\u001f\u007f]/g, '').trim();
  return v.length <= MAX_CODE_CHARS ? v : '';
}

/**
 * The voucher code a printed sheet's QR URL carries (`?code=`), to fill the
 * form. A gateway that intercepts the QR URL before the guest is let through
 * sends the browser to the portal with the URL it was asked for as its own
 * parameter (CoovaChilli's userurl, MikroTik's link-orig, openNDS's
 * redir): the code is read from there too, when that URL names this
 * hotspot.
 */
export function prefilledCode(query: URLSearchParams, gw: GatewayParams | null, hotspotId: string): string {
  const own = codeText(query.get('code'));
  if (own) return own;
  const orig = originalUrl(gw, query);
  if (!orig) return '';
  const u = new URL(orig);
  return u.searchParams.get('hotspot_id') === hotspotId ? codeText(u.searchParams.get('code')) : '';
}

const hiddenInput = (name: string, value: string): string => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`;

interface PageInput {
  lang: Lang;
  query: URLSearchParams;
  ref: HotspotRef | null;
  hotspotId: string;
  record: PortalRecord | null;
  /** An error to show without a record (hotspot_not_found). */
  errorCode: string | null;
  /** The methods the hotspot's tenant offers (its sign-in settings). */
  tenantMethods: readonly string[];
  /** Sponsor approval: offered (the tenant's sponsor.enabled), and a request of this device waiting (`?sponsor=`). */
  sponsor?: { offered: boolean; waiting: boolean };
  /** The hotspot has a PMS link: the room form shows (engine/pms/). */
  room?: boolean;
}

/**
 * When the session ends, as the guest reads it: the time, with the date when
 * that is not today. A 24-hour session (the default) ends at this very clock
 * time tomorrow, and "until 23:19" read at 23:19 looks like no time at all.
 */
export function endTime(expires: Date, lang: Lang, timeZone: string, now = Date.now()): string {
  const day = (d: Date): string => new Intl.DateTimeFormat('en-CA', { timeZone }).format(d);
  const date = day(expires) === day(new Date(now)) ? {} : { day: 'numeric', month: 'long' } as const;
  return new Intl.DateTimeFormat(lang === 'tr' ? 'tr-TR' : 'en-GB', { ...date, hour: '2-digit', minute: '2-digit', timeZone }).format(expires);
}

/**
 * The view's values that are the guest's own (its device, its query, its
 * outcome): the page's runs (renderRuns) break at them, and the rest repeats
 * between the guests of a hotspot and language.
 */
const PER_REQUEST: ReadonlySet<string> = new Set([
  'otherLangUrl', 'refreshUrl', 'hbMethod', 'hbUrl', 'hbFields', 'nextUrl', 'hidden', 'code', 'contextJson', 'errorMessage', 'successBody',
]);

/** The page's HTML for one request, as runs (http/portal-template.ts): joined, the page. Exported for tests. */
export function renderPage(a: Assets, p: PageInput): string[] {
  const m = a.messages[p.lang];
  const other: Lang = p.lang === 'tr' ? 'en' : 'tr';
  const otherQuery = new URLSearchParams(p.query);
  otherQuery.set('lang', other);
  const ref = p.ref;
  const settings = ref?.portal;
  const gatewayStr = p.record?.gateway ?? gatewayQuery(p.query);
  const gw = gatewayOf(new URLSearchParams(gatewayStr));
  const mac = p.record?.mac || normalizeMac(p.query.get('mac') ?? '') || gw?.mac || '';
  // Only an address goes into the form: the verify routes refuse anything else in `ip` (400), and a
  // page opened with a garbled ?ip= must still sign its guest in.
  const ip = p.record?.ip ?? (canonicalAddress(p.query.get('ip') || gw?.ip || '') ?? '');
  const ssid = p.record?.ssid ?? (p.query.get('ssid') ?? '');
  const name = settings?.display_name ?? '';
  const next = safeUrl(ref?.redirectUrl) ?? originalUrl(gw, p.query);

  const outcome = p.record?.outcome;
  const errorBody = outcome && !outcome.ok ? outcome.body : p.errorCode ? { error: p.errorCode } : null;
  const errorCode = errorBody ? String(errorBody.error) : '';
  const success = outcome?.ok ? outcome.body : null;
  const handback = (success?.handback as Handback | undefined) ?? null;
  const landing = success ? safeUrl(success.redirect_url as string | null) ?? next : next;
  const expires = success?.expires_at ? new Date(String(success.expires_at)) : null;
  const until = expires && ref ? endTime(expires, p.lang, ref.timezone) : '';
  const methods = new Set(offeredMethods(settings?.methods ?? [], p.tenantMethods));
  const deviceKnown = mac !== '';
  const sponsorWaiting = p.sponsor?.waiting === true && !success;
  const showForms = Boolean(ref) && deviceKnown && !success && !sponsorWaiting;
  const termsText = settings?.terms ? (settings.terms[p.lang] ?? settings.terms[other] ?? '') : '';
  const channels = ['sms_otp', 'msgapp_otp'].filter((x) => methods.has(x as never));

  const view: View = {
    lang: p.lang, title: m.title, css: a.css, js: a.js,
    colorsCss: `:root{${settings?.primary_color ? `--p:${settings.primary_color};` : ''}${settings?.accent_color ? `--a:${settings.accent_color}` : ''}}`,
    logo: settings?.logo ?? '', welcome: name ? m.welcome!.replace('{name}', name) : m.title,
    otherLang: other, otherLangName: m.other_lang, otherLangUrl: `?${otherQuery}`,
    errorTitle: m.error_title, errorMessage: errorBody ? errorSentence(m, errorBody, p.lang, ref?.timezone ?? 'UTC') : '', errorField: ERROR_FIELD[errorCode] ?? 'main',
    codeError: ERROR_FIELD[errorCode] === 'code', termsError: errorCode === 'terms_not_accepted',
    deviceUnknown: ref && !deviceKnown && !success ? m.device_unknown : '',
    success: Boolean(success), successTitle: m.success_title, successBody: until ? m.success_body!.replace('{until}', until) : m.success_body_plain,
    hbMethod: handback?.method ?? 'GET', hbUrl: handback?.url ?? '',
    hbFields: handback ? Object.entries(handback.fields).map(([k, v]) => hiddenInput(k, v)).join('') : '',
    nextUrl: success && !handback ? landing ?? '' : '',
    // A guest without JavaScript waiting for a sponsor: the page asks again by itself until the answer comes.
    refreshUrl: success ? (handback ? (handback.method === 'GET' ? handbackUrl(handback) : '') : landing ?? '') : sponsorWaiting ? `?${p.query}` : '',
    continueLabel: m.continue, continueAuto: m.continue_auto, goesOn: Boolean(handback ?? (success && landing)),
    multi: [methods.has('voucher'), channels.length > 0, methods.has('email'), p.sponsor?.offered, p.room === true].filter(Boolean).length > 1,
    sponsor: p.sponsor?.offered === true, methodSponsor: m.method_sponsor, guestNameLabel: m.guest_name_label, guestNameHint: m.guest_name_hint,
    sponsorEmailLabel: m.sponsor_email_label, sponsorEmailHint: m.sponsor_email_hint, sponsorSend: m.sponsor_send,
    sponsorAction: `/api/v1/hotspot-portal/sponsor/request?hotspot_id=${encodeURIComponent(p.hotspotId)}`,
    sponsorWaiting, sponsorWaitingTitle: m.sponsor_waiting_title, sponsorWaitingBody: m.sponsor_waiting_body,
    forms: showForms, termsText, termsRequired: settings?.terms_required === true, termsTitle: m.terms_title, termsAccept: m.terms_accept,
    voucher: methods.has('voucher'), methodVoucher: m.method_voucher, voucherLabel: m.voucher_label, voucherHint: m.voucher_hint,
    voucherAction: `/api/v1/hotspot-portal/voucher/verify?hotspot_id=${encodeURIComponent(p.hotspotId)}`,
    hidden: [hiddenInput('mac', mac), hiddenInput('ip', ip), hiddenInput('ssid', ssid), hiddenInput('lang', p.lang),
      gatewayStr ? hiddenInput('gateway', gatewayStr) : ''].join(''),
    code: p.record?.code ?? (p.record ? '' : prefilledCode(p.query, gw, p.hotspotId)), connectLabel: m.connect,
    // Room sign-in: its own form, posted like the voucher's; the terms box belongs to the voucher form when both show, so the room form carries its own.
    room: p.room === true, methodRoom: m.method_room, roomLabel: m.room_label, roomHint: m.room_hint, surnameLabel: m.surname_label, surnameHint: m.surname_hint,
    roomAction: `/api/v1/hotspot-portal/pms/verify?hotspot_id=${encodeURIComponent(p.hotspotId)}`,
    roomError: ERROR_FIELD[errorCode] === 'room-number', termsForm: methods.has('voucher') || p.room !== true ? 'voucher-form' : 'room-form',
    roomOwnTerms: p.room === true && methods.has('voucher') && settings?.terms_required === true && Boolean(termsText),
    otp: channels.length > 0 || methods.has('email'), needsJs: m.needs_js,
    phone: channels.length > 0, methodPhone: m.method_phone, phoneLabel: m.phone_label, phoneHint: m.phone_hint,
    bothChannels: channels.length === 2, onlyChannel: channels[0] === 'msgapp_otp' ? 'msgapp' : 'sms',
    channelLabel: m.channel_label, channelSms: m.channel_sms, channelMsgapp: m.channel_msgapp,
    email: methods.has('email'), methodEmail: m.method_email, emailLabel: m.email_label, emailHint: m.email_hint,
    codeLabel: m.code_label, sendCode: m.send_code, verifyCode: m.verify_code,
    messagesJson: a.messagesJson[p.lang],
    // JSON inside <script>: '<' escaped so no text can close the element.
    contextJson: JSON.stringify({
      hotspot_id: p.hotspotId, mac, ip, ssid, lang: p.lang, gateway: gatewayStr, next, terms_required: settings?.terms_required === true,
      tz: ref?.timezone ?? 'UTC',
    }).replace(/</g, '\\u003c'),
  };
  return renderRuns(a.template, view, PER_REQUEST);
}

/** Headers every page answer carries: per device and language, never cached by a proxy. */
const PAGE_HEADERS = {
  'cache-control': 'no-store', vary: 'Accept-Encoding, Accept-Language', 'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; connect-src 'self'; form-action *; base-uri 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
};

/**
 * The HTML, gzip (from kept runs, http/gzip-runs.ts) when the client takes it, else plain. No
 * brotli: it would compress the whole page for each guest (1.8-3.4 ms of CPU a page in the
 * service, where the kept runs cost about 0.07 ms more than the plain page), which any client
 * could ask for by naming brotli alone; every browser that takes brotli takes gzip, and plain
 * is acceptable to every client that does not refuse it (RFC 9110 §12.5.3).
 */
function htmlReply(runs: string[], gzipRuns: GzipRuns, lang: Lang, acceptEncoding: string): Reply {
  const headers: Record<string, string> = { ...PAGE_HEADERS, 'content-language': lang };
  if (!acceptsEncoding(acceptEncoding, 'gzip')) return { status: 200, body: null, text: runs.join(''), contentType: 'text/html; charset=utf-8', headers };
  headers['content-encoding'] = 'gzip';
  return { status: 200, body: null, text: gzipRuns.gzip(runs), contentType: 'text/html; charset=utf-8', headers };
}

/** A browser's form post (no JavaScript): form-encoded, and HTML preferred over JSON. */
export function isBrowserForm(h: PortalHeaders): boolean {
  if (!h.contentType.startsWith('application/x-www-form-urlencoded')) return false;
  const html = h.accept.indexOf('text/html');
  const json = h.accept.indexOf('application/json');
  return html >= 0 && (json < 0 || html < json);
}

const truthy = (v: unknown): boolean => v === true || v === 'true' || v === 'on' || v === 'yes' || v === '1';
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * A portal sign-in over HTTP: the request's portal fields (mac, accept_terms,
 * gateway; lang, ip, ssid for the page) read into the engine's portal sign-in
 * (engine/signin/portal-sign-in.ts), which looks the hotspot up once, applies
 * the portal's rules and hands the hotspot to `start`, one method's sign-in
 * (pass it on: `engine.signIn.voucher({ ..., hotspot })`). A JSON client gets
 * the answer (with `handback`) or the error; a browser's form post a 303 to
 * the page, where the outcome kept on the server is shown, errors included.
 */
export async function portalAnswer<T extends PortalStarted>(
  engine: Engine, ctx: RouteContext, hotspotId: string, start: (hotspot: HotspotRef) => Promise<T>, keepsCode = false,
): Promise<Reply> {
  const body = (ctx.body ?? {}) as Record<string, unknown>;
  const lang: Lang = body.lang === 'en' ? 'en' : 'tr';
  const result = await engine.portalSignIn.run({
    hotspotId, mac: text(body.mac), acceptedTerms: truthy(body.accept_terms), gateway: body.gateway,
    page: isBrowserForm(ctx.browser) ? { lang, ip: text(body.ip), ssid: text(body.ssid), ...(keepsCode ? { code: codeText(text(body.code)) } : {}) } : null,
  }, start);
  if (result.kind === 'answer') return { status: 200, body: result.answer };
  const q = new URLSearchParams({ hotspot_id: hotspotId, mac: text(body.mac), lang });
  if (result.kind === 'kept') q.set('r', result.record);
  else q.set('e', 'hotspot_not_found');
  return { status: 303, body: null, text: '', contentType: 'text/plain', headers: { location: `/portal?${q}`, 'cache-control': 'no-store' } };
}

/**
 * The page's view of a sponsor request (`?sponsor=<request id>`), only for the
 * hotspot and device it was filed for: waiting, the sign-in's success (with
 * the hand-back) as a form post's outcome, or the refusal's code.
 */
async function sponsorOutcome(engine: Engine, query: URLSearchParams, hotspotId: string): Promise<{ waiting: boolean; record: PortalRecord | null; errorCode: string | null } | null> {
  const id = query.get('sponsor');
  const mac = normalizeMac(query.get('mac') ?? '');
  if (!id || !mac) return null;
  let st;
  try {
    st = await engine.sponsor.status(id, { hotspotId, mac });
  } catch {
    return null;
  }
  if (st.status === 'pending') return { waiting: true, record: null, errorCode: null };
  if (st.status !== 'authorized') return { waiting: false, record: null, errorCode: st.status === 'rejected' ? 'sponsor_rejected' : 'sponsor_expired' };
  const lang = query.get('lang') === 'en' ? 'en' : 'tr';
  return { waiting: false, errorCode: null, record: { hs: hotspotId, mac, lang, ip: '', ssid: '', gateway: '', outcome: { ok: true, body: { ...st } } } };
}

/** The captive portal page: GET /portal on the portal surface (and / when the portal has its own port). */
export function portalPageRoutes(engine: Engine): Route[] {
  const assets = loadAssets();
  const gzipRuns = new GzipRuns();
  const page = async ({ query: raw, browser }: RouteContext): Promise<Reply> => {
    // openNDS packs its parameters (and sometimes our hotspot_id) its own way: unpacked first, so the rest reads plain names.
    const query = unpackOpenNdsQuery(raw);
    const lang = pickLang(query.get('lang'), browser.acceptLanguage);
    const hotspotId = query.get('hotspot_id') ?? '';
    const ref = hotspotId ? await engine.portal.ref(hotspotId) : null;
    const r = query.get('r');
    const record = ref && r ? await engine.portal.load(ref.tenantId, r, hotspotId, query.get('mac') ?? '') : null;
    const errorCode = !ref ? 'hotspot_not_found' : query.get('e') === 'hotspot_not_found' ? 'hotspot_not_found' : null;
    const settings = ref ? await engine.signInSettings.get(ref.tenantId) : null;
    const tenantMethods = settings?.methods ?? [];
    // Sponsor approval: `?sponsor=` is the device's request, after a form post; its outcome is the page's.
    const waitFor = ref ? await sponsorOutcome(engine, query, ref.id) : null;
    const sponsor = { offered: settings?.sponsor.enabled === true, waiting: waitFor?.waiting === true };
    const room = ref ? engine.pms.hasLink(ref.id) : false;
    const input = { lang, query, ref, hotspotId, record: record ?? waitFor?.record ?? null, errorCode: errorCode ?? waitFor?.errorCode ?? null, tenantMethods, sponsor, room };
    return htmlReply(renderPage(assets, input), gzipRuns, lang, browser.acceptEncoding);
  };
  const route = (path: string): Route => ({
    method: 'get', path, surface: 'portal', auth: false, responseType: 'text/html',
    summary: 'The captive portal page (server-rendered; Turkish default, ?lang=tr|en, else Accept-Language)',
    handler: page,
  });
  return engine.config.portalPort !== undefined ? [route('/portal'), route('/')] : [route('/portal')];
}
