import { Errors, type Engine } from '../../engine/index.js';
import { guestAddress } from '../client-address.js';
import { route, type Route } from '../router.js';
import { portalAnswer } from './portal-page.js';
import { authorized, portalQuery } from './portal.schemas.js';
import { pmsLink, pmsLinkPut, portalRoomVerify } from './pms.schemas.js';

/**
 * Room sign-in (engine/pms/, docs/pms.md): the guest's verify on the portal,
 * and the tenant's PMS link per hotspot.
 */
export function pmsRoutes(engine: Engine): Route[] {
  const pms = engine.pms;
  return [
    route({
      method: 'post', path: '/api/v1/hotspot-portal/pms/verify', surface: 'portal', auth: false,
      bodySchema: portalRoomVerify, querySchema: portalQuery, responseSchema: authorized,
      summary: 'Sign a device in with a room number and the surname of a guest in house',
      errors: {
        401: 'pms_guest_not_found: no guest of that surname in that room', 403: 'method_not_allowed_here: the hotspot has no PMS link',
        404: 'hotspot_not_found', 429: 'too_many_attempts {error, message, retry_after}: a guessing limit reached',
        503: "pms_unavailable: the hotel's in-house list is not trusted now (link down too long, never synced, or resyncing)",
      },
      handler: async (ctx) => {
        const { body, q, sourceAddress } = ctx;
        const hotspotId = body.hotspot_id ?? q.hotspot_id;
        if (!hotspotId) {
          throw Errors.VALIDATION_FAILED('hotspot_id is required (query parameter or body field)', [{ field: 'hotspot_id', message: 'is required' }]);
        }
        // Terms, hand-back and the no-JavaScript 303 around the sign-in, as for a voucher. The socket's
        // peer keys the per-address guessing limit; the body's ip is only recorded.
        return portalAnswer(engine, ctx, hotspotId, (hotspot) => pms.verify({
          hotspotId, hotspot, room: body.room, surname: body.surname, mac: body.mac,
          ip: guestAddress(body.ip, sourceAddress), source: sourceAddress, ssid: body.ssid ?? '',
        }));
      },
    }),
    route({
      method: 'get', path: '/v1/hotspots/:id/pms', surface: 'public', auth: true, responseSchema: pmsLink,
      summary: "Read a hotspot's PMS link and its status", errors: { 404: 'pms_link_not_found' },
      handler: async ({ principal, params }) => ({ status: 200, body: await pms.get(principal.tenant.id, params[0]!) }),
    }),
    route({
      method: 'put', path: '/v1/hotspots/:id/pms', surface: 'public', auth: true, bodySchema: pmsLinkPut, responseSchema: pmsLink,
      summary: "Set a hotspot's PMS link (Oracle Opera FIAS over TCP); the room form shows on its portal",
      errors: { 400: 'target_not_allowed: the host is private, loopback, reserved or metadata (ALLOW_PRIVATE_TARGETS) or does not resolve', 404: 'hotspot_not_found' },
      handler: async ({ principal, params, body }) => ({ status: 200, body: await pms.put(principal.tenant.id, params[0]!, body) }),
      audit: ({ body }, out) => ({
        event: 'pms_link_changed', subject: { hotspot_id: out.hotspot_id },
        details: { host: out.host, port: out.port, resync_after_gap_sec: out.resync_after_gap_sec, enabled: out.enabled, changed: Object.keys(body) },
      }),
    }),
    route({
      method: 'del', path: '/v1/hotspots/:id/pms', surface: 'public', auth: true, status: 204,
      summary: "Remove a hotspot's PMS link; its in-house list goes, live sessions run to their end", errors: { 404: 'pms_link_not_found' },
      handler: async ({ principal, params }) => {
        await pms.remove(principal.tenant.id, params[0]!);
        return { status: 204, body: null };
      },
      audit: ({ params }) => ({ event: 'pms_link_removed', details: {}, subject: { hotspot_id: params[0]! } }),
    }),
  ];
}
