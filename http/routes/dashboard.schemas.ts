import { LIVE_OFFSET_MAX, LIVE_PAGE_DEFAULT, LIVE_PAGE_MAX } from '../../engine/index.js';
import { nullable, requestSchema, responseSchema, type Schema } from '../schemas.js';

/**
 * Response shapes of the dashboard's read paths (docs/dashboard-api.md says
 * what each number means and where it comes from). Every field is listed and
 * required, and nothing else is allowed, so the OpenAPI document is the whole
 * body and a test can hold a real answer against it.
 */

const int = (description: string): Schema => ({ type: 'integer', minimum: 0, description });
const num = (description: string): Schema => ({ type: 'number', minimum: 0, description });
const pct = (description: string): Schema => nullable({ type: 'number', minimum: 0, maximum: 100, description });
const time = (description: string): Schema => ({ type: 'string', format: 'date-time', description });
const generatedAt = time('When the figures were read (the tile\'s "last refreshed")');

/** An object schema whose listed properties are all required and the only ones. */
function strict(properties: Record<string, Schema>, description?: string): Schema {
  return { type: 'object', additionalProperties: false, required: Object.keys(properties), properties, ...(description ? { description } : {}) };
}

export const overview = responseSchema('dashboardOverview', strict({
  active_sessions: int('Grants whose end is in the future, all sites'),
  decisions_1m: int('Sign-in decisions (accepts and rejects) in the last minute: six 10-second steps, the current one included'),
  switches_online: int('NAS clients heard from within INCIDENT_NAS_SILENT_SEC (5 minutes)'),
  incidents_open: int('Incidents pending, triaging or acknowledged'),
  posture_fail_24h: int('Posture verdicts fail or drift received in 24 h'),
  active_guest_count: int('Devices with a live session (a device at two sites counts once)'),
  login_count_24h: int('Accepted sign-ins in 24 h'),
  login_fail_count_24h: int('Rejected sign-ins in 24 h'),
  auth_success_pct_24h: pct('Accepted / (accepted + rejected) sign-ins in 24 h, percent (two decimals); null without decisions'),
  error_rate_pct: num('Rejects on our side (an engine, store or provider failure) / decisions, last 15 minutes, percent (two decimals); 0 without decisions'),
  audit_anchor_lag_min: num('Minutes (one decimal) since the oldest audit outbox entry not yet written to Postgres was queued; 0 when all are written'),
  generated_at: generatedAt,
}));

export const kpisExtra = responseSchema('dashboardKpisExtra', strict({
  edge_health_pct: pct('NAS clients online / NAS clients, percent (two decimals); null when the tenant has none'),
  posture_compliance_pct: pct('Devices whose latest posture verdict is pass / devices with a verdict, percent (two decimals); null when none'),
  nas_total: int('NAS clients of the tenant'),
  nas_online: int('NAS clients heard from within INCIDENT_NAS_SILENT_SEC (5 minutes)'),
  posture_devices: int('Devices with a posture verdict'),
  posture_pass: int('Devices whose latest verdict is pass'),
  generated_at: generatedAt,
}));

export const activeSessions = responseSchema('dashboardActiveSessions', strict({
  summary: strict({
    active_sessions: int('Grants whose end is in the future, all sites'),
    logins_24h: int('Accepted sign-ins in 24 h'),
    bytes_total_24h: int('Bytes downloaded plus uploaded in 24 h, from accounting deltas'),
    avg_duration_sec_24h: int('Average length of the sessions that ended in 24 h, s; 0 when none ended'),
  }),
  by_ssid: { type: 'array', description: 'Live sessions per hotspot and SSID, most first', items: strict({
    hotspot_id: { type: 'string' }, ssid: { type: 'string' }, active: int('Live sessions'),
  }) },
  by_ap: { type: 'array', description: 'Live sessions per hotspot and access point (as accounting names it), most first', items: strict({
    hotspot_id: { type: 'string' }, ap: { type: 'string' }, active: int('Live sessions'),
  }) },
  per_minute: { type: 'array', minItems: 60, maxItems: 60, description: 'The last hour, oldest first, the current (still filling) minute last', items: strict({
    minute: time('Start of the minute'), connects: int('Sessions started'), disconnects: int('Sessions ended'),
  }) },
  bandwidth_mbps: num('Bytes downloaded plus uploaded in the last complete minute, in Mbit/s (three decimals)'),
  sessions: strict({
    data: { type: 'array', description: 'Live sessions in the console shape of the spec (live panel): by site, ending soonest first', items: strict({
      id: { type: 'string', description: 'ses_ prefix, as the sessions API names it' },
      hotspot_id: { type: 'string' },
      mac_address: { type: 'string', description: 'Device physical address' },
      ip_address: nullable({ type: 'string', description: 'Address assigned by DHCP' }),
      username: nullable({ type: 'string', description: 'Verified identity (phone, e-mail or voucher code), masked as in the sessions API' }),
      auth_method: { type: 'string' },
      ssid: nullable({ type: 'string' }),
      ap_name: nullable({ type: 'string', description: 'Access point name, as accounting gives it' }),
      start_time: time('Session start'),
      duration: { type: 'string', pattern: '^[0-9]{2,}:[0-5][0-9]:[0-5][0-9]$', description: 'Elapsed time, HH:MM:SS' },
      bytes_in: int('Downloaded data, bytes'),
      bytes_out: int('Uploaded data, bytes'),
      signal_strength: nullable({ type: 'integer', description: 'Wi-Fi signal, dBm; null when the NAS never reported it' }),
    }) },
    total: int('Live sessions of the tenant (summary.active_sessions)'),
    limit: int('Sessions per page asked for'),
    offset: int('The page\'s first session'),
    next_offset: nullable({ type: 'integer', minimum: 0, description: `The next page's offset; null on the last page or past ${LIVE_OFFSET_MAX}` }),
  }),
  generated_at: generatedAt,
}));

export const activeSessionsQuery = requestSchema<{ limit: number; offset: number }>('dashboardActiveSessionsQuery', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: LIVE_PAGE_MAX, default: LIVE_PAGE_DEFAULT },
    offset: { type: 'integer', minimum: 0, maximum: LIVE_OFFSET_MAX, default: 0 },
  },
});

const health = { enum: ['ok', 'degraded', 'down'], description: 'down: NAS clients, none online; degraded: a NAS silent or an open incident; else ok' };

export const sites = responseSchema('dashboardSites', strict({
  data: { type: 'array', items: strict({
    id: { type: 'string' }, name: { type: 'string' }, location: { type: 'string' }, timezone: { type: 'string' },
    active_sessions: int('Live sessions at the site'),
    nas_total: int('NAS clients of the site'),
    nas_online: int('NAS clients heard from within INCIDENT_NAS_SILENT_SEC (5 minutes)'),
    health,
  }) },
}));

export const siteMetrics = responseSchema('dashboardSiteMetrics', strict({
  data: { type: 'array', items: strict({
    site_id: { type: 'string' }, name: { type: 'string' },
    active_sessions: int('Live sessions at the site'),
    signins_1m: int('Accepted sign-ins in the last complete minute'),
    failures_1m: int('Rejected sign-ins in the last complete minute'),
    per_minute: { type: 'array', minItems: 60, maxItems: 60, description: 'The last hour, oldest first, the current minute last', items: strict({
      minute: time('Start of the minute'), signins: int('Accepted sign-ins'), failures: int('Rejected sign-ins'),
    }) },
    bytes_in_1h: int('Bytes downloaded in the last hour (accounting deltas)'),
    bytes_out_1h: int('Bytes uploaded in the last hour'),
    busiest_aps: { type: 'array', maxItems: 5, description: 'Access points with the most live sessions, at most 5', items: strict({
      ap: { type: 'string' }, active: int('Live sessions'),
    }) },
  }) },
  generated_at: generatedAt,
}));
