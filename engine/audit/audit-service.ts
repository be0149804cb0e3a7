import { maskUsername } from '../sessions/session-service.js';
import type { Pool } from '../store/postgres.js';
import { ChainVerifier, type ChainBreak } from './chain.js';
import { gapAfter, linkBefore, toLink, type AuditRow } from './chain-links.js';

/** The contract's audit chain record as the API shows it (see /v1/openapi.json), with its place in the chain. */
export interface ChainRecord {
  seq: number;
  event_type: string;
  timestamp: string;
  session_id: string | null;
  mac_address: string | null;
  ip_address: string | null;
  username: string | null;
  auth_method: string | null;
  ssid: string | null;
  hotspot_id: string | null;
  details: Record<string, unknown>;
  prev_hash: string;
  hash_chain_value: string;
}

export interface VerifyResult {
  tenant_id: string;
  records: number;
  valid: boolean;
  first_break: ChainBreak | null;
}

/** Reading and verifying a tenant's audit chain from Postgres. */
export class AuditService {
  constructor(private readonly pool: Pool) {}

  /**
   * A page of the tenant's records of one UTC day in chain order (after the
   * record `cursor` names, a seq), and whether they verify, linked to the
   * record before the page. The page that ends the day is also checked
   * against what follows it. One more row than asked for is read, to know
   * whether another page follows. Guests' identities are masked as every API
   * answer masks them (maskUsername) unless `unmasked`, which the caller
   * grants to the admin and compliance roles only; the chain is verified on
   * the clear values.
   */
  async day(tenantId: string, date: string, opts: { limit?: number; cursor?: string; unmasked?: boolean } = {}): Promise<{
    date: string; records: ChainRecord[]; count: number; chain_valid: boolean; first_break: ChainBreak | null; next_cursor: string | null;
  }> {
    const limit = opts.limit ?? 1000;
    const after = opts.cursor === undefined ? 0 : Number(opts.cursor);
    const { rows: read } = await this.pool.query<AuditRow>(
      'SELECT * FROM audit_records WHERE tenant_id = $1 AND day = $2 AND seq > $3 ORDER BY seq LIMIT $4', [tenantId, date, after, limit + 1]);
    const more = read.length > limit;
    const rows = more ? read.slice(0, limit) : read;
    const v = new ChainVerifier(rows[0] ? await linkBefore(this.pool, tenantId, Number(rows[0].seq)) : null);
    for (const r of rows) if (!v.push(toLink(r))) break;
    // As the 5651 summary and the evidence pack check a day: also against what follows it.
    const last = rows[rows.length - 1];
    const firstBreak = v.firstBreak ?? (last && !more ? await gapAfter(this.pool, tenantId, Number(last.seq)) : null);
    return {
      date, count: rows.length, chain_valid: firstBreak === null, first_break: firstBreak, next_cursor: more && last ? String(last.seq) : null,
      records: rows.map((r) => ({
        seq: Number(r.seq), event_type: r.event_type, timestamp: r.ts.toISOString(), session_id: r.session_id,
        mac_address: r.mac_address, ip_address: r.ip_address, username: opts.unmasked ? r.username : maskUsername(r.username), auth_method: r.auth_method,
        ssid: r.ssid, hotspot_id: r.hotspot_id, details: r.details, prev_hash: r.prev_hash, hash_chain_value: r.hash_chain_value,
      })),
    };
  }

  /**
   * Recomputes the chain over a day range (whole chain when open), in pages,
   * and names the first record that breaks it.
   */
  async verify(tenantId: string, from?: string, to?: string): Promise<VerifyResult> {
    const lo = from ?? '0001-01-01';
    const hi = to ?? '9999-12-31';
    // The head is read before the records: every record up to it was committed with it, so all
    // of them must be found; records a sink appends meanwhile come after it and are checked too.
    // (Read after them, a record appended in between looked like one missing at the end.)
    const head = to ? undefined : (await this.pool.query<{ seq: number }>('SELECT seq FROM audit_chain_heads WHERE tenant_id = $1', [tenantId])).rows[0];
    let v: ChainVerifier | null = null;
    let after = 0;
    for (;;) {
      const { rows } = await this.pool.query<AuditRow>(
        `SELECT * FROM audit_records WHERE tenant_id = $1 AND day BETWEEN $2 AND $3 AND seq > $4 ORDER BY seq LIMIT 5000`,
        [tenantId, lo, hi, after]);
      if (rows.length === 0) break;
      v ??= new ChainVerifier(await linkBefore(this.pool, tenantId, Number(rows[0]!.seq)));
      for (const r of rows) if (!v.push(toLink(r))) break;
      if (v.firstBreak) break;
      after = Number(rows[rows.length - 1]!.seq);
    }
    // Records missing at the very end are seen against the head.
    if (v && !v.firstBreak && !to) {
      if (head && Number(head.seq) > after) {
        v.firstBreak = { seq: after + 1, id: '', problem: 'sequence_gap', detail: `chain head is at seq ${head.seq}, records end at ${after}` };
      } else {
        // Records past the head as it is now were never appended by a sink (which moves the head with them).
        const now = (await this.pool.query<{ seq: number }>('SELECT seq FROM audit_chain_heads WHERE tenant_id = $1', [tenantId])).rows[0];
        if (now && Number(now.seq) < after) {
          v.firstBreak = { seq: Number(now.seq) + 1, id: '', problem: 'sequence_gap', detail: `records go on to seq ${after}, past the chain head at ${now.seq}` };
        }
      }
    }
    return { tenant_id: tenantId, records: v?.count ?? 0, valid: !v?.firstBreak, first_break: v?.firstBreak ?? null };
  }
}
