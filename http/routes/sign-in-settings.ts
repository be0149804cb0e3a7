import type { Engine } from '../../engine/index.js';
import { route, type Route } from '../router.js';
import { signInSettings } from './sign-in-schemas.js';

/** A tenant's sign-in settings: methods, senders (secrets by reference or inline, never shown), OTP limits, prefixes. */
export function signInSettingsRoutes(engine: Engine): Route[] {
  return [
    route({
      method: 'get', path: '/v1/settings/sign-in', surface: 'public', auth: true,
      summary: "Read the tenant's sign-in settings (secrets appear only as env:// references or as *_set: true)",
      handler: async ({ principal }) => ({ status: 200, body: await engine.signInSettings.get(principal.tenant.id) }),
    }),
    route({
      method: 'put', path: '/v1/settings/sign-in', surface: 'public', auth: true, bodySchema: signInSettings,
      summary: "Replace the tenant's sign-in settings (admin); parts left out take their defaults. Inline secrets "
        + '(sms.credentials, email.smtp_url) are stored encrypted and take effect on the next send, no restart',
      errors: { 503: 'secrets_unavailable: an inline secret, and no SECRETS_KEY to seal it' },
      handler: async ({ principal, body }) => ({ status: 200, body: await engine.signInSettings.put(principal.tenant.id, body) }),
      // Who may sign in, and how, is a compliance question: the settings as now stored (secrets only as references or *_set).
      audit: (_ctx, out) => ({ event: 'sign_in_settings_changed', details: { settings: out } }),
    }),
  ];
}
