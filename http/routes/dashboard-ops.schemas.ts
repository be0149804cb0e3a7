import { INCIDENT_KINDS, INCIDENT_SEVERITIES, INCIDENT_STATES, POSTURE_VERDICTS, type IncidentFilter, type PostureInput } from '../../engine/index.js';
import { nullable, oneOf, refTo, requestSchema, responseSchema } from '../schemas.js';

const str = { type: 'string' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const int = { type: 'integer' } as const;
/** An array of objects with these fields: every list on these paths. */
const objects = (properties: Record<string, unknown>, description?: string) =>
  ({ type: 'array', ...(description ? { description } : {}), items: { type: 'object', properties } });

export const incidentQuery = requestSchema<{ state?: Exclude<IncidentFilter, undefined>; limit: number }>('incidentQuery', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    state: oneOf(['open', ...INCIDENT_STATES] as const),
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
  },
});

export const incident = responseSchema('incident', {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'inc_ prefix' }, kind: { enum: [...INCIDENT_KINDS] },
    state: { enum: [...INCIDENT_STATES], description: 'pending -> triaging -> acknowledged -> resolved, forward only' },
    severity: { enum: [...INCIDENT_SEVERITIES] }, title: str, site_id: nullable(str),
    subject: { type: 'string', description: 'what it is about within its kind (a NAS id, outbox, tsa, signin, a provider): one open incident per kind and subject' },
    details: { type: 'object' }, opened_at: time, updated_at: time, resolved_at: nullable(time),
    resolved_by: nullable({ type: 'string', description: "the operator (\"<via>:<subject>\") or 'engine'" }),
  },
});

export const incidentList = responseSchema('incidentList', {
  type: 'object',
  properties: { data: { type: 'array', items: refTo(incident) }, open: { type: 'integer', description: 'incidents pending, triaging or acknowledged' } },
}, [incident]);

export const postureBody = requestSchema<PostureInput>('posture', {
  type: 'object', additionalProperties: false, required: ['mac', 'verdict'],
  properties: {
    mac: { type: 'string', maxLength: 32 }, verdict: oneOf(POSTURE_VERDICTS),
    hotspot_id: { type: 'string', maxLength: 64 }, reason: { type: 'string', maxLength: 500 },
  },
});

export const postureReceived = responseSchema('postureReceived', {
  type: 'object',
  properties: { mac: str, verdict: { enum: [...POSTURE_VERDICTS] }, hotspot_id: nullable(str), received_at: time },
});

const switchFields = {
  id: str, name: { type: 'string', description: 'the name it was registered with, else its address (never null)' }, ip: str,
  online: { type: 'boolean', description: 'a packet came within INCIDENT_NAS_SILENT_SEC (5 minutes)' }, last_seen_at: nullable(time),
};

export const switchList = responseSchema('switchList', {
  type: 'object',
  properties: { data: objects({ ...switchFields, hotspot_id: str }) },
});

export const switchPorts = responseSchema('switchPorts', {
  type: 'object',
  properties: {
    switch_id: str,
    data: objects({
      port: { type: 'string', description: 'NAS-Port-Id, else Called-Station-Id, else NAS-Port' },
      nas_port: nullable(int), nas_port_id: nullable(str), called_station_id: nullable(str), last_seen_at: time,
      active_sessions: { type: 'integer', description: 'live sessions at the access point this port belongs to' },
    }),
  },
});

export const topology = responseSchema('topology', {
  type: 'object',
  properties: {
    tenant: { type: 'object', properties: { id: str, name: str } },
    sites: objects({
      id: str, name: str,
      nas: objects({ ...switchFields, access_points: objects({ id: str, active_sessions: int }) }),
    }),
  },
});

export const auditQuery = requestSchema<{ limit: number; before?: string }>('auditQuery', {
  type: 'object', additionalProperties: false, required: [],
  properties: { limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 }, before: { type: 'string', maxLength: 200 } },
});

export const auditPage = responseSchema('auditPage', {
  type: 'object',
  properties: {
    data: objects({
      id: str, event_type: str, timestamp: time, session_id: nullable(str), hotspot_id: nullable(str), mac_address: nullable(str),
      ip_address: nullable(str), username: nullable({ type: 'string', description: 'phone numbers masked' }), auth_method: nullable(str),
      ssid: nullable(str), actor: nullable({ type: 'string', description: 'the operator for operator actions; null for a guest\'s own' }),
      hash_chain_value: { type: 'string', description: 'sha256:<hex>' },
    }),
    next_before: nullable({ type: 'string', description: 'pass as `before` for the next (older) page; null on the last' }),
  },
});

export const jitApprovals = responseSchema('jitApprovals', {
  type: 'object',
  properties: {
    data: objects({ id: str, site_id: str, guest: str, sponsor: str, requested_at: time, expires_at: time }, 'the sponsor requests waiting for their sponsor (docs/sponsor.md)'),
  },
});
