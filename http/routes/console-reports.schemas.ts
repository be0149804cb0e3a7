import { looseRequestSchema, nullable, responseSchema } from '../schemas.js';

const date = { type: 'string', format: 'date' } as const;
const count = { type: 'integer', minimum: 0 } as const;
const fraction = { type: 'number', minimum: 0, maximum: 1 } as const;
const PRESETS = ['today', 'yesterday', 'last_7_days', 'last_30_days', 'last_90_days', 'this_month', 'last_month', 'this_year', 'custom'];

// Dates and ids are plain strings here: the engine checks them, so each failure gets its own code and sentence.
export const consoleReportQuery = looseRequestSchema<{ preset?: string; from?: string; to?: string; hotspot_id?: string }>('consoleReportQuery', {
  type: 'object', additionalProperties: false, required: ['hotspot_id'],
  properties: {
    preset: { type: 'string', enum: PRESETS, default: 'last_7_days', description: "The period, in the venue's zone (the tenant's for several venues, else the first venue's); custom needs from and to" },
    from: { type: 'string', maxLength: 40, description: 'custom only: first day, YYYY-MM-DD (both ends included; at most 366 days)' },
    to: { type: 'string', maxLength: 40, description: 'custom only: last day, YYYY-MM-DD' },
    hotspot_id: { type: 'string', maxLength: 1000, description: 'One or more of the tenant\'s hotspots: repeat the parameter or comma-separate; at most 10, more than one needs the multi_venue module' },
  },
});

const obj = (properties: Record<string, unknown>) => ({ type: 'object', additionalProperties: false, required: Object.keys(properties), properties });

export const consoleReport = responseSchema('consoleReport', obj({
  period: obj({ from: date, to: date, preset: { type: 'string', enum: PRESETS }, time_zone: { type: 'string' }, days: count }),
  hotspots: { type: 'array', items: obj({ id: { type: 'string' }, name: { type: 'string' } }) },
  summary: obj({
    total_sessions: count, unique_devices: { ...count, description: 'Distinct MACs, a HyperLogLog estimate (exact for a few, within about 1.6 % for many)' },
    signins_succeeded: count, signins_failed: count, bytes_in: count, bytes_out: count, avg_duration_minutes: count,
    peak_hour: nullable({ type: 'string', pattern: '^[0-2][0-9]:00$' }),
  }),
  daily: { type: 'array', description: 'One entry per day of the period, zeros included', items: obj({ date, sessions: count, unique_devices: count, signins_failed: count, bytes_in: count, bytes_out: count }) },
  hours: { type: 'array', minItems: 24, maxItems: 24, description: 'Session starts per local hour 0..23', items: obj({ hour: { type: 'integer', minimum: 0, maximum: 23 }, sessions: count }) },
  ssids: { type: 'array', description: "Session starts per SSID, most first ('' when the gateway named none)", items: obj({ ssid: { type: 'string' }, sessions: count }) },
  top_devices: { type: 'array', maxItems: 10, items: obj({ mac: { type: 'string', description: 'Last two octets masked (**)' }, sessions: count, last_seen: { type: 'string', format: 'date-time' } }) },
  methods: {
    type: 'array', minItems: 6, maxItems: 6, description: 'sms_otp, msgapp_otp, email, voucher, sponsor, pms, always all six',
    items: obj({ method: { type: 'string' }, sessions: count, attempts: count, succeeded: count, failed: count, success_rate: nullable({ ...fraction, description: 'succeeded / attempts; null with no attempts' }) }),
  },
  guests: obj({
    visitors: count, returning_visitors: count, returning_rate: fraction, avg_dwell_minutes: count,
    device_types: obj({ ios: count, android: count, windows: count, macos: count, other: count }),
    weeks: { type: 'array', items: obj({ week_start: date, visitors: count, returning_rate: fraction, avg_dwell_minutes: count }) },
  }),
}));
