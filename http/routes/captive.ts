import { Errors, type Engine } from '../../engine/index.js';
import type { Route } from '../router.js';

/**
 * RFC 8908 Captive Portal API. The device's OS finds this URL through the
 * RFC 8910 DHCP/RA option (docs/portal-gateways.md) and asks whether it is
 * still captive; the answer is per device, so `Cache-Control: private`
 * (RFC 8908 §4). Session figures only with a live session (§5).
 */
export function captiveRoutes(engine: Engine): Route[] {
  return [
    {
      method: 'get', path: '/api/v1/hotspot-portal/captive', surface: 'portal', auth: false, responseType: 'application/captive+json',
      summary: 'RFC 8908 captive portal API: is this device captive, where is the portal, how long is left',
      errors: { 404: 'hotspot_not_found', 400: 'validation_failed' },
      handler: async ({ query, browser }) => {
        const hotspotId = query.get('hotspot_id') ?? '';
        if (!hotspotId) throw Errors.VALIDATION_FAILED('hotspot_id is required', [{ field: 'hotspot_id', message: 'is required' }]);
        const mac = query.get('mac') ?? '';
        const state = await engine.portal.captive(hotspotId, mac);
        if (!state) throw Errors.HOTSPOT_NOT_FOUND();
        // The portal URL as this request reached us: HTTPS when we serve TLS or a proxy in front says so.
        const scheme = engine.config.tls || browser.forwardedProto === 'https' ? 'https' : 'http';
        const portal = new URL(`${scheme}://${browser.host || 'localhost'}/portal`);
        portal.searchParams.set('hotspot_id', hotspotId);
        if (mac) portal.searchParams.set('mac', mac);
        const body: Record<string, unknown> = { captive: state.live === null, 'user-portal-url': portal.toString() };
        if (state.ref.redirectUrl) body['venue-info-url'] = state.ref.redirectUrl;
        if (state.live) {
          // Extending is an operator action today (POST /v1/sessions/:id/extend), not the guest's.
          body['can-extend-session'] = false;
          body['seconds-remaining'] = state.live.secondsRemaining;
          if (state.live.bytesRemaining !== null) body['bytes-remaining'] = state.live.bytesRemaining;
        }
        return { status: 200, body, contentType: 'application/captive+json', headers: { 'cache-control': 'private' } };
      },
    },
  ];
}
