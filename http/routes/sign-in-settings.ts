import type { Engine } from '../../engine/index.js';
import type { Route } from '../router.js';

/** A tenant's sign-in settings (issue 10): methods, senders (references only), OTP limits, prefixes. */
export function signInSettingsRoutes(engine: Engine): Route[] {
  return [
    {
      method: 'get', path: '/v1/settings/sign-in', surface: 'public', auth: true,
      summary: "Read the tenant's sign-in settings (secrets appear only as env:// references)",
      handler: async ({ principal }) => ({ status: 200, body: await engine.signInSettings.get(principal.tenant.id) }),
    },
    {
      method: 'put', path: '/v1/settings/sign-in', surface: 'public', auth: true, bodySchema: 'signInSettings',
      summary: "Replace the tenant's sign-in settings (admin); parts left out take their defaults",
      handler: async ({ principal, body }) => ({ status: 200, body: await engine.signInSettings.put(principal.tenant.id, body) }),
    },
  ];
}
