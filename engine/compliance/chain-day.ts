import type { StoredLink } from '../audit/chain.js';
import { toLink, type AuditRow } from '../audit/chain-links.js';
import type { Pool } from '../store/postgres.js';
import { PAGE_ROWS } from './access-log.js';

/**
 * A tenant's audit records of one UTC day in seq order, in keyset pages
 * (seq is an integer, so the page bound is exact). One partition is read.
 */
export async function* chainPages(pool: Pool, tenantId: string, day: string, pageRows = PAGE_ROWS): AsyncGenerator<StoredLink[]> {
  let after = -1;
  for (;;) {
    const { rows } = await pool.query<AuditRow>(
      `SELECT tenant_id, seq, id, event_type, ts, session_id, mac_address, ip_address, username, auth_method, ssid,
         hotspot_id, details, prev_hash, hash_chain_value
       FROM audit_records WHERE tenant_id = $1 AND day = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
      [tenantId, day, after, pageRows]);
    if (rows.length > 0) yield rows.map(toLink);
    if (rows.length < pageRows) return;
    after = Number(rows[rows.length - 1]!.seq);
  }
}

/**
 * One line of `chain/YYYY-MM-DD.jsonl`: the record's fields in the order of
 * docs/audit-chain.md, absent text as "". Everything the chain rule hashes is
 * here, so the file verifies with nothing else.
 */
export function chainLine(r: StoredLink): string {
  return JSON.stringify({
    tenant_id: r.tenant_id, seq: r.seq, event_type: r.event_type, timestamp: r.timestamp, session_id: r.session_id,
    mac_address: r.mac_address, ip_address: r.ip_address, username: r.username, auth_method: r.auth_method, ssid: r.ssid,
    hotspot_id: r.hotspot_id, details: r.details, prev_hash: r.prev_hash, hash_chain_value: r.hash_chain_value,
  }) + '\n';
}

export { gapAfter, linkBefore } from '../audit/chain-links.js';
