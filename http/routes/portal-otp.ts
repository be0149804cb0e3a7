import { AppError, Errors, type Engine } from '../../engine/index.js';
import { guestAddress } from '../client-address.js';
import type { Reply } from '../respond.js';
import { route, type Route, type RouteContext } from '../router.js';
import { portalAnswer } from './portal-page.js';
import { DEVICE_HEADERS, deviceOf } from './portal.js';
import { portalQuery } from './portal.schemas.js';
import { portalEmailRequest, portalEmailVerify, portalOtpStatus, portalSmsRequest, portalSmsVerify, type PortalOtpBody } from './sign-in-schemas.js';

type Ctx = RouteContext<PortalOtpBody, { hotspot_id?: string }>;

const REQUEST_ERRORS = {
  400: 'phone_invalid (or email_invalid, invalid_mac)', 403: 'phone_prefix_blocked, method_not_allowed_here',
  404: 'hotspot_not_found', 429: 'otp_rate_limited {error, message, retry_after} with a Retry-After header', 502: 'otp_send_failed',
};
const VERIFY_ERRORS = {
  401: 'otp_invalid {error, message, attempts_left}', 410: 'otp_expired (never sent, used, or past 300 s)',
  423: 'otp_locked (5 wrong tries)', 404: 'hotspot_not_found',
};

function hotspotOf({ body, q }: Ctx): string {
  const id: string | undefined = body.hotspot_id ?? q.hotspot_id;
  if (!id) throw Errors.VALIDATION_FAILED('hotspot_id is required (query parameter or body field)', [{ field: 'hotspot_id', message: 'is required' }]);
  return id;
}

/** A limit refusal carries its wait as a header too (RFC 9110 §10.2.3), for clients that read only that. */
function withRetryAfter(run: (ctx: Ctx) => Promise<Reply>): (ctx: Ctx) => Promise<Reply> {
  return async (ctx) => {
    try {
      return await run(ctx);
    } catch (err) {
      const wait = err instanceof AppError ? err.fields?.retry_after : undefined;
      if (typeof wait !== 'number' || !(err instanceof AppError)) throw err;
      return { status: err.status, body: err.toBody(), headers: { 'retry-after': String(wait) } };
    }
  };
}

/**
 * OTP sign-in on the captive portal: no credentials; the
 * hotspot (body field or query parameter) names the tenant. JSON or a plain
 * form POST, as for voucher verify.
 */
export function portalOtpRoutes(engine: Engine): Route[] {
  const otp = engine.otp;
  const base = { surface: 'portal', auth: false, querySchema: portalQuery } as const;
  // The schemas require the identity and the code; `?? ''` only satisfies the type. `to` is the phone for the SMS routes (the body's `channel` picks SMS or messaging app), the address for e-mail.
  const requestCode = (kind: 'phone' | 'email') => withRetryAfter(async (ctx) => ({
    status: 200,
    body: await otp.request({
      hotspotId: hotspotOf(ctx), to: ctx.body[kind] ?? '', channel: kind === 'email' ? 'email' : ctx.body.channel ?? 'sms', mac: ctx.body.mac,
      ip: guestAddress(ctx.body.ip, ctx.sourceAddress), source: ctx.sourceAddress, ssid: ctx.body.ssid ?? '', locale: ctx.body.lang,
    }),
  }));
  // Terms, hand-back to the gateway and the browser's answer are the portal's, as for a voucher; the hotspot looked up once.
  const verifyCode = (kind: 'phone' | 'email') => (ctx: Ctx): Promise<Reply> => {
    const hotspotId = hotspotOf(ctx);
    return portalAnswer(engine, ctx, hotspotId, (hotspot) => otp.verify({
      hotspotId, hotspot, kind, to: ctx.body[kind] ?? '', code: ctx.body.code ?? '', mac: ctx.body.mac,
      ip: guestAddress(ctx.body.ip, ctx.sourceAddress), source: ctx.sourceAddress, ssid: ctx.body.ssid ?? '',
      device: deviceOf(ctx.headers),
    }));
  };
  return [
    route({
      ...base, method: 'post', path: '/api/v1/hotspot-portal/sms/request', bodySchema: portalSmsRequest,
      summary: 'Send a sign-in code by SMS or messaging app', errors: REQUEST_ERRORS, handler: requestCode('phone'),
    }),
    route({
      method: 'get', path: '/api/v1/hotspot-portal/sms/status', surface: 'portal', auth: false, querySchema: portalOtpStatus,
      summary: 'Which channel carried a code, and whether it arrived', errors: { 404: 'otp_request_not_found' },
      handler: async ({ q }) => ({ status: 200, body: await otp.status(q.request_id) }),
    }),
    route({
      ...base, method: 'post', path: '/api/v1/hotspot-portal/sms/verify', bodySchema: portalSmsVerify, headers: DEVICE_HEADERS,
      summary: 'Sign a device in with a code sent by SMS or messaging app', errors: VERIFY_ERRORS, handler: verifyCode('phone'),
    }),
    route({
      ...base, method: 'post', path: '/api/v1/hotspot-portal/email/request', bodySchema: portalEmailRequest,
      summary: 'Send a sign-in code by e-mail', errors: { ...REQUEST_ERRORS, 400: 'email_invalid (or invalid_mac)' }, handler: requestCode('email'),
    }),
    route({
      ...base, method: 'post', path: '/api/v1/hotspot-portal/email/verify', bodySchema: portalEmailVerify, headers: DEVICE_HEADERS,
      summary: 'Sign a device in with a code sent by e-mail', errors: VERIFY_ERRORS, handler: verifyCode('email'),
    }),
  ];
}
