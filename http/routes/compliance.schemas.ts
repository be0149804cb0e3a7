import { nullable, refTo, requestSchema, responseSchema, utcDay } from '../schemas.js';

export const auditChainDayQuery = requestSchema<{ date: string; limit: number; cursor?: string; unmasked: boolean }>('auditChainDay', {
  type: 'object', additionalProperties: false, required: ['date'],
  properties: {
    date: utcDay,
    limit: { type: 'integer', minimum: 1, maximum: 5000, default: 1000, description: 'Records per page (chain order)' },
    cursor: { type: 'string', pattern: '^[0-9]{1,18}$', description: 'next_cursor of the page before: the page goes on after it' },
    unmasked: { type: 'boolean', default: false, description: "Guests' phone numbers and e-mail addresses in clear (admin or compliance role); else masked as every answer masks them" },
  },
});

export const complianceExport = requestSchema<{ from?: string; to?: string; start?: string; end?: string }>('complianceExport', {
  type: 'object', additionalProperties: false, required: [],
  description: 'An inclusive range of UTC days, at most 366; from/to or start/end',
  properties: {
    from: { type: 'string', format: 'date', description: 'First UTC day, YYYY-MM-DD (or start)' },
    to: { type: 'string', format: 'date', description: 'Last UTC day, YYYY-MM-DD, inclusive (or end)' },
    start: { type: 'string', format: 'date', description: 'Same as from' },
    end: { type: 'string', format: 'date', description: 'Same as to' },
  },
});

export const complianceSummaryQuery = requestSchema<{ date: string }>('complianceSummary', {
  type: 'object', additionalProperties: false, required: ['date'],
  properties: { date: utcDay },
});

const firstBreak = nullable({
  type: 'object',
  properties: { seq: { type: 'integer' }, id: { type: 'string' }, problem: { enum: ['hash_mismatch', 'broken_link', 'sequence_gap'] }, detail: { type: 'string' } },
});

export const auditChainDay = responseSchema('auditChainDay', {
  type: 'object',
  properties: {
    date: { type: 'string', format: 'date' }, count: { type: 'integer', description: 'Records in this page' },
    chain_valid: { type: 'boolean', description: "This page's records verify, linked to the record before the page (the last page: also to what follows the day)" },
    first_break: firstBreak,
    next_cursor: nullable({ type: 'string', description: 'Give it as cursor for the next page; null on the last page' }),
    records: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          seq: { type: 'integer' }, event_type: { type: 'string' }, timestamp: { type: 'string', format: 'date-time' },
          session_id: nullable({ type: 'string' }), mac_address: nullable({ type: 'string' }), ip_address: nullable({ type: 'string' }),
          username: nullable({ type: 'string' }), auth_method: nullable({ type: 'string' }), ssid: nullable({ type: 'string' }),
          hotspot_id: nullable({ type: 'string' }), details: { type: 'object' }, prev_hash: { type: 'string' },
          hash_chain_value: { type: 'string', pattern: '^sha256:[0-9a-f]{64}$' },
        },
      },
    },
  },
});

const tsaStatus = responseSchema('complianceTsaStatus', {
  enum: ['granted', 'failed', 'not_configured', 'day_open'],
  description: 'granted: a token covers the log as it is now; day_open: the day is not over, nothing is stamped yet',
});
const warning = responseSchema('complianceWarning', {
  type: 'object',
  properties: {
    code: { enum: ['session_without_end', 'record_dead_lettered', 'sequence_gap', 'hash_mismatch', 'broken_link', 'tsa_failed', 'tsa_not_configured'] },
    message: { type: 'string' }, hotspot_id: nullable({ type: 'string' }), session_id: { type: 'string' }, seq: { type: 'integer' },
  },
});

export const complianceSummary = responseSchema('complianceSummary', {
  type: 'object',
  properties: {
    tenant_id: { type: 'string' }, date: { type: 'string', format: 'date' }, generated_at: { type: 'string', format: 'date-time' },
    log_sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: "SHA-256 of the day's logs/YYYY-MM-DD.csv as an evidence pack would hold it now" },
    hotspots: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          hotspot_id: { type: 'string' }, name: { type: 'string' }, record_count: { type: 'integer' }, session_count: { type: 'integer' },
          chain_valid: { type: 'boolean' }, tsa_status: refTo(tsaStatus),
          warnings: { type: 'array', items: refTo(warning) },
        },
      },
    },
    totals: {
      type: 'object',
      properties: {
        record_count: { type: 'integer' }, session_count: { type: 'integer' }, chain_valid: { type: 'boolean' },
        first_break: firstBreak,
        tsa_status: refTo(tsaStatus), tsa_gen_time: nullable({ type: 'string', format: 'date-time' }),
        warnings: { type: 'array', items: refTo(warning) },
      },
    },
  },
}, [tsaStatus, warning]);
