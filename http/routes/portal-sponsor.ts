import { readFileSync } from 'node:fs';
import { AppError, assetPath, Errors, normalizeMac, type Engine, type PortalRecord, type SponsorLinkView } from '../../engine/index.js';
import { guestAddress } from '../client-address.js';
import type { Reply } from '../respond.js';
import { route, type PortalHeaders, type Route, type RouteContext } from '../router.js';
import { compileTemplate, renderTemplate } from '../portal-template.js';
import { isBrowserForm, pickLang } from './portal-page.js';
import { portalQuery } from './portal.schemas.js';
import { portalSponsorRequest, portalSponsorStatus, sponsorDecisionBody, type PortalSponsorBody } from './sign-in-schemas.js';

type Lang = 'tr' | 'en';
type Messages = Record<string, string>;

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const esc = (v: unknown): string => String(v ?? '').replace(/[&<>"']/g, (c) => ESC[c]!);
const fill = (s: string | undefined, v: Record<string, string | number>): string => String(s ?? '').replace(/\{(\w+)\}/g, (_m, k: string) => String(v[k] ?? ''));

/** The sponsor's page: no script at all, styles inline, forms only to this host (no external assets). */
const SPONSOR_PAGE_HEADERS = {
  'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
};

/** An access length as the sponsor reads it: minutes, hours or days. */
export function durationText(m: Messages, minutes: number): string {
  if (minutes % 1440 === 0) return minutes === 1440 ? m.sp_day! : fill(m.sp_days, { n: minutes / 1440 });
  if (minutes % 60 === 0) return minutes === 60 ? m.sp_hour! : fill(m.sp_hours, { n: minutes / 60 });
  return fill(m.sp_minutes, { n: minutes });
}

/** The sponsor's page's sentence for a refusal, by error code. */
const PROBLEM: Record<string, string> = {
  sponsor_link_used: 'sp_used', sponsor_link_expired: 'sp_expired', device_blocked: 'sp_blocked', validation_failed: 'sp_invalid',
};

function hotspotOf(ctx: RouteContext<PortalSponsorBody, { hotspot_id?: string }>): string {
  const id = ctx.body.hotspot_id ?? ctx.q.hotspot_id;
  if (!id) throw Errors.VALIDATION_FAILED('hotspot_id is required (query parameter or body field)', [{ field: 'hotspot_id', message: 'is required' }]);
  return id;
}

/** A browser (it asks for HTML before JSON) gets the page with the refusal's status; any other client the error body `{error, message}`. */
function prefersHtml(h: PortalHeaders): boolean {
  const html = h.accept.indexOf('text/html');
  const json = h.accept.indexOf('application/json');
  return html >= 0 && (json < 0 || html < json);
}

const truthy = (v: unknown): boolean => v === true || v === 'true' || v === 'on' || v === 'yes' || v === '1';

/**
 * Sponsor approval on the portal: the guest's request and its status
 * (JSON, or a plain form post that lands on the portal page's "waiting for
 * your host" view, which refreshes itself), and the sponsor's page behind
 * the e-mailed link (GET shows, POST decides). The rules are the engine's
 * (engine/signin/sponsor/); this file only translates HTTP.
 *
 * The portal glue (the form post's 303 and its outcome kept for the page)
 * is in formAnswer only, so it moves in one piece with the portal sign-in.
 */
export function portalSponsorRoutes(engine: Engine): Route[] {
  const read = (f: string): string => readFileSync(assetPath('web', 'portal', f), 'utf8');
  const template = compileTemplate(read('sponsor.html'));
  const css = read('portal.css');
  const messages: Record<Lang, Messages> = { tr: JSON.parse(read('messages.tr.json')) as Messages, en: JSON.parse(read('messages.en.json')) as Messages };

  /** A browser's form post: 303 to the portal page, waiting for the sponsor, or with the refusal kept for it to show. */
  const formAnswer = async (ctx: RouteContext<PortalSponsorBody, { hotspot_id?: string }>, hotspotId: string, run: () => Promise<{ request_id: string }>): Promise<Reply> => {
    const body = ctx.body;
    const lang: Lang = body.lang === 'en' ? 'en' : 'tr';
    const q = new URLSearchParams({ hotspot_id: hotspotId, mac: body.mac, lang });
    try {
      q.set('sponsor', (await run()).request_id);
    } catch (err) {
      const e = err instanceof AppError ? err : Errors.INTERNAL();
      if (!(err instanceof AppError)) engine.log.error({ err }, 'portal sponsor request failed');
      const ref = await engine.portal.ref(hotspotId);
      if (!ref) {
        q.set('e', 'hotspot_not_found');
      } else {
        const rec: PortalRecord = {
          hs: ref.id, mac: normalizeMac(body.mac) ?? '', lang, ip: typeof body.ip === 'string' ? body.ip : '', ssid: body.ssid ?? '',
          gateway: typeof body.gateway === 'string' ? body.gateway : '', outcome: { ok: false, status: e.status, body: e.toBody() },
        };
        q.set('r', await engine.portal.save(ref.tenantId, rec));
      }
    }
    return { status: 303, body: null, text: '', contentType: 'text/plain', headers: { location: `/portal?${q}`, 'cache-control': 'no-store' } };
  };

  const page = (lang: Lang, token: string, status: number, view: SponsorLinkView | null, outcome: string, problem: string): Reply => {
    const m = messages[lang];
    const other: Lang = lang === 'tr' ? 'en' : 'tr';
    const ask = view !== null && view.state === 'pending' && !outcome;
    const durations = (view?.durations ?? []).map((d, i) =>
      `<label><input type="radio" name="minutes" value="${d}"${i === 0 ? ' checked' : ''}> ${esc(durationText(m, d))}</label>`).join('');
    const html = renderTemplate(template, {
      lang, title: m.sp_title, css, otherLang: other, otherLangName: m.other_lang, otherLangUrl: `?lang=${other}`, errorTitle: m.error_title,
      outcome, problem, ask, asks: view ? fill(m.sp_asks, { guest: view.guest, venue: view.venue }) : '', deviceLabel: m.sp_device,
      device: view?.device ?? '', durationLabel: m.sp_duration, durations, approveLabel: m.sp_approve, rejectLabel: m.sp_reject,
      action: `/portal/sponsor/${encodeURIComponent(token)}`,
    });
    return { status, body: null, text: html, contentType: 'text/html; charset=utf-8', headers: { ...SPONSOR_PAGE_HEADERS, 'content-language': lang } };
  };

  /** A refusal: the page for a browser, the error body for any other client. */
  const refusal = (h: PortalHeaders, lang: Lang, token: string, e: AppError, view: SponsorLinkView | null): Reply => {
    if (!prefersHtml(h)) return { status: e.status, body: e.toBody() };
    const m = messages[lang];
    return page(lang, token, e.status, view, '', m[PROBLEM[e.code] ?? 'sp_unknown_error']!);
  };

  /** The state of a link as the page answers it: 409 once answered, 410 expired or unknown, 200 waiting. */
  const stateReply = (h: PortalHeaders, lang: Lang, token: string, view: SponsorLinkView): Reply => {
    if (view.state === 'approved' || view.state === 'rejected') return refusal(h, lang, token, Errors.SPONSOR_LINK_USED(), view);
    if (view.state === 'expired' || view.state === 'unknown') return refusal(h, lang, token, Errors.SPONSOR_LINK_EXPIRED(), null);
    return page(lang, token, 200, view, '', '');
  };

  const base = { surface: 'portal', auth: false } as const;
  return [
    route({
      ...base, method: 'post', path: '/api/v1/hotspot-portal/sponsor/request', bodySchema: portalSponsorRequest, querySchema: portalQuery,
      summary: "Ask a sponsor (the tenant's allowed domains or list) to approve this device; the sponsor is e-mailed single-use links",
      errors: {
        403: 'sponsor_not_allowed, method_not_allowed_here', 400: 'email_invalid, invalid_mac, terms_not_accepted', 404: 'hotspot_not_found',
        429: 'sponsor_rate_limited {error, message, retry_after} with a Retry-After header', 502: 'sponsor_send_failed', 503: 'sponsor_unavailable (no PORTAL_PUBLIC_URL)',
      },
      handler: async (ctx) => {
        const hotspotId = hotspotOf(ctx);
        const { body } = ctx;
        // The socket's peer keys the per-address limit; the body's ip is only recorded.
        const run = () => engine.sponsor.request({
          hotspotId, sponsorEmail: body.sponsor_email, guestName: body.guest_name, mac: body.mac, ip: guestAddress(body.ip, ctx.sourceAddress),
          source: ctx.sourceAddress, ssid: body.ssid ?? '', lang: body.lang === 'en' ? 'en' : 'tr', gateway: body.gateway, acceptTerms: truthy(body.accept_terms),
        });
        if (isBrowserForm(ctx.browser)) return formAnswer(ctx, hotspotId, run);
        try {
          return { status: 200, body: await run() };
        } catch (err) {
          const wait = err instanceof AppError ? err.fields?.retry_after : undefined;
          if (typeof wait !== 'number' || !(err instanceof AppError)) throw err;
          return { status: err.status, body: err.toBody(), headers: { 'retry-after': String(wait) } };
        }
      },
    }),
    route({
      ...base, method: 'get', path: '/api/v1/hotspot-portal/sponsor/status', querySchema: portalSponsorStatus,
      summary: 'A sponsor request: pending, rejected, expired, or the authorized body of voucher verify (with the gateway hand-back)',
      errors: { 404: 'sponsor_request_not_found (unknown, too old, or another tenant\'s)' },
      handler: async ({ q }) => ({ status: 200, body: await engine.sponsor.status(q.request_id) }),
    }),
    route({
      ...base, method: 'get', path: '/portal/sponsor/:token', responseType: 'text/html',
      summary: "The sponsor's page behind the e-mailed link: who asks, where, which device, the access lengths (shows only; 409 used, 410 expired: "
        + 'a page for a browser, {error, message} for other clients)',
      errors: { 409: 'sponsor_link_used', 410: 'sponsor_link_expired (or no such link)' },
      handler: async ({ params, query, browser }) => {
        const token = params[0] ?? '';
        const view = await engine.sponsor.view(token);
        const lang = pickLang(query.get('lang'), browser.acceptLanguage);
        return stateReply(browser, lang, token, view);
      },
    }),
    route({
      ...base, method: 'post', path: '/portal/sponsor/:token', responseType: 'text/html', bodySchema: sponsorDecisionBody,
      summary: "The sponsor's decision (form post): approve with an access length, or reject; the link works once (409 after), 410 once expired",
      errors: { 400: 'validation_failed (a length not offered)', 403: 'device_blocked', 409: 'sponsor_link_used', 410: 'sponsor_link_expired (or no such link)' },
      handler: async ({ params, body, browser, sourceAddress }) => {
        const token = params[0] ?? '';
        const lang: Lang = body.lang === 'en' || body.lang === 'tr' ? body.lang : pickLang(null, browser.acceptLanguage);
        const m = messages[lang];
        const minutes = body.minutes === undefined || body.minutes === '' ? null : Number(body.minutes);
        try {
          const view = await engine.sponsor.view(token);
          if (view.state !== 'pending') return stateReply(browser, lang, token, view);
          const out = await engine.sponsor.decide(token, body.action, minutes === null || Number.isInteger(minutes) ? minutes : -1, sourceAddress);
          const text = out.decision === 'approved'
            ? fill(m.sp_approved, { guest: view.guest, duration: durationText(m, out.minutes ?? 0) })
            : fill(m.sp_rejected, { guest: view.guest });
          return page(lang, token, 200, view, text, '');
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) engine.log.error({ err }, 'sponsor decision failed');
          const e = err instanceof AppError ? err : Errors.INTERNAL();
          return refusal(browser, lang, token, e, e.code === 'validation_failed' ? await engine.sponsor.view(token) : null);
        }
      },
    }),
  ];
}
