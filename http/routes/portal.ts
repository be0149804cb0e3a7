import { Errors, deviceType, type DeviceType, type Engine } from '../../engine/index.js';
import { guestAddress } from '../client-address.js';
import { route, type Route } from '../router.js';
import { portalAnswer } from './portal-page.js';
import { authorized, portalQuery, portalVoucherVerify } from './portal.schemas.js';

/**
 * Captive portal: no credential header; the hotspot, given as the
 * `hotspot_id` query parameter or body field, names the tenant.
 */
export function portalRoutes(engine: Engine): Route[] {
  return [
    route({
      method: 'post', path: '/api/v1/hotspot-portal/voucher/verify', surface: 'portal', auth: false,
      bodySchema: portalVoucherVerify, querySchema: portalQuery, responseSchema: authorized,
      // What the browser says it runs on: the reports' device type, nothing else (engine/reports/device-type.ts).
      headers: DEVICE_HEADERS,
      summary: 'Sign a device in with a voucher code',
      errors: {
        404: 'voucher_not_found {error} or hotspot_not_found', 410: 'voucher_expired {error, expired_at}',
        409: 'voucher_exhausted {error, max_uses, current_uses}', 403: 'voucher_ssid_not_allowed, or voucher_not_yet_valid {error, valid_from} before a match-day window',
        429: 'too_many_attempts {error, message, retry_after} with a Retry-After header: a guessing limit reached; nothing spent',
      },
      handler: async (ctx) => {
        const { body, q, sourceAddress } = ctx;
        const hotspotId = body.hotspot_id ?? q.hotspot_id;
        if (!hotspotId) {
          throw Errors.VALIDATION_FAILED('hotspot_id is required (query parameter or body field)', [{ field: 'hotspot_id', message: 'is required' }]);
        }
        // Terms, hand-back and the no-JavaScript 303 (web/portal) around the sign-in itself; the hotspot looked up once.
        // The socket's peer keys the per-address guessing limit; the body's ip is only recorded.
        return portalAnswer(engine, ctx, hotspotId, (hotspot) => engine.signIn.voucher({
          hotspotId, hotspot, code: body.code, mac: body.mac, ip: guestAddress(body.ip, sourceAddress), source: sourceAddress, ssid: body.ssid ?? '',
          device: deviceOf(ctx.headers),
        }), true);
      },
    }),
  ];
}

/** The request headers a sign-in reads for its device type (copied synchronously by the router). */
export const DEVICE_HEADERS = ['user-agent', 'sec-ch-ua-platform'];

/** The device type a sign-in's browser claims (a statistic only; never trusted for anything else). */
export function deviceOf(headers: Record<string, string>): DeviceType {
  return deviceType({ userAgent: headers['user-agent'], platform: headers['sec-ch-ua-platform'] });
}
