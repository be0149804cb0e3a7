import { Errors } from '../errors.js';
import { newId } from '../ids.js';
import type { Pool } from '../store/postgres.js';
import type { Subject, SubjectKind } from './subject.js';

export const REQUEST_TYPES = ['access', 'erasure', 'correction'] as const;
export type RequestType = (typeof REQUEST_TYPES)[number];
export const REQUEST_OUTCOMES = ['completed', 'rejected'] as const;
export type RequestOutcome = (typeof REQUEST_OUTCOMES)[number];

/** A data subject has 30 days for an answer (KVKK art. 13: at the latest thirty days; GDPR art. 12(3): one month). */
export const DUE_DAYS = 30;

/** A data-subject request as the API shows it: the subject masked, never in clear. */
export interface PrivacyRequest {
  id: string;
  type: RequestType;
  subject: { kind: SubjectKind; masked: string; ref: string };
  note: string | null;
  status: 'open' | 'closed';
  filed_at: string;
  due_at: string;
  overdue: boolean;
  closed_at: string | null;
  outcome: RequestOutcome | null;
  close_note: string | null;
  result: Record<string, unknown> | null;
}

interface Row {
  id: string; type: RequestType; subject_kind: SubjectKind; subject_value: string | null; subject_ref: string; subject_masked: string;
  note: string | null; status: 'open' | 'closed'; filed_at: Date; due_at: Date; closed_at: Date | null; outcome: RequestOutcome | null;
  close_note: string | null; result: Record<string, unknown> | null;
}

/** An open request with its subject in clear: what the engine acts on. */
export interface OpenRequest { view: PrivacyRequest; kind: SubjectKind; value: string }

const COLUMNS = 'id, type, subject_kind, subject_value, subject_ref, subject_masked, note, status, filed_at, due_at, closed_at, outcome, close_note, result';

/** Data-subject requests in Postgres (privacy_requests, migration 024). */
export class PrivacyRequestStore {
  constructor(private readonly pool: Pool, private readonly now: () => number) {}

  async file(tenantId: string, type: RequestType, s: Subject, note: string | null): Promise<PrivacyRequest> {
    const filed = this.now();
    const { rows } = await this.pool.query<Row>(
      `INSERT INTO privacy_requests (tenant_id, id, type, subject_kind, subject_value, subject_ref, subject_masked, note, filed_at, due_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING ${COLUMNS}`,
      [tenantId, newId('dsr_'), type, s.kind, s.value, s.ref, s.masked, note, new Date(filed), new Date(filed + DUE_DAYS * 86_400_000)]);
    return this.view(rows[0]!);
  }

  /** Newest first; `overdue`: open and past its due date. */
  async list(tenantId: string, f: { status?: 'open' | 'closed'; overdue?: boolean; limit: number }): Promise<PrivacyRequest[]> {
    const where = ['tenant_id = $1'];
    const args: unknown[] = [tenantId];
    if (f.status) { args.push(f.status); where.push(`status = $${args.length}`); }
    if (f.overdue !== undefined) {
      args.push(new Date(this.now()));
      where.push(f.overdue ? `status = 'open' AND due_at < $${args.length}` : `NOT (status = 'open' AND due_at < $${args.length})`);
    }
    args.push(f.limit);
    const { rows } = await this.pool.query<Row>(
      `SELECT ${COLUMNS} FROM privacy_requests WHERE ${where.join(' AND ')} ORDER BY filed_at DESC, id LIMIT $${args.length}`, args);
    return rows.map((r) => this.view(r));
  }

  async get(tenantId: string, id: string): Promise<PrivacyRequest> {
    return this.view(await this.row(tenantId, id));
  }

  /** The request, open, with its subject in clear; 409 privacy_request_closed once closed. */
  async open(tenantId: string, id: string): Promise<OpenRequest> {
    const r = await this.row(tenantId, id);
    if (r.status !== 'open' || r.subject_value === null) throw Errors.PRIVACY_REQUEST_CLOSED();
    return { view: this.view(r), kind: r.subject_kind, value: r.subject_value };
  }

  /** Closes it and forgets the subject's value (the ref and the masked form stay); 409 when closed already. */
  async close(tenantId: string, id: string, outcome: RequestOutcome, note: string | null, result: Record<string, unknown> | null): Promise<PrivacyRequest> {
    const { rows } = await this.pool.query<Row>(
      `UPDATE privacy_requests SET status = 'closed', subject_value = NULL, closed_at = $3, outcome = $4, close_note = $5, result = $6
       WHERE tenant_id = $1 AND id = $2 AND status = 'open' RETURNING ${COLUMNS}`,
      [tenantId, id, new Date(this.now()), outcome, note, result === null ? null : JSON.stringify(result)]);
    if (!rows[0]) { await this.row(tenantId, id); throw Errors.PRIVACY_REQUEST_CLOSED(); }
    return this.view(rows[0]);
  }

  /** Requests filed, closed and overdue for the summary: open now, overdue now, filed and closed within [from, to). */
  async counts(tenantId: string, from: Date, to: Date): Promise<{ open: number; overdue: number; filed: number; closed: number; closed_late: number }> {
    const { rows } = await this.pool.query<{ open: number; overdue: number; filed: number; closed: number; closed_late: number }>(
      `SELECT count(*) FILTER (WHERE status = 'open')::int AS open,
              count(*) FILTER (WHERE status = 'open' AND due_at < $4)::int AS overdue,
              count(*) FILTER (WHERE filed_at >= $2 AND filed_at < $3)::int AS filed,
              count(*) FILTER (WHERE closed_at >= $2 AND closed_at < $3)::int AS closed,
              count(*) FILTER (WHERE closed_at >= $2 AND closed_at < $3 AND closed_at > due_at)::int AS closed_late
       FROM privacy_requests WHERE tenant_id = $1`, [tenantId, from, to, new Date(this.now())]);
    return rows[0]!;
  }

  private async row(tenantId: string, id: string): Promise<Row> {
    const { rows } = await this.pool.query<Row>(`SELECT ${COLUMNS} FROM privacy_requests WHERE tenant_id = $1 AND id = $2`, [tenantId, id]);
    if (!rows[0]) throw Errors.PRIVACY_REQUEST_NOT_FOUND();
    return rows[0];
  }

  private view(r: Row): PrivacyRequest {
    return {
      id: r.id, type: r.type, subject: { kind: r.subject_kind, masked: r.subject_masked, ref: r.subject_ref }, note: r.note, status: r.status,
      filed_at: r.filed_at.toISOString(), due_at: r.due_at.toISOString(), overdue: r.status === 'open' && r.due_at.getTime() < this.now(),
      closed_at: r.closed_at?.toISOString() ?? null, outcome: r.outcome, close_note: r.close_note, result: r.result,
    };
  }
}
