import { AppError, Errors, type Engine } from '../../engine/index.js';
import type { Reply } from '../respond.js';
import type { Route, RouteContext } from '../router.js';

type Schema = Record<string, unknown>;

const mac = { type: 'string', minLength: 1, maxLength: 32 };
const hotspotId = { type: 'string', minLength: 1, maxLength: 64 };
const ssid = { type: 'string', maxLength: 32, pattern: '^[^\\u0000-\\u001f\\u007f]*$' };
const ip = { type: 'string', maxLength: 45 };
// Any string: a code of the wrong shape is a wrong try like any other, counted against the five.
const code = { type: 'string', minLength: 1, maxLength: 16, description: 'The OTP digits as a string' };
const phone = { type: 'string', minLength: 1, maxLength: 32, description: 'E.164, e.g. +905321234567' };
const email = { type: 'string', minLength: 3, maxLength: 254 };
const lang = { enum: ['tr', 'en'], description: 'Language of the message (default tr)' };

/**
 * Request bodies of the OTP portal routes. Open (additionalProperties): the
 * portal page posts the gateway's redirect parameters in the same form, for
 * the hand-back.
 */
export const PORTAL_OTP_BODY_SCHEMAS: Record<string, Schema> = {
  portalSmsRequest: {
    type: 'object', required: ['phone', 'mac'],
    properties: { phone, mac, ssid, ip, hotspot_id: hotspotId, lang, channel: { enum: ['sms', 'msgapp'], description: 'msgapp: the messaging-app channel' } },
  },
  portalSmsVerify: { type: 'object', required: ['phone', 'code', 'mac'], properties: { phone, code, mac, ssid, ip, hotspot_id: hotspotId } },
  portalEmailRequest: { type: 'object', required: ['email', 'mac'], properties: { email, mac, ssid, ip, hotspot_id: hotspotId, lang } },
  portalEmailVerify: { type: 'object', required: ['email', 'code', 'mac'], properties: { email, code, mac, ssid, ip, hotspot_id: hotspotId } },
};

export const PORTAL_OTP_QUERY_SCHEMAS: Record<string, Schema> = {
  portalOtpStatus: {
    type: 'object', additionalProperties: true, required: ['request_id'],
    properties: { request_id: { type: 'string', minLength: 1, maxLength: 128 } },
  },
};

const REQUEST_ERRORS = {
  400: 'phone_invalid (or email_invalid, invalid_mac)', 403: 'phone_prefix_blocked, method_not_allowed_here',
  404: 'hotspot_not_found', 429: 'otp_rate_limited {error, message, retry_after} with a Retry-After header', 502: 'otp_send_failed',
};
const VERIFY_ERRORS = {
  401: 'otp_invalid {error, message, attempts_left}', 410: 'otp_expired (never sent, used, or past 300 s)',
  423: 'otp_locked (5 wrong tries)', 404: 'hotspot_not_found',
};

function hotspotOf({ body, q }: RouteContext): string {
  const id: string | undefined = body.hotspot_id ?? q.hotspot_id;
  if (!id) throw Errors.VALIDATION_FAILED('hotspot_id is required (query parameter or body field)', [{ field: 'hotspot_id', message: 'is required' }]);
  return id;
}

/** A limit refusal carries its wait as a header too (RFC 9110 §10.2.3), for clients that read only that. */
function withRetryAfter(run: (ctx: RouteContext) => Promise<Reply>): (ctx: RouteContext) => Promise<Reply> {
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
 * OTP sign-in on the captive portal (issue 10 contract): no credentials; the
 * hotspot (body field or query parameter) names the tenant. JSON or a plain
 * form POST, as for voucher verify.
 */
export function portalOtpRoutes(engine: Engine): Route[] {
  const otp = engine.otp;
  const base = { surface: 'portal', auth: false, querySchema: 'portalQuery' } as const;
  return [
    {
      ...base, method: 'post', path: '/api/v1/hotspot-portal/sms/request', bodySchema: 'portalSmsRequest',
      summary: 'Send a sign-in code by SMS or messaging app', errors: REQUEST_ERRORS,
      handler: withRetryAfter(async (ctx) => ({
        status: 200,
        body: await otp.request({
          hotspotId: hotspotOf(ctx), to: ctx.body.phone, channel: ctx.body.channel ?? 'sms', mac: ctx.body.mac,
          ip: ctx.body.ip || ctx.remoteIp, ssid: ctx.body.ssid ?? '', locale: ctx.body.lang,
        }),
      })),
    },
    {
      method: 'get', path: '/api/v1/hotspot-portal/sms/status', surface: 'portal', auth: false, querySchema: 'portalOtpStatus',
      summary: 'Which channel carried a code, and whether it arrived', errors: { 404: 'otp_request_not_found' },
      handler: async ({ q }) => ({ status: 200, body: await otp.status(q.request_id) }),
    },
    {
      ...base, method: 'post', path: '/api/v1/hotspot-portal/sms/verify', bodySchema: 'portalSmsVerify',
      summary: 'Sign a device in with a code sent by SMS or messaging app', errors: VERIFY_ERRORS,
      handler: async (ctx) => ({
        status: 200,
        body: await otp.verify({
          hotspotId: hotspotOf(ctx), kind: 'phone', to: ctx.body.phone, code: ctx.body.code, mac: ctx.body.mac,
          ip: ctx.body.ip || ctx.remoteIp, ssid: ctx.body.ssid ?? '',
        }),
      }),
    },
    {
      ...base, method: 'post', path: '/api/v1/hotspot-portal/email/request', bodySchema: 'portalEmailRequest',
      summary: 'Send a sign-in code by e-mail', errors: { ...REQUEST_ERRORS, 400: 'email_invalid (or invalid_mac)' },
      handler: withRetryAfter(async (ctx) => ({
        status: 200,
        body: await otp.request({
          hotspotId: hotspotOf(ctx), to: ctx.body.email, channel: 'email', mac: ctx.body.mac,
          ip: ctx.body.ip || ctx.remoteIp, ssid: ctx.body.ssid ?? '', locale: ctx.body.lang,
        }),
      })),
    },
    {
      ...base, method: 'post', path: '/api/v1/hotspot-portal/email/verify', bodySchema: 'portalEmailVerify',
      summary: 'Sign a device in with a code sent by e-mail', errors: VERIFY_ERRORS,
      handler: async (ctx) => ({
        status: 200,
        body: await otp.verify({
          hotspotId: hotspotOf(ctx), kind: 'email', to: ctx.body.email, code: ctx.body.code, mac: ctx.body.mac,
          ip: ctx.body.ip || ctx.remoteIp, ssid: ctx.body.ssid ?? '',
        }),
      }),
    },
  ];
}
