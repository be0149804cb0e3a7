import { download, request } from './api.js';

/**
 * Typed calls of the public API (/v1), the console paths (/api/v1) and the
 * dashboard API (/api/v1/tenants/me) that the pages use. Shapes as the
 * service's OpenAPI document (/v1/openapi.json) gives them; fields the pages
 * do not read are left out.
 */

export interface Page<T> { data: T[]; total: number; limit: number; offset: number }

export type ConsoleVoucherStatus = 'created' | 'activated' | 'used' | 'expired';
export interface ConsoleVoucher {
  id: string; code: string; status: ConsoleVoucherStatus; max_uses: number | null; current_uses: number;
  created_at: string; expires_at: string | null; bandwidth_profile: string | null; notes: string | null;
  valid_from?: string | null; valid_until?: string | null;
}
export interface CodeFormat {
  charset?: 'alphanumeric' | 'numeric'; length?: number; group_size?: number; separator?: string; letter_case?: 'upper' | 'lower'; prefix?: string;
}
export interface VoucherBatchInput {
  count: number; max_uses: number | null; expires_at?: string | null; bandwidth_profile?: string; daily_quota_mb?: number | null;
  duration_minutes?: number; notes?: string; format?: CodeFormat;
  valid_from?: string | null; valid_until?: string | null;
}
/** The answer of a CSV import (docs/vouchers-bulk.md). */
export interface VoucherImportReport {
  batch_id: string; imported: number; invalid: number; invalid_rows_truncated: boolean; time_zone: string;
  invalid_rows: { line: number; reason: string; message: string }[];
}
export interface VoucherInput {
  code?: string; max_uses: number | null; duration_minutes?: number; bandwidth_down_mbps?: number; bandwidth_up_mbps?: number;
  expires_at?: string | null; notes?: string;
}

export interface SessionRow {
  id: string; mac: string; ip: string | null; username: string | null; auth_method: string; started_at: string; duration_seconds: number;
  bytes_in: number; bytes_out: number; hotspot_id: string; status: 'active' | 'ended' | 'disconnected'; expires_at: string;
  ended_at: string | null; end_reason: string | null; ssid: string | null; ap_name: string | null; signal_strength: number | null;
}
export type ExtendBy = { preset: '1h' | '4h' | '24h' } | { minutes: number };
export type BlockDuration = '24h' | '7d' | 'permanent';
export interface Block { mac: string; duration: BlockDuration; until: string | null; session_id: string }

/** GET /v1/sponsor-requests: one sponsor request of the last day. */
export interface SponsorRequestRow {
  id: string; hotspot_id: string; guest_name: string; sponsor_email: string; mac: string;
  status: 'pending' | 'approved' | 'rejected' | 'expired'; requested_at: string; expires_at: string; decided_at: string | null; minutes: number | null;
}

/** GET /api/v1/tenants/me/sessions/active (docs/dashboard-api.md). */
export interface ActiveSessionsStats {
  summary: { active_sessions: number; logins_24h: number; bytes_total_24h: number; avg_duration_sec_24h: number };
  by_ssid: { hotspot_id: string; ssid: string; active: number }[];
  by_ap: { hotspot_id: string; ap: string; active: number }[];
  per_minute: { minute: string; connects: number; disconnects: number }[];
  bandwidth_mbps: number;
  /** A page of the live sessions in the spec's console shape (live panel); `total` is summary.active_sessions. */
  sessions: { data: ConsoleSession[]; total: number; limit: number; offset: number; next_offset: number | null };
  generated_at: string;
}

export interface ConsoleSession {
  id: string; hotspot_id: string; mac_address: string; ip_address: string | null; username: string | null; auth_method: string;
  ssid: string | null; ap_name: string | null; start_time: string; duration: string; bytes_in: number; bytes_out: number; signal_strength: number | null;
}

export interface Hotspot { id: string; name: string; location: string; timezone: string; redirect_url: string | null; session_minutes: number | null; created_at: string }
export interface HotspotInput { name?: string; location?: string; timezone?: string }
export interface NasClient {
  id: string; hotspot_id: string; ip: string; name: string | null; coa_port: number; require_message_authenticator: boolean; nas_identifier: string | null;
  nas_type: NasType; reply_role: string | null; reply_filter_id: string | null; reply_vlan: number | null; created_at: string;
  radsec_cert_name: string | null;
}
export interface NasClientInput {
  ip: string; secret: string; name?: string; coa_port?: number; nas_identifier?: string;
  nas_type?: NasType; reply_role?: string; reply_filter_id?: string; reply_vlan?: number;
  radsec_cert_name?: string;
}
/** The reply profiles of docs/nas/README.md (engine/hotspots/nas-profiles.ts). */
export const NAS_TYPES = ['generic', 'coovachilli', 'mikrotik', 'unifi', 'cisco', 'aruba', 'ruckus'] as const;
export type NasType = (typeof NAS_TYPES)[number];

export interface Guest {
  mac: string; first_seen: string; last_seen: string; sessions: number; active_sessions: number; bytes_in: number; bytes_out: number;
  blocked: boolean; last_username: string | null; last_auth_method: string;
}

export interface SignInSettings {
  methods: string[];
  msgapp: { fallback_sms?: boolean; fallback_timeout_sec?: number; [k: string]: unknown };
  otp: { cooldown_sec: number; per_identity_daily: number; per_ip_hourly: number; per_mac_hourly: number; per_prefix_hourly: number; prefix_digits: number };
  /** Voucher guessing limits (README, Guessing limits). */
  guessing?: { per_device?: number; per_address?: number; window_sec?: number; incident_refusals?: number };
  /** Sponsor approval (docs/sponsor.md): offered when enabled, to sponsors of these domains or addresses. */
  sponsor?: { enabled?: boolean; allowed_domains?: string[]; allowed_emails?: string[]; [k: string]: unknown };
  [k: string]: unknown;
}

export interface AuditRecord {
  seq: number; event_type: string; timestamp: string; session_id: string | null; mac_address: string | null; username: string | null;
  auth_method: string | null; ssid: string | null; hotspot_id: string | null; hash_chain_value: string;
}
export interface AuditChainDay {
  date: string; count: number; chain_valid: boolean;
  first_break: { seq: number; id: string; problem: string; detail: string } | null;
  records: AuditRecord[];
}

/** A webhook subscription (GET /v1/webhooks); its secret is write-only. */
export interface WebhookSub {
  id: string; url: string; events: string[]; active: boolean; created_at: string; disabled_reason: string | null; previous_secret_until: string | null;
}
/** One delivery attempt (GET /v1/webhooks/{id}/deliveries). */
export interface WebhookAttempt {
  delivery_id: string; event_id: string; event_type: string; attempt: number; status: 'delivered' | 'failed' | 'dead';
  code: number | null; duration_ms: number; error: string | null; at: string;
}
export interface WebhookInput { url: string; events: string[]; secret: string }

const enc = encodeURIComponent;

export const api = {
  vouchers: {
    /** `q`: only codes or notes containing it (the server searches them all, not just the page). */
    list: (q: { status?: ConsoleVoucherStatus; q?: string; limit?: number; offset?: number }, signal?: AbortSignal) =>
      request<Page<ConsoleVoucher>>('/api/v1/vouchers', { query: q, signal }),
    createBatch: (body: VoucherBatchInput) =>
      request<{ vouchers: { id: string; code: string; status: 'created' }[]; batch_id: string | null }>('/api/v1/vouchers', { method: 'POST', body }),
    /** The CSV of a batch or of the list's filter (streamed by the service; docs/vouchers.md). */
    exportCsv: (q: { batch_id?: string; status?: ConsoleVoucherStatus; q?: string }) => download('/api/v1/vouchers/export', q),
    createOne: (body: VoucherInput) => request<{ id: string; code: string }>('/v1/vouchers', { method: 'POST', body }),
    remove: (id: string) => request<{ id: string; code: string }>(`/v1/vouchers/${enc(id)}`, { method: 'DELETE' }),
    importCsv: (file: Blob) => {
      const form = new FormData();
      form.append('file', file, 'vouchers.csv');
      return request<VoucherImportReport>('/api/v1/vouchers/import', { method: 'POST', form });
    },
    profiles: () => request<Record<string, { down_mbps: number; up_mbps: number; daily_quota_mb: number | null }>>('/v1/bandwidth-profiles'),
    /** A printable sheet (PDF): a batch or ids, layout a4|receipt, lang tr|en, optional message and hotspot (docs/voucher-sheets.md). */
    pdf: (q: { batch_id?: string; ids?: string; layout: 'a4' | 'receipt'; lang: string; message?: string; hotspot_id?: string }) =>
      download('/api/v1/vouchers/pdf', q),
  },
  sessions: {
    list: (q: { status?: 'active' | 'ended' | 'disconnected'; limit?: number; offset?: number }, signal?: AbortSignal) =>
      request<Page<SessionRow>>('/v1/sessions', { query: q, signal }),
    extend: (id: string, by: ExtendBy) => request<{ id: string; expires_at: string }>(`/v1/sessions/${enc(id)}/extend`, { method: 'POST', body: by }),
    block: (id: string, duration: BlockDuration) => request<Block>(`/v1/sessions/${enc(id)}/block`, { method: 'POST', body: { duration } }),
    disconnect: (id: string) => request<{ id: string; status: 'disconnected' }>(`/v1/sessions/${enc(id)}`, { method: 'DELETE' }),
    stats: (signal?: AbortSignal) => request<ActiveSessionsStats>('/api/v1/tenants/me/sessions/active', { signal }),
  },
  blocks: {
    list: (signal?: AbortSignal) => request<{ data: Block[] }>('/v1/blocks', { signal }),
    remove: (mac: string) => request<{ mac: string }>(`/v1/blocks/${enc(mac)}`, { method: 'DELETE' }),
  },
  sponsorRequests: {
    list: (signal?: AbortSignal) => request<{ data: SponsorRequestRow[] }>('/v1/sponsor-requests', { signal }),
  },
  webhooks: {
    list: (signal?: AbortSignal) => request<{ data: WebhookSub[] }>('/v1/webhooks', { signal }),
    create: (body: WebhookInput) => request<WebhookSub>('/v1/webhooks', { method: 'POST', body }),
    remove: (id: string) => request<WebhookSub>(`/v1/webhooks/${enc(id)}`, { method: 'DELETE' }),
    deliveries: (id: string, signal?: AbortSignal) => request<{ data: WebhookAttempt[] }>(`/v1/webhooks/${enc(id)}/deliveries`, { query: { limit: 20 }, signal }),
  },
  hotspots: {
    list: (signal?: AbortSignal) => request<{ data: Hotspot[] }>('/v1/hotspots', { signal }),
    create: (body: HotspotInput) => request<Hotspot>('/v1/hotspots', { method: 'POST', body }),
    update: (id: string, body: HotspotInput) => request<Hotspot>(`/v1/hotspots/${enc(id)}`, { method: 'PUT', body }),
    nasClients: (id: string, signal?: AbortSignal) => request<{ data: NasClient[] }>(`/v1/hotspots/${enc(id)}/nas-clients`, { signal }),
    addNasClient: (id: string, body: NasClientInput) => request<NasClient>(`/v1/hotspots/${enc(id)}/nas-clients`, { method: 'POST', body }),
  },
  guests: {
    find: (mac: string, signal?: AbortSignal) => request<{ data: Guest[] }>('/v1/guests', { query: { mac }, signal }),
    history: (mac: string, days: number, signal?: AbortSignal) =>
      request<{ mac: string; days: number; data: SessionRow[] }>(`/v1/guests/${enc(mac)}/history`, { query: { days }, signal }),
  },
  signInSettings: {
    get: (signal?: AbortSignal) => request<SignInSettings>('/v1/settings/sign-in', { signal }),
    put: (body: SignInSettings) => request<SignInSettings>('/v1/settings/sign-in', { method: 'PUT', body }),
  },
  compliance: {
    auditChain: (date: string, signal?: AbortSignal) => request<AuditChainDay>('/v1/compliance/audit-chain', { query: { date }, signal }),
    evidencePack: (from: string, to: string) => download('/v1/compliance/5651/export', { from, to }),
  },
};
