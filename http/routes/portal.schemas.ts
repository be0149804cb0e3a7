import { nullable, requestSchema, responseSchema } from '../schemas.js';

export const portalVoucherVerify = requestSchema<{ code: string; mac: string; ip?: string; ssid?: string; hotspot_id?: string }>('portalVoucherVerify', {
  type: 'object', additionalProperties: false, required: ['code', 'mac'],
  properties: {
    code: { type: 'string', minLength: 1, maxLength: 128 },
    mac: { type: 'string', minLength: 1, maxLength: 32 },
    ip: { type: 'string', maxLength: 45 },
    ssid: { type: 'string', maxLength: 32, pattern: '^[^\\u0000-\\u001f\\u007f]*$', description: 'The network the guest joined (no control characters)' },
    hotspot_id: { type: 'string', minLength: 1, maxLength: 64 },
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
  },
});
