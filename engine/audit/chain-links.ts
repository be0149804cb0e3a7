import type { Pool } from '../store/postgres.js';
import { GENESIS, type ChainBreak, type StoredLink } from './chain.js';

/** An audit_records row as pg reads it. */
export interface AuditRow {
  tenant_id: string; seq: number; id: string; event_type: string; ts: Date; session_id: string | null;
  mac_address: string | null; ip_address: string | null; username: string | null; auth_method: string | null;
  ssid: string | null; hotspot_id: string | null; details: Record<string, unknown>; prev_hash: string; hash_chain_value: string;
}

/** The row as the chain hashes it: absent values as empty strings, the time as ISO text. */
export function toLink(r: AuditRow): StoredLink {
  return {
    tenant_id: r.tenant_id, seq: Number(r.seq), id: r.id, event_type: r.event_type, timestamp: r.ts.toISOString(),
    session_id: r.session_id ?? '', mac_address: r.mac_address ?? '', ip_address: r.ip_address ?? '', username: r.username ?? '',
    auth_method: r.auth_method ?? '', ssid: r.ssid ?? '', hotspot_id: r.hotspot_id ?? '', details: r.details,
    prev_hash: r.prev_hash, hash_chain_value: r.hash_chain_value,
  };
}

/**
 * The link just before `seq`, to check a stretch of a tenant's chain that
 * starts at `seq`: GENESIS before seq 1, else the stored record. When that
 * record is missing, the walk may start at `seq` without it (null) only if
 * retention destroyed it: its seq is at or below the highest seq retention
 * dropped for the tenant. Anywhere else a missing record is a break, and
 * expecting it makes the walk report it.
 */
export async function linkBefore(pool: Pool, tenantId: string, seq: number): Promise<{ seq: number; hash: string } | null> {
  if (seq <= 1) return { seq: 0, hash: GENESIS };
  const { rows } = await pool.query<{ seq: number; hash_chain_value: string }>(
    'SELECT seq, hash_chain_value FROM audit_records WHERE tenant_id = $1 AND seq = $2', [tenantId, seq - 1]);
  if (rows[0]) return { seq: Number(rows[0].seq), hash: rows[0].hash_chain_value };
  const dropped = (await pool.query<{ through: string }>(
    'SELECT dropped_through_seq AS through FROM audit_retention_tenants WHERE tenant_id = $1', [tenantId])).rows[0];
  if (dropped && seq - 1 <= Number(dropped.through)) return null;
  return { seq: seq - 2, hash: 'missing' };
}

/**
 * Records deleted at the end of a day show no gap within the day. They do
 * against what follows: the chain head, or the next record, must come right
 * after the day's last record.
 */
export async function gapAfter(pool: Pool, tenantId: string, lastSeq: number): Promise<ChainBreak | null> {
  const head = (await pool.query<{ seq: number }>('SELECT seq FROM audit_chain_heads WHERE tenant_id = $1', [tenantId])).rows[0];
  if (!head || Number(head.seq) <= lastSeq) return null;
  const next = await pool.query('SELECT 1 FROM audit_records WHERE tenant_id = $1 AND seq = $2', [tenantId, lastSeq + 1]);
  if (next.rowCount) return null;
  return {
    seq: lastSeq + 1, id: '', problem: 'sequence_gap',
    detail: `record ${lastSeq + 1} is missing: the day ends at ${lastSeq} and the chain goes on to ${head.seq}`,
  };
}
