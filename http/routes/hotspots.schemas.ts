import type { HotspotInput, NasClientInput } from '../../engine/index.js';
import { minutes, nullable, refTo, requestSchema, responseSchema } from '../schemas.js';

const redirectUrl = nullable({ type: 'string', format: 'uri', maxLength: 2000 } as const);

export const hotspotCreate = requestSchema<HotspotInput & { name: string; timezone: string }>('hotspotCreate', {
  type: 'object', additionalProperties: false, required: ['name', 'timezone'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    location: { type: 'string', maxLength: 500 },
    timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone name, e.g. Europe/Istanbul' },
    redirect_url: redirectUrl,
    session_minutes: nullable(minutes),
  },
});

export const hotspotUpdate = requestSchema<HotspotInput>('hotspotUpdate', {
  type: 'object', additionalProperties: false, minProperties: 1, required: [],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    location: { type: 'string', maxLength: 500 },
    timezone: { type: 'string', minLength: 1, maxLength: 64 },
    redirect_url: redirectUrl,
    session_minutes: nullable(minutes),
  },
});

export const nasClientCreate = requestSchema<NasClientInput>('nasClientCreate', {
  type: 'object', additionalProperties: false, required: ['ip', 'secret'],
  properties: {
    ip: { anyOf: [{ type: 'string', format: 'ipv4' }, { type: 'string', format: 'ipv6' }] },
    secret: { type: 'string', minLength: 8, maxLength: 128, description: 'RADIUS shared secret; write-only' },
    name: { type: 'string', maxLength: 200 },
    coa_port: { type: 'integer', minimum: 1, maximum: 65535, default: 3799 },
    require_message_authenticator: { type: 'boolean', default: true },
  },
});

export const hotspot = responseSchema('hotspot', {
  type: 'object',
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, location: { type: 'string' }, timezone: { type: 'string' },
    redirect_url: nullable({ type: 'string' }), session_minutes: nullable({ type: 'integer' }),
    created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' },
  },
});
export const hotspotList = responseSchema('hotspotList', { type: 'object', properties: { data: { type: 'array', items: hotspot.schema } } });

export const nasClient = responseSchema('nasClient', {
  type: 'object',
  properties: {
    id: { type: 'string' }, hotspot_id: { type: 'string' }, ip: { type: 'string' }, name: nullable({ type: 'string' }),
    coa_port: { type: 'integer' }, require_message_authenticator: { type: 'boolean' }, created_at: { type: 'string', format: 'date-time' },
  },
});
export const nasClientList = responseSchema('nasClientList', { type: 'object', properties: { data: { type: 'array', items: refTo(nasClient) } } }, [nasClient]);
