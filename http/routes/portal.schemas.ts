import { guestIp, looseRequestSchema, nullable, requestSchema, responseSchema } from '../schemas.js';

/** Loose: accept_terms is a boolean or a form's string, gateway a query string or an object. */
export const portalVoucherVerify = looseRequestSchema<{
  code: string; mac: string; ip?: string; ssid?: string; hotspot_id?: string;
  accept_terms?: boolean | string; lang?: 'tr' | 'en'; gateway?: string | Record<string, string>;
}>('portalVoucherVerify', {
  type: 'object', additionalProperties: false, required: ['code', 'mac'],
  properties: {
    code: { type: 'string', minLength: 1, maxLength: 128 },
    mac: { type: 'string', minLength: 1, maxLength: 32 },
    ip: guestIp,
    ssid: { type: 'string', maxLength: 32, pattern: '^[^\\u0000-\\u001f\\u007f]*$', description: 'The network the guest joined (no control characters)' },
    hotspot_id: { type: 'string', minLength: 1, maxLength: 64 },
    accept_terms: { type: ['boolean', 'string'], description: 'The guest accepted the terms (required where the hotspot requires it)' },
    lang: { enum: ['tr', 'en'] },
    gateway: {
      anyOf: [{ type: 'string', maxLength: 8000 }, { type: 'object', additionalProperties: { type: 'string', maxLength: 2000 } }],
      description: 'The gateway redirect parameters the page was opened with (query string or object): see docs/portal-gateways.md',
    },
  },
});

/** The portal's query string: the hotspot, when not in the body; other parameters (a captive portal's own) are let through. */
export const portalQuery = requestSchema<{ hotspot_id?: string }>('portalQuery', {
  type: 'object', additionalProperties: true, required: [],
  properties: { hotspot_id: { type: 'string', maxLength: 64 } },
});

export const authorized = responseSchema('authorized', {
  type: 'object',
  properties: {
    status: { const: 'authorized' }, session_id: { type: 'string', description: 'sess_ prefix' },
    expires_at: { type: 'string', format: 'date-time' }, uses_left: nullable({ type: 'integer' }), redirect_url: nullable({ type: 'string' }),
    handback: {
      type: 'object', description: 'Present when the request carried gateway parameters: where the browser goes next',
      properties: { method: { enum: ['GET', 'POST'] }, url: { type: 'string' }, fields: { type: 'object', additionalProperties: { type: 'string' } } },
    },
  },
});
