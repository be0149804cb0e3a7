import type { BlockDuration } from '../../engine/index.js';
import { minutes, nullable, oneOf, page, refTo, requestSchema, responseSchema, type Paged } from '../schemas.js';

const SESSION_STATUSES = ['active', 'ended', 'disconnected'] as const;
const BLOCK_DURATIONS: readonly BlockDuration[] = ['24h', '7d', 'permanent'];

export const sessionExtend = requestSchema<{ minutes?: number; preset?: '1h' | '4h' | '24h' }>('sessionExtend', {
  type: 'object', additionalProperties: false, required: [],
  properties: { minutes: minutes, preset: oneOf(['1h', '4h', '24h']) },
});

export const sessionBlock = requestSchema<{ duration: BlockDuration }>('sessionBlock', {
  type: 'object', additionalProperties: false, required: ['duration'],
  properties: { duration: oneOf(BLOCK_DURATIONS) },
});

export const sessionList = requestSchema<Paged & { status?: (typeof SESSION_STATUSES)[number] }>('sessionList', {
  type: 'object', additionalProperties: false, required: [],
  properties: { status: oneOf(SESSION_STATUSES), ...page },
});

export const guestList = requestSchema<{ mac?: string }>('guestList', {
  type: 'object', additionalProperties: false, required: [],
  properties: { mac: { type: 'string', maxLength: 32 } },
});

export const guestHistoryQuery = requestSchema<{ days: number }>('guestHistory', {
  type: 'object', additionalProperties: false, required: [],
  properties: { days: { type: 'integer', minimum: 1, maximum: 730, default: 30 } },
});

export const session = responseSchema('session', {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'ses_ prefix; the portal\'s sess_ id with the same suffix names the same session' },
    mac: { type: 'string' }, ip: nullable({ type: 'string' }),
    username: nullable({ type: 'string', description: 'phone numbers masked' }),
    auth_method: { enum: ['sms_otp', 'msgapp_otp', 'sponsor', 'voucher', 'email', 'pms'] },
    started_at: { type: 'string', format: 'date-time' }, duration_seconds: { type: 'integer' },
    bytes_in: { type: 'integer' }, bytes_out: { type: 'integer' }, hotspot_id: { type: 'string' },
    status: { enum: [...SESSION_STATUSES] }, expires_at: { type: 'string', format: 'date-time' },
    ended_at: nullable({ type: 'string', format: 'date-time' }),
    end_reason: nullable({ enum: ['session_timeout', 'idle_timeout', 'daily_quota', 'session_quota', 'user_request', 'lost_carrier', 'admin_disconnect', 'blocked', 'nas_reboot', 'replaced', 'pms_checkout'] }),
    ssid: nullable({ type: 'string' }), ap_name: nullable({ type: 'string' }), signal_strength: nullable({ type: 'integer' }),
  },
});
export const sessionPage = responseSchema('sessionPage', {
  type: 'object',
  properties: { data: { type: 'array', items: session.schema }, total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' },
    next_cursor: nullable({ type: 'string', description: 'Give it as cursor for the next page; null on the last page' }),
  },
});
export const sessionDisconnected = responseSchema('sessionDisconnected', {
  type: 'object',
  properties: { id: { type: 'string' }, status: { const: 'disconnected' }, disconnected_at: { type: 'string', format: 'date-time' }, reason: { const: 'admin_disconnect' } },
});
export const sessionExtended = responseSchema('sessionExtended', {
  type: 'object',
  properties: { id: { type: 'string' }, status: { const: 'active' }, expires_at: { type: 'string', format: 'date-time' }, extended_minutes: { type: 'integer' } },
});
export const block = responseSchema('block', {
  type: 'object',
  properties: { mac: { type: 'string' }, duration: { enum: [...BLOCK_DURATIONS] }, until: nullable({ type: 'string', format: 'date-time' }), session_id: { type: 'string' } },
});
export const blockList = responseSchema('blockList', { type: 'object', properties: { data: { type: 'array', items: refTo(block) } } }, [block]);
export const guestListResponse = responseSchema('guestList', {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          mac: { type: 'string' }, first_seen: { type: 'string', format: 'date-time' }, last_seen: { type: 'string', format: 'date-time' },
          sessions: { type: 'integer' }, active_sessions: { type: 'integer' }, bytes_in: { type: 'integer' }, bytes_out: { type: 'integer' },
          blocked: { type: 'boolean' }, last_username: nullable({ type: 'string' }), last_auth_method: { type: 'string' },
        },
      },
    },
  },
});
export const guestHistory = responseSchema('guestHistory', {
  type: 'object',
  properties: { mac: { type: 'string' }, days: { type: 'integer' }, data: { type: 'array', items: session.schema } },
});
