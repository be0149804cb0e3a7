import { ATTEMPT_STATUSES, WEBHOOK_EVENTS, type AttemptStatus, type WebhookInput } from '../../engine/index.js';
import { nullable, oneOf, requestSchema, responseSchema, secret } from '../schemas.js';

const events = {
  type: 'array', minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true, items: oneOf(WEBHOOK_EVENTS),
  description: `Event types to receive: ${WEBHOOK_EVENTS.join(', ')}`,
} as const;
const signingSecret = secret({
  type: 'string', minLength: 1, maxLength: 256, pattern: '^[^\\x00-\\x1f\\x7f]+$',
  description: 'Signing secret, 1-256 characters without control characters (32 or more random ones advised); a whsec_<base64> secret is read as Standard Webhooks does. Write-only: never returned',
} as const);

export const webhookCreate = requestSchema<WebhookInput>('webhookCreate', {
  type: 'object', additionalProperties: false, required: ['url', 'events', 'secret'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2000, pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', description: 'http(s) URL; its host must resolve to public addresses (target_not_allowed otherwise)' },
    events,
    secret: signingSecret,
  },
});

export const webhookRotate = requestSchema<{ secret: string; overlap_sec: number }>('webhookRotate', {
  type: 'object', additionalProperties: false, required: ['secret'],
  properties: {
    secret: signingSecret,
    overlap_sec: { type: 'integer', minimum: 0, maximum: 7 * 86_400, default: 86_400, description: 'How long the old secret signs beside the new one (both signatures sent); 0: replaced at once' },
  },
});

export const deliveryQuery = requestSchema<{ status?: AttemptStatus; limit: number }>('webhookDeliveryQuery', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    status: { ...oneOf(ATTEMPT_STATUSES), description: 'Only attempts of this status; dead: the dead-letter list' },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
});

export const webhook = responseSchema('webhook', {
  type: 'object', required: ['id', 'url', 'events', 'active', 'created_at'],
  properties: {
    id: { type: 'string', description: 'whk_...' },
    url: { type: 'string' },
    events,
    active: { type: 'boolean', description: 'false once the receiver answered 410 Gone' },
    created_at: { type: 'string', format: 'date-time' },
    disabled_reason: nullable({ type: 'string' }),
    previous_secret_until: { ...nullable({ type: 'string', format: 'date-time' }), description: 'A rotation overlap: the old secret signs too until then' },
  },
});

export const webhookList = responseSchema('webhookList', { type: 'object', required: ['data'], properties: { data: { type: 'array', items: webhook.schema } } });

const attempt = {
  type: 'object',
  required: ['delivery_id', 'event_id', 'event_type', 'attempt', 'status', 'code', 'duration_ms', 'error', 'at'],
  properties: {
    delivery_id: { type: 'string', description: 'X-Webhook-Id / webhook-id: the same on every attempt of the delivery' },
    event_id: { type: 'string', description: 'evt_...: the body\'s id' },
    event_type: { type: 'string' },
    attempt: { type: 'integer', minimum: 1, maximum: 3 },
    status: oneOf(ATTEMPT_STATUSES),
    code: { ...nullable({ type: 'integer' }), description: 'The receiver\'s HTTP status; null: no answer' },
    duration_ms: { type: 'integer' },
    error: nullable({ type: 'string' }),
    at: { type: 'string', format: 'date-time' },
  },
};
export const deliveryList = responseSchema('webhookDeliveryList', { type: 'object', required: ['data'], properties: { data: { type: 'array', items: attempt } } });
export const redelivered = responseSchema('webhookRedelivered', {
  type: 'object', required: ['delivery_id', 'status'], properties: { delivery_id: { type: 'string' }, status: { enum: ['pending'] } },
});
