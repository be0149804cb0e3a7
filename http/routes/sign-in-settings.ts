import type { Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { signInSettings } from './sign-in-schemas.js';

/** A tenant's sign-in settings: methods, senders (references only), OTP limits, prefixes. */
export function signInSettingsRoutes(engine: Engine): Route[] {
  return [
    route({
      method: 'get', path: '/v1/settings/sign-in', surface: 'public', auth: true,
      summary: "Read the tenant's sign-in settings (secrets appear only as env:// references)",
      handler: async ({ principal }) => ({ status: 200, body: await engine.signInSettings.get(principal.tenant.id) }),
    }),
    route({
      method: 'put', path: '/v1/settings/sign-in', surface: 'public', auth: true, bodySchema: signInSettings,
      summary: "Replace the tenant's sign-in settings (admin); parts left out take their defaults",
      handler: async ({ principal, body }) => ({ status: 200, body: await engine.signInSettings.put(principal.tenant.id, body) }),
      // Who may sign in, and how, is a compliance question: the settings as now stored (senders only as env:// references).
      audit: (_ctx, out) => ({ event: 'sign_in_settings_changed', details: { settings: out } }),
    }),
  ];
}
