import { Errors } from '../errors.js';
import { maskUsername } from '../sessions/session-service.js';
import type { Pool } from '../store/postgres.js';

/** An audit entry as the dashboard's timeline shows it (docs/dashboard-api.md, `audit`). */
export interface AuditEntry {
  id: string;
  event_type: string;
  timestamp: string;
  session_id: string | null;
  hotspot_id: string | null;
  mac_address: string | null;
  ip_address: string | null;
  /** Masked as the sessions API masks it (a phone number keeps its first and last digits). */
  username: string | null;
  auth_method: string | null;
  ssid: string | null;
  /** Who did it, for operator actions and operator-ended sessions ("<via>:<subject>"); null for a guest's own. */
  actor: string | null;
  hash_chain_value: string;
}

interface Row {
  id: string; event_type: string; ts: Date; session_id: string | null; hotspot_id: string | null; mac_address: string | null;
  ip_address: string | null; username: string | null; auth_method: string | null; ssid: string | null; actor: string | null;
  hash_chain_value: string;
}

const orNull = (v: string | null): string | null => (v ? v : null);

/**
 * The tenant's audit chain records, newest first, a page at a time. The
 * cursor is an entry's id: the next page starts below its (day, seq), the
 * order of the table's (tenant_id, day, seq) index and of its day
 * partitions, so a page reads the newest partitions only.
 */
export class AuditPages {
  constructor(private readonly pool: Pool) {}

  /** 400 validation_failed when `before` names no entry of the tenant. */
  async page(tenantId: string, limit: number, before?: string): Promise<{ data: AuditEntry[]; next_before: string | null }> {
    const args: unknown[] = [tenantId, limit];
    let below = '';
    if (before) {
      const { rows } = await this.pool.query<{ day: string; seq: string }>(
        "SELECT to_char(day, 'YYYY-MM-DD') AS day, seq FROM audit_records WHERE id = $1 AND tenant_id = $2", [before, tenantId]);
      const at = rows[0];
      if (!at) throw Errors.VALIDATION_FAILED('before names no audit entry of this tenant', [{ field: 'before', message: 'is not an audit entry id' }]);
      args.push(at.day, at.seq);
      below = 'AND (day, seq) < ($3::date, $4::bigint)';
    }
    const { rows } = await this.pool.query<Row>(
      `SELECT id, event_type, ts, session_id, hotspot_id, mac_address, ip_address, username, auth_method, ssid,
              details->>'by' AS actor, hash_chain_value
       FROM audit_records WHERE tenant_id = $1 ${below} ORDER BY day DESC, seq DESC LIMIT $2`, args);
    const data = rows.map((r) => ({
      id: r.id, event_type: r.event_type, timestamp: r.ts.toISOString(), session_id: orNull(r.session_id), hotspot_id: orNull(r.hotspot_id),
      mac_address: orNull(r.mac_address), ip_address: orNull(r.ip_address), username: maskUsername(orNull(r.username)),
      auth_method: orNull(r.auth_method), ssid: orNull(r.ssid), actor: orNull(r.actor), hash_chain_value: r.hash_chain_value,
    }));
    return { data, next_before: data.length === limit ? data[data.length - 1]!.id : null };
  }
}
