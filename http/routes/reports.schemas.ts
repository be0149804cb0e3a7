import { looseRequestSchema, nullable, responseSchema } from '../schemas.js';

// Dates are plain strings here: the engine checks them (reportRange), so a bad one gets its own code and sentence.
const day = (what: string) => ({ type: 'string' as const, maxLength: 40, description: `${what}, YYYY-MM-DD in the hotspot's zone (both ends included; at most 366 days)` });
const hotspotId = { type: 'string' as const, maxLength: 64, description: "One hotspot of the tenant; absent: all of them, each counting its own local days" };

export const sessionReportQuery = looseRequestSchema<{ from: string; to: string; format: 'json' | 'csv'; hotspot_id?: string }>('sessionReportQuery', {
  type: 'object', additionalProperties: false, required: ['from', 'to'],
  properties: {
    from: day('First day'), to: day('Last day'), hotspot_id: hotspotId,
    format: { type: 'string', enum: ['json', 'csv'], default: 'json', description: 'json (a document with the rows and totals) or csv (text/csv with a header row); both streamed' },
  },
});

export const analyticsQuery = looseRequestSchema<{ from: string; to: string; hotspot_id?: string }>('analyticsQuery', {
  type: 'object', additionalProperties: false, required: ['from', 'to'],
  properties: { from: day('First day'), to: day('Last day'), hotspot_id: hotspotId },
});

const count = { type: 'integer', minimum: 0 };

const sessionRow = {
  type: 'object',
  properties: {
    session_id: { type: 'string' }, hotspot_id: { type: 'string' }, ssid: nullable({ type: 'string' }), mac: { type: 'string' },
    auth_method: { type: 'string' }, device_type: { enum: ['ios', 'android', 'windows', 'macos', 'other'] },
    started_at: { type: 'string', format: 'date-time' }, ended_at: nullable({ type: 'string', format: 'date-time' }),
    duration_minutes: nullable({ type: 'integer', description: 'null while the session is live' }),
    bytes_in: count, bytes_out: count, end_reason: nullable({ type: 'string' }),
  },
};

export const sessionReport = responseSchema('sessionReport', {
  type: 'object',
  description: 'Sessions that started on the days asked, oldest first (streamed; format=csv gives the same columns as text/csv)',
  properties: {
    period: { type: 'object', properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } } },
    data: { type: 'array', items: sessionRow },
    totals: {
      type: 'object',
      properties: { sessions: count, ended: count, duration_minutes: count, bytes_in: count, bytes_out: count },
    },
  },
});

export const analytics = responseSchema('analytics', {
  type: 'object', additionalProperties: false,
  description: "The spec's analytics shape, from the rollups. A session counts on the local day and hour it started; avg_duration_minutes over the ended ones; "
    + 'pms sign-ins and other devices count in total_sessions only (docs/reports.md)',
  required: ['period', 'total_sessions', 'unique_devices', 'avg_duration_minutes', 'auth_methods', 'device_types', 'peak_hour'],
  properties: {
    period: { type: 'object', additionalProperties: false, required: ['from', 'to'], properties: { from: { type: 'string', format: 'date' }, to: { type: 'string', format: 'date' } } },
    total_sessions: count,
    unique_devices: { ...count, description: 'Distinct devices (MACs), a HyperLogLog estimate: exact for a few, within about 1.6 % for many' },
    avg_duration_minutes: count,
    auth_methods: {
      type: 'object', additionalProperties: false, required: ['sms_otp', 'msgapp_otp', 'sponsor', 'voucher', 'email'],
      properties: { sms_otp: count, msgapp_otp: count, sponsor: count, voucher: count, email: count },
    },
    device_types: {
      type: 'object', additionalProperties: false, required: ['ios', 'android', 'windows', 'macos'],
      properties: { ios: count, android: count, windows: count, macos: count },
    },
    peak_hour: nullable({ type: 'string', pattern: '^[0-2][0-9]:00$', description: 'Local hour with the most starts, HH:MM; null with no session' }),
  },
});
