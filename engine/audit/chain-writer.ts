import { GENESIS, link } from './chain.js';
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
 *
 * A batch takes five statements whatever the number of tenants in it: heads
 * created and locked (in tenant order, so two sinks never wait on each
 * other in a cycle), stored ids looked up, records inserted, heads moved.
 */
export async function appendToChains(c: PoolClient, entries: AuditEntry[]): Promise<number> {
  if (entries.length === 0) return 0;
  const byTenant = new Map<string, AuditEntry[]>();
  const days = new Set<string>();
  const ids: string[] = [];
  for (const e of entries) {
    let list = byTenant.get(e.tenant_id);
    if (!list) byTenant.set(e.tenant_id, (list = []));
    list.push(e);
    days.add(dayOf(e.ts));
    ids.push(e.id);
  }
  const tenants = [...byTenant.keys()].sort();
  await c.query(
    'INSERT INTO audit_chain_heads (tenant_id, seq, hash) SELECT t, 0, $2 FROM unnest($1::text[]) AS t ON CONFLICT DO NOTHING',
    [tenants, GENESIS]);
  // ORDER BY with FOR UPDATE locks the rows in that order.
  const heads = new Map((await c.query<{ tenant_id: string; seq: number; hash: string }>(
    'SELECT tenant_id, seq, hash FROM audit_chain_heads WHERE tenant_id = ANY($1) ORDER BY tenant_id FOR UPDATE',
    [tenants])).rows.map((h) => [h.tenant_id, h]));
  // A record's day comes from its own timestamp, so a redelivered record lies in the same day's
  // partition: looking only there keeps this lookup to a partition or two instead of probing
  // every day kept for two years. The query may also match an id of another tenant of the
  // batch; the pair check below keeps only exact (tenant, id) matches.
  const seen = new Set((await c.query<{ tenant_id: string; id: string }>(
    'SELECT tenant_id, id FROM audit_records WHERE tenant_id = ANY($1) AND day = ANY($2::date[]) AND id = ANY($3)',
    [tenants, [...days], ids])).rows.map((r) => `${r.tenant_id} ${r.id}`));

  const rows: Record<string, unknown>[] = [];
  const moved: { tenant: string; seq: number; hash: string }[] = [];
  for (const tenant of tenants) {
    const head = heads.get(tenant)!;
    let seq = Number(head.seq);
    let prev = head.hash;
    for (const e of byTenant.get(tenant)!) {
      const key = `${tenant} ${e.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      seq++;
      const timestamp = new Date(e.ts).toISOString();
      const hash = link(prev, {
        tenant_id: tenant, seq, event_type: e.event_type, timestamp,
        session_id: e.session_id, mac_address: e.mac_address, ip_address: e.ip_address, username: e.username,
        auth_method: e.auth_method, ssid: e.ssid, hotspot_id: e.hotspot_id, details: e.details,
      });
      rows.push({
        t: tenant, seq, id: e.id, ev: e.event_type, ts: timestamp, sid: e.session_id, mac: e.mac_address, ip: e.ip_address,
        usr: e.username, am: e.auth_method, ssid: e.ssid, hs: e.hotspot_id, det: e.details, prev, hash, day: timestamp.slice(0, 10),
      });
      prev = hash;
    }
    if (seq !== Number(head.seq)) moved.push({ tenant, seq, hash: prev });
  }
  if (rows.length === 0) return 0;
  // One JSON parameter: serialised natively, where text arrays cost pg an escape per element.
  await c.query(
    `INSERT INTO audit_records (tenant_id, seq, id, event_type, ts, session_id, mac_address, ip_address, username,
       auth_method, ssid, hotspot_id, details, prev_hash, hash_chain_value, day)
     SELECT t, seq, id, ev, ts, nullif(sid, ''), nullif(mac, ''), nullif(ip, ''), nullif(usr, ''),
       nullif(am, ''), nullif(ssid, ''), nullif(hs, ''), det, prev, hash, day
     FROM json_to_recordset($1::json) AS r(t text, seq bigint, id text, ev text, ts timestamptz, sid text, mac text, ip text,
       usr text, am text, ssid text, hs text, det jsonb, prev text, hash text, day date)`,
    [JSON.stringify(rows)]);
  await c.query(
    `UPDATE audit_chain_heads h SET seq = m.seq, hash = m.hash, updated_at = now()
     FROM unnest($1::text[], $2::bigint[], $3::text[]) AS m(tenant_id, seq, hash) WHERE h.tenant_id = m.tenant_id`,
    [moved.map((m) => m.tenant), moved.map((m) => m.seq), moved.map((m) => m.hash)]);
  return rows.length;
}

/** The UTC day (its partition) of a time in ms. */
function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
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
      // A time no record of ours has (year 275760, say): the record is refused, not retried for ever.
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw new RangeError(`bad partition day ${day}`);
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

  /** Forgets every day: a partition we created is gone (a failover, a restore); ensure() creates it again. */
  forgetAll(): void {
    this.known.clear();
  }
}

export function partitionName(day: string): string {
  return `audit_records_${day.replace(/-/g, '')}`;
}
