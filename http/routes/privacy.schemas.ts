import { nullable, looseRequestSchema, oneOf, refTo, requestSchema, responseSchema } from '../schemas.js';

const str = { type: 'string' } as const;
const time = { type: 'string', format: 'date-time' } as const;
const text = { type: 'string', maxLength: 2000, pattern: '^[^\\u0000]*$' } as const;

/** POST /v1/privacy/requests */
export interface PrivacyRequestBody {
  type: 'access' | 'erasure' | 'correction';
  subject: { phone?: string; email?: string; mac?: string };
  note?: string;
}

export const privacyRequestBody = looseRequestSchema<PrivacyRequestBody>('privacyRequestBody', {
  type: 'object', additionalProperties: false, required: ['type', 'subject'],
  properties: {
    type: { enum: ['access', 'erasure', 'correction'], description: 'access: an export of what we hold; erasure: remove it (legal records kept under a hold); correction: put a guest-typed detail right' },
    subject: {
      type: 'object', additionalProperties: false, minProperties: 1, maxProperties: 1,
      description: 'Exactly one of phone (E.164 or national with +), email or mac',
      properties: { phone: { type: 'string', minLength: 1, maxLength: 32 }, email: { type: 'string', minLength: 3, maxLength: 254 }, mac: { type: 'string', minLength: 12, maxLength: 17 } },
    },
    note: text,
  },
});

/** POST /v1/privacy/requests/{id}/close */
export interface PrivacyCloseBody { outcome: 'completed' | 'rejected'; note?: string; correction?: { guest_name?: string } }

export const privacyCloseBody = looseRequestSchema<PrivacyCloseBody>('privacyCloseBody', {
  type: 'object', additionalProperties: false, required: ['outcome'],
  properties: {
    outcome: { enum: ['completed', 'rejected'], description: 'completed: an erasure erases now, a correction applies `correction`; rejected: nothing changes but the request' },
    note: text,
    correction: {
      type: 'object', additionalProperties: false,
      description: "A correction request's change: the guest name the subject gave in sponsor requests (kept a day). Phones, e-mail addresses and MACs are not corrected (erase them); audit records are never rewritten.",
      properties: { guest_name: { type: 'string', minLength: 1, maxLength: 80, pattern: '^[^\\u0000-\\u001f\\u007f]*$' } },
    },
  },
});

export const privacyListQuery = requestSchema<{ status?: 'open' | 'closed'; overdue?: boolean; limit: number }>('privacyListQuery', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    status: oneOf(['open', 'closed'] as const),
    overdue: { type: 'boolean', description: 'true: open requests past their due date only' },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 100 },
  },
});

export const privacyPeriodQuery = requestSchema<{ from: string; to: string }>('privacyPeriodQuery', {
  type: 'object', additionalProperties: false, required: ['from', 'to'],
  properties: {
    from: { type: 'string', format: 'date', description: 'First UTC day, YYYY-MM-DD' },
    to: { type: 'string', format: 'date', description: 'Last UTC day, YYYY-MM-DD (included)' },
  },
});

export const privacyRequest = responseSchema('privacyRequest', {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'dsr_...' }, type: { enum: ['access', 'erasure', 'correction'] },
    subject: { type: 'object', properties: { kind: { enum: ['phone', 'email', 'mac'] }, masked: str, ref: { type: 'string', description: 'keyed hash of the subject; what the audit chain records' } } },
    note: nullable(str), status: { enum: ['open', 'closed'] }, filed_at: time, due_at: { ...time, description: 'filed_at + 30 days' }, overdue: { type: 'boolean' },
    closed_at: nullable(time), outcome: nullable({ enum: ['completed', 'rejected'] }), close_note: nullable(str),
    result: nullable({ type: 'object', description: 'What an erasure or correction did: counts, the legal hold (id, held_until); never a personal value' }),
  },
});

export const privacyRequestList = responseSchema('privacyRequestList', { type: 'object', properties: { data: { type: 'array', items: refTo(privacyRequest) } } }, [privacyRequest]);

export const privacyDeletions = responseSchema('privacyDeletions', {
  type: 'object',
  properties: {
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: { at: time, kind: { enum: ['retention', 'hold_released', 'erasure'] }, category: str, rows: { type: 'integer' }, ref: nullable(str) },
      },
    },
  },
});

export const privacySummary = responseSchema('privacySummary', {
  type: 'object',
  description: 'The personal-data audit summary of the compliance package: categories and volumes, retention compliance, requests, deletions in the period',
  properties: {
    period: { type: 'object', properties: { from: time, to: time } }, generated_at: time, retention_cutoff: { type: 'string', format: 'date' },
    categories: {
      type: 'array',
      items: {
        type: 'object',
        properties: { category: str, lives_in: str, records: { type: 'integer' }, oldest: nullable(time), retention: str, compliant: { type: 'boolean' } },
      },
    },
    requests: { type: 'object', properties: { open: { type: 'integer' }, overdue: { type: 'integer' }, filed: { type: 'integer' }, closed: { type: 'integer' }, closed_late: { type: 'integer' } } },
    deletions: { type: 'array', items: { type: 'object', properties: { kind: str, category: str, rows: { type: 'integer' }, runs: { type: 'integer' } } } },
  },
});
