import { GENESIS, link, type ChainFields } from './chain.js';
import type { Pool, PoolClient } from '../store/postgres.js';

/** An audit event before it is linked into its tenant's chain. */
export interface AuditEntry {
  tenant_id: string;
  /** Derived from the event (e.g. `<session>:start`): a record delivered twice is stored once. */
  id: string;
  event_type: string;
  ts: number;
  session_id: string;
  mac_address: string;
  ip_address: string;
  username: string;
  auth_method: string;
  ssid: string;
  hotspot_id: string;
  details: Record<string, unknown>;
}

/**
 * Appends events to their tenants' chains inside the caller's transaction.
 *
 * The chain's single writer is whoever holds its head row lock (SELECT ...
 * FOR UPDATE): appends to one chain are serialised however many sink
 * processes run, so sequence numbers are gap-free and each link is computed
 * from the true previous one. Events already stored (same id) are skipped
 * before linking, so redelivery never consumes a sequence number.
 * The days' partitions must exist already (PartitionCache.ensure, outside
 * the transaction). Returns the number of records appended.
 */
export async function appendToChains(c: PoolClient, entries: AuditEntry[]): Promise<number> {
  const byTenant = new Map<string, AuditEntry[]>();
  for (const e of entries) byTenant.set(e.tenant_id, [...(byTenant.get(e.tenant_id) ?? []), e]);
  let appended = 0;
  // Sorted, so two sinks locking several heads never wait on each other in a cycle.
  for (const tenant of [...byTenant.keys()].sort()) {
    const list = byTenant.get(tenant)!;
    await c.query(`INSERT INTO audit_chain_heads (tenant_id, seq, hash) VALUES ($1, 0, $2) ON CONFLICT DO NOTHING`, [tenant, GENESIS]);
    const head = (await c.query<{ seq: number; hash: string }>(
      'SELECT seq, hash FROM audit_chain_heads WHERE tenant_id = $1 FOR UPDATE', [tenant])).rows[0]!;
    const seen = new Set((await c.query<{ id: string }>(
      'SELECT id FROM audit_records WHERE tenant_id = $1 AND id = ANY($2)', [tenant, list.map((e) => e.id)])).rows.map((r) => r.id));
    let seq = Number(head.seq);
    let prev = head.hash;
    const rows: (ChainFields & { id: string; prev_hash: string; hash: string; day: string })[] = [];
    for (const e of list) {
      if (seen.has(e.id)) continue;
      seen.add(e.id);
      seq++;
      const f: ChainFields = {
        tenant_id: tenant, seq, event_type: e.event_type, timestamp: new Date(e.ts).toISOString(),
        session_id: e.session_id, mac_address: e.mac_address, ip_address: e.ip_address, username: e.username,
        auth_method: e.auth_method, ssid: e.ssid, hotspot_id: e.hotspot_id, details: e.details,
      };
      const hash = link(prev, f);
      rows.push({ ...f, id: e.id, prev_hash: prev, hash, day: f.timestamp.slice(0, 10) });
      prev = hash;
    }
    if (rows.length === 0) continue;
    const col = <K extends keyof (typeof rows)[number]>(k: K): (typeof rows)[number][K][] => rows.map((r) => r[k]);
    await c.query(
      `INSERT INTO audit_records (tenant_id, seq, id, event_type, ts, session_id, mac_address, ip_address, username,
         auth_method, ssid, hotspot_id, details, prev_hash, hash_chain_value, day)
       SELECT $1, seq, id, ev, ts::timestamptz, nullif(sid, ''), nullif(mac, ''), nullif(ip, ''), nullif(usr, ''),
         nullif(am, ''), nullif(ssid, ''), nullif(hs, ''), det::jsonb, prev, hash, day::date
       FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
         $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[], $16::text[])
         AS t(seq, id, ev, ts, sid, mac, ip, usr, am, ssid, hs, det, prev, hash, day)`,
      [tenant, col('seq'), col('id'), col('event_type'), col('timestamp'), col('session_id'), col('mac_address'),
        col('ip_address'), col('username'), col('auth_method'), col('ssid'), col('hotspot_id'),
        rows.map((r) => JSON.stringify(r.details)), col('prev_hash'), col('hash'), col('day')]);
    await c.query('UPDATE audit_chain_heads SET seq = $2, hash = $3, updated_at = now() WHERE tenant_id = $1', [tenant, seq, prev]);
    appended += rows.length;
  }
  return appended;
}

/**
 * Creates each UTC day's partition once per process, on its own connection
 * and outside any chain transaction (so no chain lock is held while the
 * catalogue is changed). Two processes racing to create one day are harmless.
 */
export class PartitionCache {
  private readonly known = new Set<string>();

  async ensure(pool: Pool, days: Iterable<string>): Promise<void> {
    for (const day of days) {
      if (this.known.has(day)) continue;
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new Error(`bad partition day ${day}`);
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      try {
        await pool.query(`CREATE TABLE IF NOT EXISTS ${partitionName(day)} PARTITION OF audit_records FOR VALUES FROM ('${day}') TO ('${next}')`);
      } catch (err) {
        // 42P07 duplicate_table / 23505 on the catalogue: another process created it first.
        const code = (err as { code?: string }).code;
        if (code !== '42P07' && code !== '23505') throw err;
      }
      this.known.add(day);
    }
  }

  forget(day: string): void {
    this.known.delete(day);
  }
}

export function partitionName(day: string): string {
  return `audit_records_${day.replace(/-/g, '')}`;
}
