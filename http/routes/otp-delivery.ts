import { DELIVERY_PROVIDERS, Errors, type DeliveryProvider, type Engine } from '../../engine/index.js';
import type { Route } from '../router.js';

/**
 * Delivery callbacks of the messaging-app providers (a code counts as
 * delivered when its provider says so; until then the SMS fallback waits). One path per provider; the tenant
 * is `?tenant_id=` of the URL registered at the provider. What each checks is
 * documented at DeliveryCallbacks (engine/signin/providers/delivery-callbacks.ts).
 */
export function otpDeliveryRoutes(engine: Engine): Route[] {
  return [
    {
      method: 'post', path: '/api/v1/hotspot-portal/otp/delivery/:provider', surface: 'portal', auth: false,
      headers: ['x-signature-256', 'x-hub-signature-256'],
      summary: `A provider's delivery report (provider: ${Object.keys(DELIVERY_PROVIDERS).join(', ')})`,
      status: 204,
      errors: { 401: 'callback_refused: unknown tenant or provider, no callback secret configured, or a bad signature', 404: 'not_found: no such provider' },
      handler: async ({ params, query, headers, raw, body }) => {
        const provider = params[0]!;
        if (!Object.hasOwn(DELIVERY_PROVIDERS, provider)) throw Errors.NOT_FOUND();
        await engine.otpDelivery.handle(provider as DeliveryProvider, {
          tenantId: query.get('tenant_id') ?? '', token: query.get('token') ?? '',
          signature: (provider === 'msgapp-b' ? headers['x-hub-signature-256'] : headers['x-signature-256']) ?? '', raw, body,
        });
        return { status: 204, body: null };
      },
    },
  ];
}
