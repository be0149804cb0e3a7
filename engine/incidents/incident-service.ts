import { Errors } from '../errors.js';
import type { EventLog } from '../events/event-log.js';
import { newId } from '../ids.js';
import type { Pool } from '../store/postgres.js';
import type { Metrics } from '../metrics.js';

/** The states in order: an incident only moves forward, and `resolved` is the end. */
export const INCIDENT_STATES = ['pending', 'triaging', 'acknowledged', 'resolved'] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];

/** What the engine watches for (engine/incidents/incident-watch.ts). */
export const INCIDENT_KINDS = [
  'nas_silent', 'signin_failure_surge', 'error_rate_spike', 'audit_anchor_lag', 'audit_dead_letters', 'tsa_failure', 'otp_provider_failing',
  'signin_guessing',
] as const;
export type IncidentKind = (typeof INCIDENT_KINDS)[number];

export const INCIDENT_SEVERITIES = ['critical', 'warning', 'info'] as const;
export type IncidentSeverity = (typeof INCIDENT_SEVERITIES)[number];

/** An incident as the dashboard API shows it (docs/dashboard-api.md). */
export interface Incident {
  id: string;
  kind: IncidentKind;
  state: IncidentState;
  severity: IncidentSeverity;
  title: string;
  site_id: string | null;
  subject: string;
  details: Record<string, unknown>;
  opened_at: string;
  updated_at: string;
  resolved_at: string | null;
  resolved_by: string | null;
}

/** What a detector knows when it raises one. */
export interface IncidentReport {
  kind: IncidentKind;
  /** Within the kind, what it is about (a NAS id, 'outbox', a provider): one open incident per kind and subject. */
  subject: string;
  siteId: string | null;
  severity: IncidentSeverity;
  title: string;
  details: Record<string, unknown>;
}

/** `open` (pending, triaging or acknowledged), one state, or every incident. */
export type IncidentFilter = 'open' | IncidentState | undefined;

interface Row {
  id: string; kind: IncidentKind; state: IncidentState; severity: IncidentSeverity; title: string; site_id: string | null;
  subject: string; details: Record<string, unknown>; opened_at: Date; updated_at: Date; resolved_at: Date | null; resolved_by: string | null;
}

function toIncident(r: Row): Incident {
  return {
    id: r.id, kind: r.kind, state: r.state, severity: r.severity, title: r.title, site_id: r.site_id, subject: r.subject,
    details: r.details, opened_at: r.opened_at.toISOString(), updated_at: r.updated_at.toISOString(),
    resolved_at: r.resolved_at?.toISOString() ?? null, resolved_by: r.resolved_by,
  };
}

const OPEN_STATES = INCIDENT_STATES.filter((s) => s !== 'resolved');

/**
 * The tenant's incidents (table `incidents`, migration 015). Every engine
 * process runs the same detectors; the table's partial unique index makes a
 * raise idempotent, so a problem noticed by five processes is one incident,
 * and only the process whose insert won appends `incident.raised`.
 */
const INCIDENTS_METRIC = 'incidents_raised_total';

export class IncidentService {
  /** `metrics`: incidents raised, by kind (a fixed set; never the tenant): what the NAS-silent alert watches. */
  constructor(private readonly pool: Pool, private readonly events: EventLog, private readonly metrics?: Metrics) {
    metrics?.counter(INCIDENTS_METRIC, 'Incidents this process raised, by kind (nas_silent, ...)', 'kind');
  }

  /** Opens an incident unless one of this kind and subject is open; returns it when this call opened it, else null. */
  async raise(tenantId: string, r: IncidentReport): Promise<Incident | null> {
    const { rows } = await this.pool.query<Row>(
      `INSERT INTO incidents (id, tenant_id, kind, subject, site_id, severity, title, details)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (tenant_id, kind, subject) WHERE state <> 'resolved' DO NOTHING RETURNING *`,
      [newId('inc_'), tenantId, r.kind, r.subject, r.siteId, r.severity, r.title, JSON.stringify(r.details)]);
    const row = rows[0];
    if (!row) return null;
    this.metrics?.inc(INCIDENTS_METRIC, r.kind);
    const incident = toIncident(row);
    await this.events.append(tenantId, 'incident.raised', incident.site_id, { id: incident.id, kind: incident.kind, state: incident.state, severity: incident.severity });
    return incident;
  }

  /** Newest first. */
  async list(tenantId: string, state: IncidentFilter, limit: number): Promise<Incident[]> {
    const states: readonly string[] = state === 'open' ? OPEN_STATES : state ? [state] : INCIDENT_STATES;
    const { rows } = await this.pool.query<Row>(
      'SELECT * FROM incidents WHERE tenant_id = $1 AND state = ANY($2) ORDER BY opened_at DESC, id DESC LIMIT $3', [tenantId, states, limit]);
    return rows.map(toIncident);
  }

  /** Open incidents (pending, triaging or acknowledged): the overview's `incidents_open`. */
  async countOpen(tenantId: string): Promise<number> {
    const { rows } = await this.pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM incidents WHERE tenant_id = $1 AND state <> 'resolved'", [tenantId]);
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * The site (hotspot id, or null) of each open incident: their number is
   * `incidents_open`, their sites the sites' health. One query for both, read
   * through OpenIncidents' short cache by the dashboard.
   */
  async openSiteIds(tenantId: string): Promise<(string | null)[]> {
    const { rows } = await this.pool.query<{ site_id: string | null }>(
      "SELECT site_id FROM incidents WHERE tenant_id = $1 AND state <> 'resolved'", [tenantId]);
    return rows.map((r) => r.site_id);
  }

  /** The open incidents of one kind, for a detector that resolves them itself. */
  async openOfKind(tenantId: string, kind: IncidentKind): Promise<Incident[]> {
    const { rows } = await this.pool.query<Row>(
      "SELECT * FROM incidents WHERE tenant_id = $1 AND kind = $2 AND state <> 'resolved'", [tenantId, kind]);
    return rows.map(toIncident);
  }

  /**
   * When the last incident of this kind and subject was resolved (ms), or
   * null. Detectors of things that happened (dead letters, failed time-stamps)
   * count only what came after it: an operator's resolve is not undone by the
   * same old failures on the next round.
   */
  async lastResolved(tenantId: string, kind: IncidentKind, subject: string): Promise<number | null> {
    const { rows } = await this.pool.query<{ at: Date | null }>(
      "SELECT max(resolved_at) AS at FROM incidents WHERE tenant_id = $1 AND kind = $2 AND subject = $3 AND state = 'resolved'",
      [tenantId, kind, subject]);
    return rows[0]?.at?.getTime() ?? null;
  }

  /**
   * Moves an incident forward (any open state may skip to a later one).
   * 404 for an unknown id or another tenant's; 409 for a move backwards, in
   * place, or out of `resolved`. The check and the move are one UPDATE, so
   * two operators racing each other cannot both move it from the same state.
   */
  async transition(tenantId: string, id: string, to: IncidentState, actor: string): Promise<Incident> {
    const { rows } = await this.pool.query<Row>(
      `UPDATE incidents SET state = $3, updated_at = now(),
              resolved_at = CASE WHEN $3 = 'resolved' THEN now() END, resolved_by = CASE WHEN $3 = 'resolved' THEN $4 END
       WHERE tenant_id = $1 AND id = $2 AND array_position($5::text[], state) < array_position($5::text[], $3::text)
       RETURNING *`, [tenantId, id, to, actor, INCIDENT_STATES]);
    const row = rows[0];
    if (!row) {
      const found = await this.pool.query<{ state: string }>('SELECT state FROM incidents WHERE tenant_id = $1 AND id = $2', [tenantId, id]);
      const now = found.rows[0];
      if (!now) throw Errors.RECORD_NOT_FOUND('incident');
      throw Errors.INCIDENT_TRANSITION_INVALID(now.state, to);
    }
    return this.updated(tenantId, toIncident(row));
  }

  /** Resolves the open incident of this kind and subject, if any (a detector seeing the problem gone); returns it. */
  async resolveOpen(tenantId: string, kind: IncidentKind, subject: string, by: string): Promise<Incident | null> {
    const { rows } = await this.pool.query<Row>(
      `UPDATE incidents SET state = 'resolved', updated_at = now(), resolved_at = now(), resolved_by = $4
       WHERE tenant_id = $1 AND kind = $2 AND subject = $3 AND state <> 'resolved' RETURNING *`, [tenantId, kind, subject, by]);
    const row = rows[0];
    return row ? this.updated(tenantId, toIncident(row)) : null;
  }

  private async updated(tenantId: string, incident: Incident): Promise<Incident> {
    await this.events.append(tenantId, 'incident.updated', incident.site_id, { id: incident.id, kind: incident.kind, state: incident.state });
    return incident;
  }
}
