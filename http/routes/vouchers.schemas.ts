import { MAX_BATCH, STATUS_FILTERS, type BandwidthProfile, type CodeFormat, type StatusFilter } from '../../engine/index.js';
import { mbps, minutes, nullable, oneOf, page, quotaMb, requestSchema, responseSchema, type Paged } from '../schemas.js';

/** Body fields both creation surfaces share; what specOf (vouchers.ts) turns into the engine's VoucherSpec. */
export interface VoucherFields {
  /** Defaults to 1; null: unlimited. */
  max_uses: number | null;
  expires_at?: string | null;
  bandwidth_profile?: string;
  daily_quota_mb?: number | null;
  session_quota_mb?: number | null;
  duration_minutes?: number;
  bandwidth_down_mbps?: number;
  bandwidth_up_mbps?: number;
  ssids?: string[];
  notes?: string;
  /** Match-day window, ISO 8601 UTC; absent or null: open on that side. */
  valid_from?: string | null;
  valid_until?: string | null;
}

/** The console's batch: generated codes, and the bandwidth comes from a profile only. */
type ConsoleBatchFields = Omit<VoucherFields, 'bandwidth_down_mbps' | 'bandwidth_up_mbps'> & { count: number; format?: CodeFormat };

const maxUses = { ...nullable({ type: 'integer', minimum: 1, maximum: 1_000_000 } as const), description: 'null: unlimited', default: 1 };
const expiresAt = {
  description: 'ISO 8601 UTC timestamp; absent, null or "" means the voucher never expires',
  ...nullable({ type: 'string', format: 'date-time' } as const, { type: 'string', maxLength: 0 } as const),
};
// No newline in an SSID: Redis keeps the list newline separated (use-voucher-18.lua).
const ssids = { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 32, pattern: '^[^\\n]+$' }, description: 'SSIDs the voucher is valid on; empty: all' } as const;
const sessionQuotaMb = {
  ...nullable(quotaMb),
  description: 'Data one session may use, download and upload together, in MB (1,048,576 bytes); the session ends with session_quota when it is used up. Absent or null: none',
};
const windowEnd = (side: string) => ({
  description: `Match-day window ${side} (ISO 8601 UTC timestamp); absent or null: open on that side. `
    + 'Before valid_from the portal answers voucher_not_yet_valid and counts no use; from valid_until on, voucher_expired. '
    + 'valid_until must be after valid_from and not already past (docs/vouchers.md)',
  ...nullable({ type: 'string', format: 'date-time' } as const),
});
const validFrom = windowEnd('start');
const validUntil = windowEnd('end');
const profileName = { type: 'string', minLength: 1, maxLength: 64 } as const;
const notes = { type: 'string', maxLength: 2000 } as const;

export const voucherCreate = requestSchema<VoucherFields & { code?: string }>('voucherCreate', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    code: { type: 'string', pattern: '^[A-Za-z0-9_-]{3,64}$', description: 'Omit to have one generated' },
    max_uses: maxUses,
    duration_minutes: minutes,
    bandwidth_down_mbps: mbps,
    bandwidth_up_mbps: mbps,
    expires_at: expiresAt,
    daily_quota_mb: nullable(quotaMb),
    session_quota_mb: sessionQuotaMb,
    bandwidth_profile: profileName,
    ssids,
    notes,
    valid_from: validFrom,
    valid_until: validUntil,
  },
});

export const consoleVoucherBatch = requestSchema<ConsoleBatchFields>('consoleVoucherBatch', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    count: { type: 'integer', minimum: 1, maximum: MAX_BATCH, default: 1 },
    max_uses: maxUses,
    expires_at: expiresAt,
    bandwidth_profile: profileName,
    daily_quota_mb: nullable(quotaMb),
    session_quota_mb: sessionQuotaMb,
    duration_minutes: minutes,
    ssids,
    notes,
    valid_from: validFrom,
    valid_until: validUntil,
    format: {
      type: 'object', additionalProperties: false, required: [],
      properties: {
        charset: { ...oneOf(['alphanumeric', 'numeric']), default: 'alphanumeric' },
        length: {
          type: 'integer', minimum: 4, maximum: 32,
          description: 'Characters of randomness; absent: the shortest worth 40 bits (9 alphanumeric, 13 numeric). Shorter is allowed, and the answer warns',
        },
        group_size: { type: 'integer', minimum: 0, maximum: 16, default: 0 },
        separator: { type: 'string', pattern: '^[-_. ]?$', default: '-' },
        letter_case: { ...oneOf(['upper', 'lower']), default: 'upper' },
        prefix: { type: 'string', pattern: '^[A-Za-z0-9_-]{0,16}$', default: '' },
      },
    },
  },
});

export const bandwidthProfile = requestSchema<Omit<BandwidthProfile, 'daily_quota_mb'> & { daily_quota_mb?: number | null }>('bandwidthProfile', {
  type: 'object', additionalProperties: false, required: ['down_mbps', 'up_mbps'],
  properties: { down_mbps: mbps, up_mbps: mbps, daily_quota_mb: nullable(quotaMb) },
});

export const voucherList = requestSchema<Paged & { status?: StatusFilter; q?: string }>('voucherList', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    status: oneOf(STATUS_FILTERS), ...page,
    q: { type: 'string', minLength: 1, maxLength: 64, description: 'Only vouchers whose code or notes contain this text (any case)' },
  },
});

export const voucherExportQuery = requestSchema<{ batch_id?: string; status?: StatusFilter; q?: string }>('voucherExportQuery', {
  type: 'object', additionalProperties: false, required: [],
  properties: {
    batch_id: { type: 'string', pattern: '^vbt_[0-9a-z]{1,64}$', description: 'Only this batch (the batch_id a console batch answers); another tenant\'s gives a file with the header alone' },
    status: oneOf(STATUS_FILTERS),
    q: { type: 'string', minLength: 1, maxLength: 64, description: 'Only vouchers whose code or notes contain this text (any case)' },
  },
});

export const voucher = responseSchema('voucher', {
  type: 'object',
  properties: {
    id: { type: 'string', examples: ['vch_0a1b2c3d4e5f6g7h'] }, code: { type: 'string' },
    max_uses: nullable({ type: 'integer' }), current_uses: { type: 'integer' },
    status: { enum: ['active', 'used', 'expired'], description: 'Public API status; console states created and activated are both active' },
    created_at: { type: 'string', format: 'date-time' }, expires_at: nullable({ type: 'string', format: 'date-time' }),
    duration_minutes: nullable({ type: 'integer' }), bandwidth_down_mbps: nullable({ type: 'integer' }),
    bandwidth_up_mbps: nullable({ type: 'integer' }), bandwidth_profile: nullable({ type: 'string' }),
    daily_quota_mb: nullable({ type: 'integer' }), session_quota_mb: nullable({ type: 'integer' }), ssids: { type: 'array', items: { type: 'string' } }, notes: nullable({ type: 'string' }),
    valid_from: nullable({ type: 'string', format: 'date-time', description: 'Match-day window start; null: open. Before it the voucher is still active (created in the console)' }),
    valid_until: nullable({ type: 'string', format: 'date-time', description: 'Match-day window end; null: open. From it on the voucher is expired' }),
  },
});
export const voucherPage = responseSchema('voucherPage', {
  type: 'object',
  properties: { data: { type: 'array', items: voucher.schema }, total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' },
    next_cursor: nullable({ type: 'string', description: 'Give it as cursor for the next page; null on the last page' }),
  },
});
export const voucherDeleted = responseSchema('voucherDeleted', {
  type: 'object',
  properties: { id: { type: 'string' }, code: { type: 'string' }, deleted: { const: true }, deleted_at: { type: 'string', format: 'date-time' } },
});
/** What a creation answer says of its codes (engine/vouchers/code-generator.ts, CodeStrength). */
const strength = {
  entropy_bits: {
    type: 'number',
    description: 'Bits of randomness of the codes (log2 of the codes the format can produce); for a chosen code, an upper bound from its length and characters',
  },
  warnings: {
    type: 'array', description: 'weak_codes when below 40 bits: allowed, but easier to guess',
    items: { type: 'object', properties: { code: { const: 'weak_codes' }, message: { type: 'string' } } },
  },
} as const;

export const voucherCreated = responseSchema('voucherCreated', {
  type: 'object', properties: { ...(voucher.schema.properties as Record<string, unknown>), ...strength },
});

export const consoleBatch = responseSchema('consoleBatch', {
  type: 'object',
  properties: {
    vouchers: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, code: { type: 'string' }, status: { const: 'created' } } } },
    ...strength,
    batch_id: { type: 'string', description: 'Names this batch for its export and its printed sheets' },
  },
});
export const bandwidthProfiles = responseSchema('bandwidthProfiles', { type: 'object', additionalProperties: bandwidthProfile.schema });
