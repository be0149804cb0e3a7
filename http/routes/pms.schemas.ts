import { guestIp, looseRequestSchema, requestSchema, responseSchema, nullable } from '../schemas.js';

/** Room sign-in on the portal: JSON or a plain form POST; open, so the gateway's redirect parameters pass through. */
export interface PortalRoomBody {
  room: string; surname: string; mac: string; ip?: string; ssid?: string; hotspot_id?: string; lang?: 'tr' | 'en';
  accept_terms?: boolean | string; gateway?: string | Record<string, string>;
}

export const portalRoomVerify = looseRequestSchema<PortalRoomBody & Record<string, unknown>>('portalRoomVerify', {
  type: 'object', required: ['room', 'surname', 'mac'],
  properties: {
    room: { type: 'string', minLength: 1, maxLength: 16, pattern: '^\\s*[A-Za-z0-9-]{1,12}\\s*$', description: 'Room number as on the key card (letters, digits, hyphen)' },
    surname: { type: 'string', minLength: 1, maxLength: 80, pattern: '^[^\\u0000-\\u001f\\u007f]*$', description: 'The surname the booking is under; matched as docs/pms.md says' },
    mac: { type: 'string', minLength: 1, maxLength: 32 },
    ip: guestIp,
    ssid: { type: 'string', maxLength: 32, pattern: '^[^\\u0000-\\u001f\\u007f]*$' },
    hotspot_id: { type: 'string', minLength: 1, maxLength: 64 },
    lang: { enum: ['tr', 'en'] },
    accept_terms: { type: ['boolean', 'string'] },
  },
});

export const pmsLinkPut = requestSchema<{ host: string; port: number; resync_after_gap_sec?: number; enabled?: boolean }>('pmsLinkPut', {
  type: 'object', additionalProperties: false, required: ['host', 'port'],
  properties: {
    host: { type: 'string', minLength: 1, maxLength: 253, description: 'The FIAS interface: a host name or an IP address, checked by the outbound-target policy' },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    resync_after_gap_sec: { type: 'integer', minimum: 0, maximum: 604800, description: 'A link silent longer than this asks for a database resync when back (default 300; 0: every reconnection)' },
    enabled: { type: 'boolean' },
  },
});

export const pmsLink = responseSchema('pmsLink', {
  type: 'object',
  properties: {
    hotspot_id: { type: 'string' }, protocol: { const: 'fias' }, host: { type: 'string' }, port: { type: 'integer' },
    resync_after_gap_sec: { type: 'integer' }, enabled: { type: 'boolean' }, updated_at: { type: 'string', format: 'date-time' },
    status: {
      type: 'object',
      properties: {
        link: { enum: ['up', 'down'] }, accepting_sign_ins: { type: 'boolean', description: 'Room sign-in answers from the in-house list now (docs/pms.md)' },
        last_heard_at: nullable({ type: 'string', format: 'date-time' }), last_resync_at: nullable({ type: 'string', format: 'date-time' }),
        resyncing: { type: 'boolean' }, guests_in_house: { type: 'integer' },
      },
    },
  },
});
