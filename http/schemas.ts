import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Errors, GATEWAY_KINDS, MAX_BATCH, MAX_LOGO_CHARS, PORTAL_METHODS, STATUS_FILTERS } from '../engine/index.js';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

type Schema = Record<string, unknown>;

const minutes = { type: 'integer', minimum: 1, maximum: 525600 };
const mbps = { type: 'integer', minimum: 1, maximum: 100000 };
const nullable = (s: Schema): Schema => ({ anyOf: [s, { type: 'null' }] });
const expiresAt = {
  description: 'ISO 8601 UTC timestamp; absent, null or "" means the voucher never expires',
  anyOf: [{ type: 'string', format: 'date-time' }, { type: 'string', maxLength: 0 }, { type: 'null' }],
};
// No newline in an SSID: Redis keeps the list newline separated (use-voucher-8.lua).
const ssids = { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 32, pattern: '^[^\\n]+$' }, description: 'SSIDs the voucher is valid on; empty: all' };
const maxUses = { ...nullable({ type: 'integer', minimum: 1, maximum: 1_000_000 }), description: 'null: unlimited' };
const sessionQuotaMb = {
  ...nullable({ type: 'integer', minimum: 1, maximum: 2_147_483_647 }),
  description: 'Data one session may use, download and upload together, in MB (1,048,576 bytes); the session ends with session_quota when it is used up. Absent or null: none',
};

/** A hotspot's portal page settings (engine PortalSettingsInput); uam_secret is write-only. */
const portalSettings = {
  type: 'object', additionalProperties: false,
  properties: {
    display_name: nullable({ type: 'string', maxLength: 100 }),
    logo: nullable({ type: 'string', maxLength: MAX_LOGO_CHARS, pattern: '^data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+=*$', description: 'A data: URI (png, jpeg, gif or webp, base64)' }),
    primary_color: nullable({ type: 'string', pattern: '^#[0-9a-fA-F]{6}$' }),
    accent_color: nullable({ type: 'string', pattern: '^#[0-9a-fA-F]{6}$' }),
    terms: nullable({ type: 'object', additionalProperties: false, properties: { tr: { type: 'string', maxLength: 20000 }, en: { type: 'string', maxLength: 20000 } } }),
    terms_required: { type: 'boolean' },
    methods: { type: 'array', uniqueItems: true, minItems: 1, items: { enum: [...PORTAL_METHODS] } },
    gateway: nullable({ enum: [...GATEWAY_KINDS] }),
    uam_auth: { enum: ['chap', 'pap'] },
    uam_secret: nullable({ type: 'string', minLength: 1, maxLength: 128, description: 'CoovaChilli uamsecret / openNDS faskey; never returned' }),
  },
};

/** Request bodies, by id. Every one is closed (additionalProperties: false) so typos are reported. */
export const BODY_SCHEMAS: Record<string, Schema> = {
  hotspotCreate: {
    type: 'object', additionalProperties: false, required: ['name', 'timezone'],
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      location: { type: 'string', maxLength: 500 },
      timezone: { type: 'string', minLength: 1, maxLength: 64, description: 'IANA time zone name, e.g. Europe/Istanbul' },
      redirect_url: nullable({ type: 'string', format: 'uri', maxLength: 2000 }),
      session_minutes: nullable(minutes),
      portal: portalSettings,
    },
  },
  hotspotUpdate: {
    type: 'object', additionalProperties: false, minProperties: 1,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      location: { type: 'string', maxLength: 500 },
      timezone: { type: 'string', minLength: 1, maxLength: 64 },
      redirect_url: nullable({ type: 'string', format: 'uri', maxLength: 2000 }),
      session_minutes: nullable(minutes),
      portal: portalSettings,
    },
  },
  nasClientCreate: {
    type: 'object', additionalProperties: false, required: ['ip', 'secret'],
    properties: {
      ip: { anyOf: [{ type: 'string', format: 'ipv4' }, { type: 'string', format: 'ipv6' }] },
      secret: { type: 'string', minLength: 8, maxLength: 128, description: 'RADIUS shared secret; write-only' },
      name: { type: 'string', maxLength: 200 },
      coa_port: { type: 'integer', minimum: 1, maximum: 65535, default: 3799 },
      require_message_authenticator: { type: 'boolean', default: true },
    },
  },
  voucherCreate: {
    type: 'object', additionalProperties: false,
    properties: {
      code: { type: 'string', pattern: '^[A-Za-z0-9_-]{3,64}$', description: 'Omit to have one generated' },
      max_uses: { ...maxUses, default: 1 },
      duration_minutes: minutes,
      bandwidth_down_mbps: mbps,
      bandwidth_up_mbps: mbps,
      expires_at: expiresAt,
      daily_quota_mb: nullable({ type: 'integer', minimum: 1, maximum: 2_147_483_647 }),
      session_quota_mb: sessionQuotaMb,
      bandwidth_profile: { type: 'string', minLength: 1, maxLength: 64 },
      ssids,
      notes: { type: 'string', maxLength: 2000 },
    },
  },
  consoleVoucherBatch: {
    type: 'object', additionalProperties: false,
    properties: {
      count: { type: 'integer', minimum: 1, maximum: MAX_BATCH, default: 1 },
      max_uses: { ...maxUses, default: 1 },
      expires_at: expiresAt,
      bandwidth_profile: { type: 'string', minLength: 1, maxLength: 64 },
      daily_quota_mb: nullable({ type: 'integer', minimum: 1, maximum: 2_147_483_647 }),
      session_quota_mb: sessionQuotaMb,
      duration_minutes: minutes,
      ssids,
      notes: { type: 'string', maxLength: 2000 },
      format: {
        type: 'object', additionalProperties: false,
        properties: {
          charset: { enum: ['alphanumeric', 'numeric'], default: 'alphanumeric' },
          length: { type: 'integer', minimum: 4, maximum: 32, default: 8 },
          group_size: { type: 'integer', minimum: 0, maximum: 16, default: 0 },
          separator: { type: 'string', pattern: '^[-_. ]?$', default: '-' },
          letter_case: { enum: ['upper', 'lower'], default: 'upper' },
          prefix: { type: 'string', pattern: '^[A-Za-z0-9_-]{0,16}$', default: '' },
        },
      },
    },
  },
  portalVoucherVerify: {
    type: 'object', additionalProperties: false, required: ['code', 'mac'],
    properties: {
      code: { type: 'string', minLength: 1, maxLength: 128 },
      mac: { type: 'string', minLength: 1, maxLength: 32 },
      ip: { type: 'string', maxLength: 45 },
      ssid: { type: 'string', maxLength: 32, pattern: '^[^\\u0000-\\u001f\\u007f]*$', description: 'The network the guest joined (no control characters)' },
      hotspot_id: { type: 'string', minLength: 1, maxLength: 64 },
      accept_terms: { type: ['boolean', 'string'], description: 'The guest accepted the terms (required where the hotspot requires it)' },
      lang: { enum: ['tr', 'en'] },
      gateway: {
        anyOf: [{ type: 'string', maxLength: 8000 }, { type: 'object', additionalProperties: { type: 'string', maxLength: 2000 } }],
        description: 'The gateway redirect parameters the page was opened with (query string or object): see docs/portal-gateways.md',
      },
    },
  },
  sessionExtend: {
    type: 'object', additionalProperties: false,
    properties: { minutes: minutes, preset: { enum: ['1h', '4h', '24h'] } },
  },
  sessionBlock: {
    type: 'object', additionalProperties: false, required: ['duration'],
    properties: { duration: { enum: ['24h', '7d', 'permanent'] } },
  },
  bandwidthProfile: {
    type: 'object', additionalProperties: false, required: ['down_mbps', 'up_mbps'],
    properties: { down_mbps: mbps, up_mbps: mbps, daily_quota_mb: nullable({ type: 'integer', minimum: 1, maximum: 2_147_483_647 }) },
  },
};

const page = {
  limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
  offset: { type: 'integer', minimum: 0, maximum: 2_147_483_647, default: 0 },
};

/** Query strings, by id; values arrive as strings and are coerced. */
export const QUERY_SCHEMAS: Record<string, Schema> = {
  voucherList: {
    type: 'object', additionalProperties: false,
    properties: { status: { enum: [...STATUS_FILTERS] }, ...page },
  },
  sessionList: {
    type: 'object', additionalProperties: false,
    properties: { status: { enum: ['active', 'ended', 'disconnected'] }, ...page },
  },
  guestList: {
    type: 'object', additionalProperties: false,
    properties: { mac: { type: 'string', maxLength: 32 } },
  },
  guestHistory: {
    type: 'object', additionalProperties: false,
    properties: { days: { type: 'integer', minimum: 1, maximum: 730, default: 30 } },
  },
  auditChainDay: {
    type: 'object', additionalProperties: false, required: ['date'],
    properties: { date: { type: 'string', format: 'date', description: 'UTC day, YYYY-MM-DD' } },
  },
  complianceExport: {
    type: 'object', additionalProperties: false,
    description: 'An inclusive range of UTC days, at most 366; from/to or start/end',
    properties: {
      from: { type: 'string', format: 'date', description: 'First UTC day, YYYY-MM-DD (or start)' },
      to: { type: 'string', format: 'date', description: 'Last UTC day, YYYY-MM-DD, inclusive (or end)' },
      start: { type: 'string', format: 'date', description: 'Same as from' },
      end: { type: 'string', format: 'date', description: 'Same as to' },
    },
  },
  complianceSummary: {
    type: 'object', additionalProperties: false, required: ['date'],
    properties: { date: { type: 'string', format: 'date', description: 'UTC day, YYYY-MM-DD' } },
  },
  portalQuery: {
    type: 'object', additionalProperties: true,
    properties: { hotspot_id: { type: 'string', maxLength: 64 } },
  },
};

const voucher = {
  type: 'object',
  properties: {
    id: { type: 'string', examples: ['vch_0a1b2c3d4e5f6g7h'] }, code: { type: 'string' },
    max_uses: nullable({ type: 'integer' }), current_uses: { type: 'integer' },
    status: { enum: ['active', 'used', 'expired'], description: 'Public API status; console states created and activated are both active' },
    created_at: { type: 'string', format: 'date-time' }, expires_at: nullable({ type: 'string', format: 'date-time' }),
    duration_minutes: nullable({ type: 'integer' }), bandwidth_down_mbps: nullable({ type: 'integer' }),
    bandwidth_up_mbps: nullable({ type: 'integer' }), bandwidth_profile: nullable({ type: 'string' }),
    daily_quota_mb: nullable({ type: 'integer' }), session_quota_mb: nullable({ type: 'integer' }), ssids: { type: 'array', items: { type: 'string' } }, notes: nullable({ type: 'string' }),
  },
};
const hotspot = {
  type: 'object',
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, location: { type: 'string' }, timezone: { type: 'string' },
    redirect_url: nullable({ type: 'string' }), session_minutes: nullable({ type: 'integer' }),
    portal: { type: 'object', description: 'Portal page settings; the UAM secret shows only as uam_secret_set' },
    created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' },
  },
};

const session = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'ses_ prefix; the portal\'s sess_ id with the same suffix names the same session' },
    mac: { type: 'string' }, ip: nullable({ type: 'string' }),
    username: nullable({ type: 'string', description: 'phone numbers masked' }),
    auth_method: { enum: ['sms_otp', 'msgapp_otp', 'sponsor', 'voucher', 'email', 'pms'] },
    started_at: { type: 'string', format: 'date-time' }, duration_seconds: { type: 'integer' },
    bytes_in: { type: 'integer' }, bytes_out: { type: 'integer' }, hotspot_id: { type: 'string' },
    status: { enum: ['active', 'ended', 'disconnected'] }, expires_at: { type: 'string', format: 'date-time' },
    ended_at: nullable({ type: 'string', format: 'date-time' }),
    end_reason: nullable({ enum: ['session_timeout', 'idle_timeout', 'daily_quota', 'session_quota', 'user_request', 'lost_carrier', 'admin_disconnect', 'blocked', 'nas_reboot', 'replaced'] }),
    ssid: nullable({ type: 'string' }), ap_name: nullable({ type: 'string' }), signal_strength: nullable({ type: 'integer' }),
  },
};

/** Response shapes, for the OpenAPI document. */
export const RESPONSE_SCHEMAS: Record<string, Schema> = {
  error: {
    type: 'object', required: ['error'],
    properties: { error: { type: 'string' }, message: { type: 'string' }, details: { type: 'array' } },
  },
  voucher,
  voucherPage: {
    type: 'object',
    properties: { data: { type: 'array', items: voucher }, total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' } },
  },
  voucherDeleted: {
    type: 'object',
    properties: { id: { type: 'string' }, code: { type: 'string' }, deleted: { const: true }, deleted_at: { type: 'string', format: 'date-time' } },
  },
  consoleBatch: {
    type: 'object',
    properties: { vouchers: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' }, code: { type: 'string' }, status: { const: 'created' } } } } },
  },
  hotspot,
  hotspotList: { type: 'object', properties: { data: { type: 'array', items: hotspot } } },
  nasClient: {
    type: 'object',
    properties: {
      id: { type: 'string' }, hotspot_id: { type: 'string' }, ip: { type: 'string' }, name: nullable({ type: 'string' }),
      coa_port: { type: 'integer' }, require_message_authenticator: { type: 'boolean' }, created_at: { type: 'string', format: 'date-time' },
    },
  },
  nasClientList: { type: 'object', properties: { data: { type: 'array', items: { $ref: '#/components/schemas/nasClient' } } } },
  authorized: {
    type: 'object',
    properties: {
      status: { const: 'authorized' }, session_id: { type: 'string', description: 'sess_ prefix' },
      expires_at: { type: 'string', format: 'date-time' }, uses_left: nullable({ type: 'integer' }), redirect_url: nullable({ type: 'string' }),
      handback: {
        type: 'object', description: 'Present when the request carried gateway parameters: where the browser goes next',
        properties: { method: { enum: ['GET', 'POST'] }, url: { type: 'string' }, fields: { type: 'object', additionalProperties: { type: 'string' } } },
      },
    },
  },
  bandwidthProfiles: { type: 'object', additionalProperties: BODY_SCHEMAS.bandwidthProfile },
  session,
  sessionPage: {
    type: 'object',
    properties: { data: { type: 'array', items: session }, total: { type: 'integer' }, limit: { type: 'integer' }, offset: { type: 'integer' } },
  },
  sessionDisconnected: {
    type: 'object',
    properties: { id: { type: 'string' }, status: { const: 'disconnected' }, disconnected_at: { type: 'string', format: 'date-time' }, reason: { const: 'admin_disconnect' } },
  },
  sessionExtended: {
    type: 'object',
    properties: { id: { type: 'string' }, status: { const: 'active' }, expires_at: { type: 'string', format: 'date-time' }, extended_minutes: { type: 'integer' } },
  },
  block: {
    type: 'object',
    properties: { mac: { type: 'string' }, duration: { enum: ['24h', '7d', 'permanent'] }, until: nullable({ type: 'string', format: 'date-time' }), session_id: { type: 'string' } },
  },
  blockList: { type: 'object', properties: { data: { type: 'array', items: { $ref: '#/components/schemas/block' } } } },
  guestList: {
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
  },
  guestHistory: {
    type: 'object',
    properties: { mac: { type: 'string' }, days: { type: 'integer' }, data: { type: 'array', items: session } },
  },
  auditChainDay: {
    type: 'object',
    properties: {
      date: { type: 'string', format: 'date' }, count: { type: 'integer' }, chain_valid: { type: 'boolean' },
      first_break: nullable({ type: 'object', properties: { seq: { type: 'integer' }, id: { type: 'string' }, problem: { enum: ['hash_mismatch', 'broken_link', 'sequence_gap'] }, detail: { type: 'string' } } }),
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
  },
  complianceSummary: {
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
            chain_valid: { type: 'boolean' }, tsa_status: { $ref: '#/components/schemas/complianceTsaStatus' },
            warnings: { type: 'array', items: { $ref: '#/components/schemas/complianceWarning' } },
          },
        },
      },
      totals: {
        type: 'object',
        properties: {
          record_count: { type: 'integer' }, session_count: { type: 'integer' }, chain_valid: { type: 'boolean' },
          first_break: nullable({ type: 'object', properties: { seq: { type: 'integer' }, id: { type: 'string' }, problem: { enum: ['hash_mismatch', 'broken_link', 'sequence_gap'] }, detail: { type: 'string' } } }),
          tsa_status: { $ref: '#/components/schemas/complianceTsaStatus' }, tsa_gen_time: nullable({ type: 'string', format: 'date-time' }),
          warnings: { type: 'array', items: { $ref: '#/components/schemas/complianceWarning' } },
        },
      },
    },
  },
  complianceTsaStatus: {
    enum: ['granted', 'failed', 'not_configured', 'day_open'],
    description: 'granted: a token covers the log as it is now; day_open: the day is not over, nothing is stamped yet',
  },
  complianceWarning: {
    type: 'object',
    properties: {
      code: { enum: ['session_without_end', 'record_dead_lettered', 'sequence_gap', 'hash_mismatch', 'broken_link', 'tsa_failed', 'tsa_not_configured'] },
      message: { type: 'string' }, hotspot_id: nullable({ type: 'string' }), session_id: { type: 'string' }, seq: { type: 'integer' },
    },
  },
  tenantMe: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, modules: { type: 'array', items: { type: 'string' } } } },
};

/**
 * RFC 3339 allows what neither JavaScript nor Postgres can hold: a leap second
 * (23:59:60, which Date cannot parse) and year 0000 (Postgres has none). Both
 * formats are narrowed to times we can store, so such input is a 400, not a 500.
 */
function withStorableTimes(ajv: Ajv): Ajv {
  // ajv-formats registers both as {validate, compare}.
  const rfc = (name: string) => (ajv.formats[name] as { validate: (v: string) => boolean }).validate;
  const date = rfc('date');
  const dateTime = rfc('date-time');
  ajv.addFormat('date', { type: 'string', validate: (v: string) => date(v) && !v.startsWith('0000') && Number.isFinite(Date.parse(`${v}T00:00:00Z`)) });
  ajv.addFormat('date-time', { type: 'string', validate: (v: string) => dateTime(v) && !v.startsWith('0000') && Number.isFinite(Date.parse(v)) });
  return ajv;
}

export interface Validators {
  body(id: string): (data: unknown) => void;
  query(id: string): (data: unknown) => void;
}

/** Compiles every schema once, at start. A route naming an unknown schema fails here, not on a request. */
export function compileValidators(): Validators {
  const bodyAjv = withStorableTimes(addFormats(new Ajv({ allErrors: true, useDefaults: true, strict: false })));
  const queryAjv = withStorableTimes(addFormats(new Ajv({ allErrors: true, useDefaults: true, coerceTypes: true, strict: false })));
  const compiled = (ajv: Ajv, schemas: Record<string, Schema>): Map<string, ValidateFunction> =>
    new Map(Object.entries(schemas).map(([id, s]) => [id, ajv.compile(s)]));
  const bodies = compiled(bodyAjv, BODY_SCHEMAS);
  const queries = compiled(queryAjv, QUERY_SCHEMAS);
  const wrap = (fns: Map<string, ValidateFunction>, where: string) => (id: string) => {
    const fn = fns.get(id);
    if (!fn) throw new Error(`no ${where} schema named ${id}`);
    return (data: unknown): void => {
      if (data === undefined) {
        throw Errors.VALIDATION_FAILED(`Request ${where} is required`, [{ field: '', message: `${where} is required` }]);
      }
      if (!fn(data)) throw Errors.VALIDATION_FAILED(describe(fn.errors ?? [], where), details(fn.errors ?? []));
    };
  };
  return { body: wrap(bodies, 'body'), query: wrap(queries, 'query') };
}

function fieldOf(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const extra = (e.params as { missingProperty?: string; additionalProperty?: string });
  const child = extra.missingProperty ?? extra.additionalProperty;
  return child ? (base ? `${base}.${child}` : child) : base;
}

function details(errors: ErrorObject[]): { field: string; message: string }[] {
  // anyOf produces one error per branch plus its own; keep the anyOf summary only.
  const seen = new Set<string>();
  const out: { field: string; message: string }[] = [];
  for (const e of errors) {
    if (/\/anyOf\/\d+\//.test(e.schemaPath)) continue;
    const field = fieldOf(e);
    const message = e.keyword === 'additionalProperties' ? 'is not a known field'
      : e.keyword === 'anyOf' ? 'has the wrong type or format' : e.message ?? 'is invalid';
    const key = `${field}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ field, message });
  }
  return out;
}

function describe(errors: ErrorObject[], where: string): string {
  const first = details(errors)[0];
  if (!first) return `Invalid request ${where}`;
  return first.field ? `${first.field} ${first.message}` : `${where} ${first.message}`;
}
