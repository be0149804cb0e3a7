import { AUTH_METHODS, DEFAULT_OTP_LIMITS, DEFAULT_GUESSING_LIMITS, DEFAULT_SPONSOR, type SignInSettingsInput } from '../../engine/index.js';
import { guestIp, looseRequestSchema, secret, type Schema } from '../schemas.js';

/**
 * Schemas of the OTP portal routes (portal-otp.ts) and the tenant sign-in
 * settings (sign-in-settings.ts). Loose (not checked against their types by
 * JSONSchemaType): the portal bodies are open objects that carry the gateway's
 * redirect parameters through, and the settings hold object-or-null unions.
 */

const mac = { type: 'string', minLength: 1, maxLength: 32 };
const hotspotId = { type: 'string', minLength: 1, maxLength: 64 };
const ssid = { type: 'string', maxLength: 32, pattern: '^[^\\u0000-\\u001f\\u007f]*$' };
const ip = guestIp;
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
/** What every OTP portal body may carry besides its own fields (and the gateway's parameters, passed through). */
interface PortalBody { mac: string; ssid?: string; ip?: string; hotspot_id?: string; lang?: 'tr' | 'en'; code?: string; phone?: string; email?: string; channel?: 'sms' | 'msgapp' }
export type PortalOtpBody = PortalBody & Record<string, unknown>;

const PORTAL_OTP_BODIES = {
  portalSmsRequest: {
    type: 'object', required: ['phone', 'mac'],
    properties: { phone, mac, ssid, ip, hotspot_id: hotspotId, lang, channel: { enum: ['sms', 'msgapp'], description: 'msgapp: the messaging-app channel' } },
  },
  portalSmsVerify: { type: 'object', required: ['phone', 'code', 'mac'], properties: { phone, code, mac, ssid, ip, hotspot_id: hotspotId } },
  portalEmailRequest: { type: 'object', required: ['email', 'mac'], properties: { email, mac, ssid, ip, hotspot_id: hotspotId, lang } },
  portalEmailVerify: { type: 'object', required: ['email', 'code', 'mac'], properties: { email, code, mac, ssid, ip, hotspot_id: hotspotId } },
} satisfies Record<string, Schema>;

export const portalSmsRequest = looseRequestSchema<PortalOtpBody>('portalSmsRequest', PORTAL_OTP_BODIES.portalSmsRequest);
export const portalSmsVerify = looseRequestSchema<PortalOtpBody>('portalSmsVerify', PORTAL_OTP_BODIES.portalSmsVerify);
export const portalEmailRequest = looseRequestSchema<PortalOtpBody>('portalEmailRequest', PORTAL_OTP_BODIES.portalEmailRequest);
export const portalEmailVerify = looseRequestSchema<PortalOtpBody>('portalEmailVerify', PORTAL_OTP_BODIES.portalEmailVerify);

export const portalOtpStatus = looseRequestSchema<{ request_id: string }>('portalOtpStatus', {
  type: 'object', additionalProperties: true, required: ['request_id'],
  properties: { request_id: { type: 'string', minLength: 1, maxLength: 128 } },
});

// A secret by reference: the name of the environment variable that holds it (env://<TENANT>_NAME).
const ref = { type: 'string', pattern: '^env://[A-Za-z_][A-Za-z0-9_]*$', maxLength: 200, description: 'env://VARIABLE' };
const prefixes = { type: 'array', maxItems: 200, items: { type: 'string', pattern: '^\\+[1-9][0-9]{0,6}$' }, description: 'Dial prefixes, e.g. +90' };
/** A secret given inline: write-only, sealed at rest, answered only as `<name>_set: true`. */
const inline = (description: string): Schema => secret({ type: 'string', minLength: 1, maxLength: 2000, description: `${description}; write-only (stored encrypted, shown as *_set)` });
/** As GET answers it: true keeps the inline secret stored before; leave it out with neither the secret nor its reference to remove it. */
const isSet = { type: 'boolean', description: 'An inline secret is stored; send true (as read) to keep it' };
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
        type: 'object', additionalProperties: false, required: ['provider'],
        description: 'Credentials: credentials (inline), credentials_ref (env://) or credentials_set: true (keep the stored ones)',
        properties: {
          provider: { enum: ['netgsm'] }, base_url: { type: 'string', format: 'uri', maxLength: 500 },
          credentials_ref: ref, credentials: inline('usercode:password'), credentials_set: isSet,
          sender: { type: 'string', minLength: 1, maxLength: 11 },
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
        properties: {
          smtp_url_ref: { ...ref, description: 'env://VARIABLE holding an smtp:// URL; absent (and no smtp_url): the service-wide SMTP_URL' },
          smtp_url: inline('smtp:// or smtps:// URL, login included'), smtp_url_set: isSet, from: { type: 'string', maxLength: 254 },
        },
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
    guessing: {
      type: 'object', additionalProperties: false,
      description: `Voucher guessing limits: unknown codes per device (MAC) and hotspot, per source address, in a sliding window; `
        + `past one, verify answers 429 too_many_attempts (RADIUS: Access-Reject). 0 turns one off. Defaults: ${JSON.stringify(DEFAULT_GUESSING_LIMITS)}`,
      properties: {
        per_device: limit(100_000), per_address: limit(1_000_000),
        window_sec: { type: 'integer', minimum: 1, maximum: 86_400 },
        incident_refusals: limit(1_000_000),
      },
    },
    sponsor: {
      type: 'object', additionalProperties: false,
      description: `Sponsor approval: who may sponsor (domains or single addresses), the access lengths offered, the link's life, `
        + `request limits per hour (0 turns one off), the MAC masked or in full on the sponsor's page. Defaults: ${JSON.stringify(DEFAULT_SPONSOR)}`,
      properties: {
        enabled: { type: 'boolean' },
        allowed_domains: { type: 'array', maxItems: 200, items: { type: 'string', minLength: 3, maxLength: 253, pattern: '^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)+$' } },
        allowed_emails: { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 3, maxLength: 254, pattern: '^[^\\s@]+@[^\\s@]+$' } },
        durations_minutes: { type: 'array', minItems: 1, maxItems: 8, items: { type: 'integer', minimum: 1, maximum: 525600 } },
        link_ttl_minutes: { type: 'integer', minimum: 1, maximum: 10080 },
        per_ip_hourly: limit(100000), per_mac_hourly: limit(1000), per_sponsor_hourly: limit(100000),
        show_mac: { enum: ['masked', 'full'] },
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

export const signInSettings = looseRequestSchema<SignInSettingsInput>('signInSettings', settings);


/** Body of POST /api/v1/hotspot-portal/sponsor/request (open: the gateway's parameters ride along for the hand-back). */
export interface PortalSponsorBody { sponsor_email: string; guest_name: string; mac: string; hotspot_id?: string; ssid?: string; ip?: string; lang?: 'tr' | 'en'; [k: string]: unknown }
export const portalSponsorRequest = looseRequestSchema<PortalSponsorBody>('portalSponsorRequest', {
  type: 'object', required: ['sponsor_email', 'guest_name', 'mac'],
  properties: {
    sponsor_email: email, guest_name: { type: 'string', minLength: 1, maxLength: 80, pattern: '^[^\\u0000-\\u001f\\u007f<>]*\\S[^\\u0000-\\u001f\\u007f<>]*$' },
    mac, ssid, ip, hotspot_id: hotspotId, lang,
  },
});
export const portalSponsorStatus = looseRequestSchema<{ request_id: string }>('portalSponsorStatus', {
  type: 'object', additionalProperties: true, required: ['request_id'],
  properties: { request_id: { type: 'string', minLength: 1, maxLength: 128 } },
});
/** The sponsor page's form: the decision and, to approve, the access length. */
export const sponsorDecisionBody = looseRequestSchema<{ action: 'approve' | 'reject'; minutes?: string | number; lang?: 'tr' | 'en' }>('sponsorDecision', {
  type: 'object', required: ['action'],
  properties: { action: { enum: ['approve', 'reject'] }, minutes: { type: ['string', 'integer'], maxLength: 7 }, lang },
});
