import { GENESIS, link } from './chain.js';
import { copyField, copyInto, copyLine, copyText, type Pool, type PoolClient } from '../store/postgres.js';
import { isoTime } from '../util/iso-time.js';

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
  /**
   * Not looked up among the stored records: the caller knows better (a
   * session start, stored only with its session row, whose insert in the
   * same transaction says whether it was stored; one that was is left out of
   * ChainAppend.link).
   */
  unstored?: boolean;
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
 * A batch takes at most five statements whatever the number of tenants in
 * it: heads created and locked (in tenant order, so two sinks never wait on
 * each other in a cycle), stored ids looked up (storedIds; skipped when every
 * entry is known unstored), records inserted, heads moved.
 *
 * A record's partition day is its timestamp's UTC day, or the day of the
 * record before it in the chain when that is later (fileDay): records reach
 * the chain a little out of time order (two consumers, two threads' clocks),
 * and a day must hold one unbroken stretch of the chain for its own check.
 */
export async function appendToChains(c: PoolClient, entries: AuditEntry[]): Promise<number> {
  const append = await ChainAppend.lock(c, entries);
  append.link();
  return append.store();
}

type Head = { tenant_id: string; seq: number; hash: string; day: string | null };

/**
 * appendToChains in three steps, for a caller with other work in the same
 * transaction (the outbox sink): lock() takes the chains' heads and looks up
 * the entries already stored; link() computes the records (synchronous, so
 * it can run while a statement of the caller's is in Postgres, and again
 * when the caller learns that some entries are not to be appended after
 * all); store() writes them and moves the heads.
 */
export class ChainAppend {
  private rows = '';
  private appended = 0;
  private moved: { tenant: string; seq: number; hash: string; day: string }[] = [];

  private constructor(
    private readonly c: PoolClient,
    /** Each tenant's entries with their timestamps as the chain writes them (ISO 8601, computed once). */
    private readonly byTenant: Map<string, { e: AuditEntry; timestamp: string }[]>,
    private readonly tenants: string[],
    private readonly heads: Map<string, Head>,
    private readonly stored: Set<string>,
  ) {}

  static async lock(c: PoolClient, entries: AuditEntry[]): Promise<ChainAppend> {
    const byTenant = new Map<string, { e: AuditEntry; timestamp: string }[]>();
    for (const e of entries) {
      let list = byTenant.get(e.tenant_id);
      if (!list) byTenant.set(e.tenant_id, (list = []));
      list.push({ e, timestamp: isoTime(e.ts) });
    }
    const tenants = [...byTenant.keys()].sort();
    if (tenants.length === 0) return new ChainAppend(c, byTenant, tenants, new Map(), new Set());
    await c.query(
      'INSERT INTO audit_chain_heads (tenant_id, seq, hash) SELECT t, 0, $2 FROM unnest($1::text[]) AS t ON CONFLICT DO NOTHING',
      [tenants, GENESIS]);
    // ORDER BY with FOR UPDATE locks the rows in that order.
    const heads = new Map((await c.query<Head>(
      'SELECT tenant_id, seq, hash, day::text AS day FROM audit_chain_heads WHERE tenant_id = ANY($1) ORDER BY tenant_id FOR UPDATE',
      [tenants])).rows.map((h) => [h.tenant_id, h]));
    return new ChainAppend(c, byTenant, tenants, heads, await storedIds(c, byTenant, heads));
  }

  /** Links the entries not stored already, and not left out by `leaveOut`, after their chains' heads. */
  link(leaveOut?: (e: AuditEntry) => boolean): void {
    const seen = new Set(this.stored);
    const latest = dayOf(Date.now() + DAY_MS);
    const rows: string[] = [];
    let appended = 0;
    const moved: { tenant: string; seq: number; hash: string; day: string }[] = [];
    for (const tenant of this.tenants) {
      const head = this.heads.get(tenant)!;
      let seq = Number(head.seq);
      let prev = head.hash;
      let day = head.day ?? '';
      for (const { e, timestamp } of this.byTenant.get(tenant)!) {
        const key = `${tenant} ${e.id}`;
        if (seen.has(key) || leaveOut?.(e)) continue;
        seen.add(key);
        seq++;
        day = fileDay(timestamp.slice(0, 10), day, latest);
        const hash = link(prev, {
          tenant_id: tenant, seq, event_type: e.event_type, timestamp,
          session_id: e.session_id, mac_address: e.mac_address, ip_address: e.ip_address, username: e.username,
          auth_method: e.auth_method, ssid: e.ssid, hotspot_id: e.hotspot_id, details: e.details,
        });
        // In AUDIT_COLUMNS order; the record's absent text fields ("" in its link) are NULL in their columns.
        rows.push(copyLine([
          copyField(tenant), seq, copyField(e.id), copyField(e.event_type), timestamp, copyField(e.session_id || null),
          copyField(e.mac_address || null), copyField(e.ip_address || null), copyField(e.username || null),
          copyField(e.auth_method || null), copyField(e.ssid || null), copyField(e.hotspot_id || null),
          copyField(JSON.stringify(e.details)), prev, hash, day,
        ]));
        appended++;
        prev = hash;
      }
      if (seq !== Number(head.seq)) moved.push({ tenant, seq, hash: prev, day });
    }
    this.rows = copyText(rows);
    this.appended = appended;
    this.moved = moved;
  }

  /** Writes what link() computed and moves the heads; returns the number of records appended. */
  async store(): Promise<number> {
    if (this.appended === 0) return 0;
    const moved = this.moved;
    await copyInto(this.c, 'audit_records', AUDIT_COLUMNS, this.rows);
    await this.c.query(
      `UPDATE audit_chain_heads h SET seq = m.seq, hash = m.hash, day = m.day, updated_at = now()
       FROM unnest($1::text[], $2::bigint[], $3::text[], $4::date[]) AS m(tenant_id, seq, hash, day) WHERE h.tenant_id = m.tenant_id`,
      [moved.map((m) => m.tenant), moved.map((m) => m.seq), moved.map((m) => m.hash), moved.map((m) => m.day)]);
    return this.appended;
  }
}

const AUDIT_COLUMNS = ['tenant_id', 'seq', 'id', 'event_type', 'ts', 'session_id', 'mac_address', 'ip_address', 'username',
  'auth_method', 'ssid', 'hotspot_id', 'details', 'prev_hash', 'hash_chain_value', 'day'] as const;

/**
 * The "tenant id" keys of the entries already stored (a redelivery), looked
 * up by id alone (audit_records_by_id: one probe an id; ids are unique across
 * tenants, and the match is kept only for its own tenant). A stored record
 * lies between its own timestamp's day and its chain's head day (fileDay), so
 * it is found in that range: a partition or two, not every day kept for two
 * years. Entries marked unstored are not looked up.
 */
async function storedIds(c: PoolClient, byTenant: Map<string, { e: AuditEntry; timestamp: string }[]>,
  heads: Map<string, Head>): Promise<Set<string>> {
  const latest = dayOf(Date.now() + DAY_MS);
  const ids: string[] = [];
  let lo = '9999-12-31';
  let hi = '0000-01-01';
  for (const list of byTenant.values()) {
    for (const { e, timestamp } of list) {
      if (e.unstored) continue;
      ids.push(e.id);
      const d = timestamp.slice(0, 10);
      if (d < lo) lo = d;
      if (d > hi) hi = d;
    }
  }
  if (ids.length === 0) return new Set();
  for (const h of heads.values()) if (h.day && h.day <= latest && h.day > hi) hi = h.day;
  // One index probe an id, forced: for `id = ANY($1)` with a batch's 2,000 ids, or a join, the
  // planner chose a scan of the whole day's partition whenever its statistics were stale (a day's
  // partition is young all day): a cost that grew with the day, where the probes cost the same all
  // day (measured by hand: dea6648's message). OFFSET 0 keeps the LATERAL subquery from being
  // turned into a join.
  const { rows } = await c.query<{ tenant_id: string; id: string }>(
    `SELECT a.tenant_id, a.id FROM unnest($1::text[]) AS t(id)
     CROSS JOIN LATERAL (SELECT tenant_id, id FROM audit_records a WHERE a.id = t.id AND a.day BETWEEN $2::date AND $3::date OFFSET 0) a`,
    [ids, lo, hi]);
  const stored = new Set<string>();
  for (const r of rows) if (byTenant.has(r.tenant_id)) stored.add(`${r.tenant_id} ${r.id}`);
  return stored;
}

const DAY_MS = 86_400_000;

/**
 * The partition day of a record whose timestamp falls on `own`, after a
 * record filed under `before` ('' for none): the later of the two, so days
 * never go back along a chain. A `before` past `latest` (tomorrow by this
 * clock: a record with a timestamp from a broken clock) is not followed, or
 * one such record would carry every later one into a day far ahead.
 */
export function fileDay(own: string, before: string, latest: string): string {
  return before > own && before <= latest ? before : own;
}

/**
 * The days whose partitions a batch of records with these timestamps may be
 * filed under: their own days, and today and tomorrow, where an earlier
 * record may have moved its chain's day (fileDay).
 */
export function daysToFile(timestamps: Iterable<number>, now = Date.now()): Set<string> {
  // Day numbers first: a batch's thousands of timestamps fall on a day or two, each formatted once.
  const numbers = new Set([Math.floor(now / DAY_MS), Math.floor(now / DAY_MS) + 1]);
  for (const ts of timestamps) numbers.add(Math.floor(ts / DAY_MS));
  return new Set([...numbers].map((n) => dayOf(n * DAY_MS)));
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
