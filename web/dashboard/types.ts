/**
 * The dashboard API's bodies as docs/dashboard-api.md publishes them (paths
 * under /api/v1/tenants/me/). Only what the page reads is typed; a field the
 * page does not use is left out rather than guessed.
 */

/** Percentages are null where there is nothing to measure (no decisions, no NAS, no verdicts). */
export type Pct = number | null;

export interface Overview {
  active_sessions: number;
  decisions_1m: number;
  switches_online: number;
  incidents_open: number;
  posture_fail_24h: number;
  active_guest_count: number;
  login_count_24h: number;
  login_fail_count_24h: number;
  auth_success_pct_24h: Pct;
  error_rate_pct: number;
  audit_anchor_lag_min: number;
  generated_at: string;
}

export interface KpisExtra {
  edge_health_pct: Pct;
  posture_compliance_pct: Pct;
  nas_total: number;
  nas_online: number;
  posture_devices: number;
  posture_pass: number;
  generated_at: string;
}

/** sessions/active: the console's live panel reads the same body; one type for both. */
export type { ActiveSessionsStats as ActiveSessions } from '../shared/public-api.js';

export type SiteHealth = 'ok' | 'degraded' | 'down';

export interface Sites {
  data: { id: string; name: string; location: string; timezone: string; active_sessions: number; nas_total: number; nas_online: number; health: SiteHealth }[];
}

export interface SiteMetrics {
  data: {
    site_id: string; name: string; active_sessions: number; signins_1m: number; failures_1m: number;
    per_minute: { minute: string; signins: number; failures: number }[];
    bytes_in_1h: number; bytes_out_1h: number; busiest_aps: { ap: string; active: number }[];
  }[];
  generated_at: string;
}

export interface Topology {
  tenant: { id: string; name: string };
  sites: { id: string; name: string; nas: { id: string; name: string; ip: string; online: boolean; last_seen_at: string | null; access_points: { id: string; active_sessions: number }[] }[] }[];
}

export interface Switch {
  id: string; name: string; hotspot_id: string; ip: string; online: boolean; last_seen_at: string | null;
}

export interface SwitchPorts {
  switch_id: string;
  data: { port: string; nas_port: string | number | null; nas_port_id: string | null; called_station_id: string | null; last_seen_at: string | null; active_sessions: number }[];
}

export interface Decisions {
  data: { id: string; at: string; outcome: 'accept' | 'reject'; method: string; reason: string | null; hotspot_id: string; source: string; count: number }[];
  decisions_1m: number;
  fail_reasons: { reason: string; count: number }[];
}

export type IncidentState = 'pending' | 'triaging' | 'acknowledged' | 'resolved';

export interface Incident {
  id: string; kind: string; state: IncidentState; severity: string; title: string; site_id: string | null; subject: string;
  opened_at: string; updated_at: string; resolved_at: string | null; resolved_by: string | null;
}

export interface Incidents {
  data: Incident[];
  open: number;
}

export interface AuditEntry {
  id: string; event_type: string; timestamp: string; session_id: string | null; hotspot_id: string | null; mac_address: string | null;
  ip_address: string | null; username: string | null; auth_method: string | null; ssid: string | null; actor: string | null;
}

export interface Audit {
  data: AuditEntry[];
  next_before: string | null;
}

export interface JitApprovals {
  data: { id: string; site_id: string; guest: string; sponsor: string; requested_at: string; expires_at: string }[];
}

export interface StreamToken {
  token: string;
  expires_in: number;
}
