import type { Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { msgappProviderPut } from './admin.schemas.js';

const PLATFORM_ERRORS = {
  401: 'unauthorized: no platform token, or an invalid or expired one',
  403: 'platform_only: a tenant credential (API key or tenant JWT) or a token without platform_admin',
};

/**
 * Platform administration (above tenants): the messaging-app
 * provider of each tenant. A platform token only (`npm run -s cli -- token
 * --platform`); records show credential references, never their values.
 */
export function adminRoutes(engine: Engine): Route[] {
  return [
    route({
      method: 'put', path: '/admin/msgapp-providers/:tenant_id', surface: 'console', auth: false, platform: true,
      bodySchema: msgappProviderPut,
      summary: "Set a tenant's messaging-app OTP provider (type A, B or C)",
      errors: { ...PLATFORM_ERRORS, 404: 'tenant_not_found', 400: 'validation_failed: a field the type needs is missing, or one it must leave empty is set' },
      handler: async ({ params, body }) => ({ status: 200, body: await engine.msgappProviders.put(params[0]!, body) }),
    }),
    route({
      method: 'get', path: '/admin/msgapp-providers', surface: 'console', auth: false, platform: true,
      summary: "Every tenant's messaging-app OTP provider", errors: PLATFORM_ERRORS,
      handler: async () => ({ status: 200, body: { data: await engine.msgappProviders.list() } }),
    }),
  ];
}
