import { AUTH_METHODS, DEFAULT_OTP_LIMITS, type Engine } from '../../engine/index.js';
import type { Route } from '../router.js';

type Schema = Record<string, unknown>;

// The secret itself never enters: only the name of the environment variable that holds it.
const ref = { type: 'string', pattern: '^env://[A-Za-z_][A-Za-z0-9_]*$', maxLength: 200, description: 'env://VARIABLE' };
const prefixes = { type: 'array', maxItems: 200, items: { type: 'string', pattern: '^\\+[1-9][0-9]{0,6}$' }, description: 'Dial prefixes, e.g. +90' };
const limit = (max: number): Schema => ({ type: 'integer', minimum: 0, maximum: max });
const methodSession = {
  type: 'object', additionalProperties: false,
  properties: {
    session_minutes: { type: 'integer', minimum: 1, maximum: 525600 },
    bandwidth_down_mbps: { type: 'integer', minimum: 1, maximum: 100000 },
    bandwidth_up_mbps: { type: 'integer', minimum: 1, maximum: 100000 },
    daily_quota_mb: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    session_quota_mb: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
  },
};

const settings: Schema = {
  type: 'object', additionalProperties: false,
  properties: {
    methods: { type: 'array', maxItems: AUTH_METHODS.length, items: { enum: [...AUTH_METHODS] }, description: 'auth_method names the tenant offers' },
    sms: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false, required: ['provider', 'credentials_ref'],
        properties: {
          provider: { enum: ['netgsm'] }, base_url: { type: 'string', format: 'uri', maxLength: 500 },
          credentials_ref: ref, sender: { type: 'string', minLength: 1, maxLength: 11 },
        },
      }],
    },
    msgapp: {
      type: 'object', additionalProperties: false,
      properties: {
        api_key_ref: ref, template_id: { type: 'string', maxLength: 200 }, sender_phone: { type: 'string', pattern: '^\\+[1-9][0-9]{7,14}$' },
        fallback_sms: { type: 'boolean', description: 'MSGAPP_FALLBACK_SMS' },
        fallback_timeout_sec: { type: 'integer', minimum: 1, maximum: 600, description: 'MSGAPP_FALLBACK_TIMEOUT_SEC (default 30)' },
      },
    },
    email: {
      anyOf: [{ type: 'null' }, {
        type: 'object', additionalProperties: false,
        properties: { smtp_url_ref: { ...ref, description: 'env://VARIABLE holding an smtp:// URL; absent: the service-wide SMTP_URL' }, from: { type: 'string', maxLength: 254 } },
      }],
    },
    otp: {
      type: 'object', additionalProperties: false,
      description: `Abuse limits; 0 turns one off. Defaults: ${JSON.stringify(DEFAULT_OTP_LIMITS)}`,
      properties: {
        cooldown_sec: limit(3600), per_identity_daily: limit(1000), per_ip_hourly: limit(100000), per_mac_hourly: limit(1000),
        per_prefix_hourly: limit(1_000_000), prefix_digits: { type: 'integer', minimum: 1, maximum: 8 },
      },
    },
    allowed_prefixes: prefixes,
    blocked_prefixes: prefixes,
    sessions: {
      type: 'object', additionalProperties: false, description: 'Session settings per sign-in method',
      properties: Object.fromEntries(AUTH_METHODS.map((m) => [m, methodSession])),
    },
  },
};

export const SIGN_IN_SETTINGS_BODY_SCHEMAS: Record<string, Schema> = { signInSettings: settings };

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
