import { ChainAppend, type AuditEntry } from '../audit/chain-writer.js';
import { RECORD } from '../redis/records.js';
import { storable, type OutboxFields } from './outbox-record.js';
import { isoTime } from '../util/iso-time.js';
import { copyField, copyInto, copyLine, copyText, type PoolClient } from './postgres.js';
import { ENDED_RETURNING, rollEndsOf, rollStarts, type RolledStart } from './report-rollups.js';
import { rollGuests } from './report-guests.js';

/** One outbox entry: its tenant and its record's fields. */
export interface OutboxRecord {
  tenant: string;
  f: OutboxFields;
}

/**
 * Writes a batch of outbox records in one transaction (the caller's): the
 * data tables and the audit events (auditEntriesOf) into their chains.
 * Every insert is keyed by an id derived from the record, and every update is
 * guarded by the row's state, so a batch delivered twice changes nothing the
 * second time. Records are applied by kind in stream order: starts before
 * extensions before ends, which is also their order within one session.
 * A start is a `session_start` record, or a `voucher_use` queued by a
 * version before the method-neutral start (a rolling upgrade), stored alike.
 *
 * The chains' heads are locked first, so one tenant's batches (two consumers
 * with the same records, say) go through here one after the other. The
 * records are linked into their chains while the session rows are being
 * inserted; a start whose row was there already (a redelivery) is then left
 * out and the links computed again, which is rare.
 */
export async function writeOutbox(c: PoolClient, records: OutboxRecord[], audit: AuditEntry[]): Promise<{ written: number; counters: VoucherCount[] }> {
  let written = 0;
  const counters: VoucherCount[] = [];
  const of = (type: string, legacy?: string): OutboxRecord[] => records.filter((r) => r.f.type === type || (legacy !== undefined && r.f.type === legacy));
  const col = (rs: OutboxRecord[], name: string): (string | null)[] => rs.map((r) => r.f[name] || null);
  const tenants = (rs: OutboxRecord[]): string[] => rs.map((r) => r.tenant);

  const uses = of(RECORD.sessionStart, RECORD.legacyVoucherUse);
  // A session's start record (auditEntriesOf names it <session>:start) is stored with its
  // session row and only with it: whether it is stored already, that row's insert says, so it
  // needs no lookup (AuditEntry.unstored).
  const isStart = (e: AuditEntry): boolean =>
    e.id.length === e.session_id.length + 6 && e.id.endsWith(':start') && e.id.startsWith(e.session_id);
  for (const e of audit) if (isStart(e)) e.unstored = true;
  const chain = await ChainAppend.lock(c, audit);
  if (uses.length === 0) chain.link();
  else {
    // The session row is the start's durable record (voucher_uses is a view of the rows with a
    // voucher), and only rows actually inserted count towards a voucher: a redelivered batch counts nothing.
    const inserting = insertStarts(c, uses);
    // Awaited below; until then its failure must not count as unhandled (link() could throw first).
    inserting.catch(() => undefined);
    chain.link(); // while Postgres inserts the rows
    const rows = await inserting;
    const started = new Set<string>();
    for (const r of rows) started.add(r.id);
    if (audit.some((e) => isStart(e) && !started.has(e.session_id))) chain.link((e) => isStart(e) && !started.has(e.session_id));
    written += rows.length;
    const rolled = startsInserted(uses, started);
    await rollStarts(c, rolled);
    await rollGuests(c, rolled);
    const counts = new Map<string, number>();
    for (const r of rows) if (r.voucher_id) counts.set(r.voucher_id, (counts.get(r.voucher_id) ?? 0) + 1);
    if (counts.size > 0) {
      // Rows locked in id order first, so two consumers counting uses of the same vouchers never
      // deadlock (Postgres would abort one, and its whole batch would be written again).
      const ids = [...counts.keys()];
      await c.query('SELECT 1 FROM vouchers WHERE id = ANY($1) ORDER BY id FOR UPDATE', [ids]);
      const updated = await c.query<VoucherCount>(
        `UPDATE vouchers v SET current_uses = v.current_uses + t.n FROM unnest($1::text[], $2::int[]) AS t(id, n) WHERE v.id = t.id
         RETURNING v.tenant_id, v.id, v.code, v.current_uses AS uses`,
        [ids, [...counts.values()]]);
      counters.push(...updated.rows);
    }
  }

  const extensions = of(RECORD.sessionExtend);
  if (extensions.length > 0) {
    const params = [col(extensions, 'sid'), tenants(extensions), col(extensions, 'until')];
    // One row a session (the latest end asked for): an UPDATE joined to two would take either, and
    // the INSERT ... ON CONFLICT DO UPDATE below refuses to touch a row twice (SQLSTATE 21000).
    const extendsOf = `SELECT sid, tenant_id, max(to_timestamp(until::bigint / 1000.0)) AS until
       FROM unnest($1::text[], $2::text[], $3::text[]) AS t(sid, tenant_id, until) GROUP BY sid, tenant_id`;
    const moved = await c.query(
      `UPDATE sessions s SET ends_at = greatest(s.ends_at, t.until) FROM (${extendsOf}) t
       WHERE s.id = t.sid AND s.tenant_id = t.tenant_id AND s.ended_at IS NULL`, params);
    if ((moved.rowCount ?? 0) < extensions.length) {
      // Some matched no open row: the session has ended (nothing to extend), or its start is not
      // stored here yet, or was committed after the UPDATE's snapshot (as for ends below): wait.
      await c.query(
        `INSERT INTO session_extends_early (id, tenant_id, until)
         SELECT sid, tenant_id, until FROM (${extendsOf}) t
         WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = t.sid AND (s.ended_at IS NOT NULL OR s.ends_at >= t.until))
         ON CONFLICT (id) DO UPDATE SET until = greatest(session_extends_early.until, EXCLUDED.until)`, params);
    }
  }

  const ends = of(RECORD.sessionEnd);
  if (ends.length > 0) {
    const params = [col(ends, 'sid'), tenants(ends), col(ends, 'at'), col(ends, 'reason'), ends.map((r) => byteCount(r.f.bin)),
      ends.map((r) => byteCount(r.f.bout))];
    // One row a session, its first end in stream order: the one its chain keeps (<session>:end).
    const endsOf = `SELECT DISTINCT ON (sid) sid, tenant_id, to_timestamp(at::bigint / 1000.0) AS ended_at, reason AS end_reason,
         bin::bigint AS bytes_in, bout::bigint AS bytes_out
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS t(sid, tenant_id, at, reason, bin, bout, n)
       ORDER BY sid, n`;
    // The rows ended here, and only they, go into the rollups (report-rollups.ts): a redelivered end matches no open row.
    const ended = await c.query<{ n: number }>(
      `WITH ended AS (UPDATE sessions s SET ${END_SET('t')} FROM (${endsOf}) t WHERE s.id = t.sid AND s.tenant_id = t.tenant_id AND s.ended_at IS NULL
         RETURNING ${ENDED_RETURNING}), ${rollEndsOf('ended')}
       SELECT count(*)::int AS n FROM ended`, params);
    if ((ended.rows[0]?.n ?? 0) < ends.length) {
      // Some matched no open row: already ended (a redelivery: nothing to do), or not started yet
      // here. Only an end already applied is dropped. A start row that is merely present now may
      // have been committed by another consumer after the UPDATE above took its snapshot (READ
      // COMMITTED: each statement sees its own), so the UPDATE missed it and this statement sees
      // it open: such an end waits too, and applyWaiting applies it.
      await c.query(
        `INSERT INTO session_ends_early (id, tenant_id, ended_at, end_reason, bytes_in, bytes_out)
         SELECT sid, tenant_id, ended_at, end_reason, bytes_in, bytes_out FROM (${endsOf}) t
         WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = t.sid AND s.ended_at IS NOT NULL)
         ON CONFLICT (id) DO NOTHING`, params);
    }
  }
  return { written: written + (await chain.store()), counters };
}

/**
 * Inserts the session rows of a batch's starts; returns those actually
 * inserted (id and voucher, null for a start without one). Usually every row is new, and they go in by
 * COPY, which costs Postgres a fifth less than an INSERT of the same rows. A
 * use stored already (a batch delivered again after a crash between commit
 * and acknowledgement, or claimed from a consumer that died) makes the COPY
 * fail on the primary key: back at the savepoint, the rows then go in by
 * INSERT ... ON CONFLICT DO NOTHING, which says which of them were new.
 */
async function insertStarts(c: PoolClient, uses: OutboxRecord[]): Promise<{ id: string; voucher_id: string | null }[]> {
  const lines: string[] = [];
  for (const r of uses) {
    const f = r.f;
    lines.push(copyLine([
      copyField(f.sid || null), copyField(r.tenant), copyField(f.hs || null), copyField(f.mac || null), copyField(f.ip || null),
      copyField(f.user || null), copyField(f.method || 'voucher'), copyField(f.ssid || null), copyField(f.vid || null),
      timestampField(f.at), timestampField(f.until), copyField(f.dt || null),
    ]));
  }
  const rows = copyText(lines);
  const savepoint = c.query('SAVEPOINT starts');
  try {
    await Promise.all([savepoint, copyInto(c, 'sessions', SESSION_COLUMNS, rows)]);
    return uses.map((r) => ({ id: r.f.sid!, voucher_id: r.f.vid || null }));
  } catch (err) {
    await savepoint; // a failed SAVEPOINT is the transaction's failure, not a redelivery
    if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
    await c.query('ROLLBACK TO SAVEPOINT starts');
  }
  // One JSON parameter: serialised natively, where text arrays cost pg an escape per element.
  const starts = uses.map((r) => {
    const f = r.f;
    return {
      sid: f.sid || null, t: r.tenant, hs: f.hs || null, mac: f.mac || null, ip: f.ip || null,
      usr: f.user || null, m: f.method || null, ssid: f.ssid || null, vid: f.vid || null,
      at: f.at || null, until: f.until || null, dt: f.dt || null,
    };
  });
  const { rows: inserted } = await c.query<{ id: string; voucher_id: string | null }>(
    `INSERT INTO sessions (${SESSION_COLUMNS.join(', ')})
     SELECT sid, t, hs, mac, ip, usr, coalesce(m, 'voucher'), ssid, vid, to_timestamp(at / 1000.0), to_timestamp(until / 1000.0), dt
     FROM json_to_recordset($1::json) AS r(sid text, t text, hs text, mac text, ip text, usr text, m text, ssid text, vid text, at bigint, until bigint, dt text)
     ON CONFLICT (id) DO NOTHING
     RETURNING id, voucher_id`,
    [JSON.stringify(starts)]);
  return inserted;
}

/** The starts of `uses` whose rows were inserted (`started`), as the rollups count them. */
function startsInserted(uses: OutboxRecord[], started: ReadonlySet<string>): RolledStart[] {
  const out: RolledStart[] = [];
  for (const r of uses) {
    const f = r.f;
    if (!f.sid || !started.has(f.sid)) continue;
    out.push({ t: r.tenant, hs: f.hs ?? '', mac: f.mac ?? '', at: f.at ?? '', m: f.method || 'voucher', dt: f.dt ?? '', ssid: f.ssid ?? '', u: f.user ?? '' });
  }
  return out;
}

const SESSION_COLUMNS = ['id', 'tenant_id', 'hotspot_id', 'mac', 'ip', 'username', 'auth_method', 'ssid', 'voucher_id', 'started_at', 'ends_at', 'device_type'] as const;
const UNIQUE_VIOLATION = '23505';

/**
 * A time in ms (as a record carries it) as COPY's text for timestamptz. Text
 * that is not a whole number of ms is passed on as it is, for Postgres to
 * refuse as the INSERT's bigint cast does. (Years past 9999 differ: COPY
 * refuses the ISO text of one, to_timestamp stores it; no record has one.)
 */
function timestampField(ms: string | undefined): string {
  if (!ms) return '\\N';
  const t = /^-?\d{1,16}$/.test(ms) ? Number(ms) : NaN;
  return Math.abs(t) <= 8.64e15 ? isoTime(t) : copyField(ms);
}

/** A voucher's use count as Postgres holds it after a batch. */
export interface VoucherCount {
  tenant_id: string;
  id: string;
  code: string;
  uses: number;
}

/**
 * Applies waiting extensions and ends (session_extends_early,
 * session_ends_early) whose start is stored by now, extensions first. One
 * waits when its consumer found no open sessions row: the start was still
 * with another consumer, or in a transaction not yet committed. The sink runs
 * this every few seconds rather than with every start it inserts, which
 * would cost a statement per batch and still miss the second case. Cheap
 * when nothing waits (both tables are normally empty). Returns the rows ended.
 */
export async function applyWaiting(c: Pick<PoolClient, 'query'>): Promise<number> {
  await c.query(
    `WITH early AS (DELETE FROM session_extends_early e USING sessions s WHERE s.id = e.id AND s.tenant_id = e.tenant_id RETURNING e.*)
     UPDATE sessions s SET ends_at = greatest(s.ends_at, e.until) FROM early e WHERE s.id = e.id AND s.ended_at IS NULL`);
  const r = await c.query<{ n: number }>(
    `WITH early AS (DELETE FROM session_ends_early e USING sessions s WHERE s.id = e.id AND s.tenant_id = e.tenant_id RETURNING e.*),
     ended AS (UPDATE sessions s SET ${END_SET('e')} FROM early e WHERE s.id = e.id AND s.ended_at IS NULL RETURNING ${ENDED_RETURNING}),
     ${rollEndsOf('ended')}
     SELECT count(*)::int AS n FROM ended`);
  return r.rows[0]?.n ?? 0;
}

/** The columns a session end sets, from a row `e` with ended_at, end_reason, bytes_in and bytes_out. */
const END_SET = (e: string): string =>
  `status = CASE WHEN ${e}.end_reason IN ('admin_disconnect', 'blocked') THEN 'disconnected' ELSE 'ended' END,
   ended_at = ${e}.ended_at, end_reason = ${e}.end_reason,
   bytes_in = greatest(s.bytes_in, ${e}.bytes_in), bytes_out = greatest(s.bytes_out, ${e}.bytes_out)`;

/**
 * The audit events a batch carries, in stream order (the order they happened
 * in for one tenant): session start (and a voucher_use, the start as an
 * older version queued it), end and extension, and operator actions.
 */
export function auditEntriesOf(records: OutboxRecord[]): AuditEntry[] {
  // Built field by field, details with their keys already in sorted order (canonical() then
  // need not copy them): this runs for every record the sink stores.
  const out: AuditEntry[] = [];
  for (const r of records) {
    const f = r.f;
    const sid = field(f, 'sid');
    let id: string;
    let event: string;
    let details: Record<string, unknown>;
    let method = field(f, 'method');
    switch (f.type) {
      case RECORD.sessionStart:
      case RECORD.legacyVoucherUse: {
        id = `${sid}:start`;
        event = 'session_start';
        method ||= 'voucher';
        const vid = field(f, 'vid');
        // A start without a voucher (an OTP code) has no voucher_id at all, rather than an empty one.
        details = vid || f.type === RECORD.legacyVoucherUse ? { until: iso(field(f, 'until')), voucher_id: vid } : { until: iso(field(f, 'until')) };
        break;
      }
      case RECORD.sessionExtend:
        id = `${sid}:extend:${field(f, 'until')}`;
        event = 'session_extend';
        details = { by: field(f, 'by') || null, minutes: Number(field(f, 'minutes')), until: iso(field(f, 'until')) };
        break;
      case RECORD.sessionEnd:
        id = `${sid}:end`;
        event = 'session_end';
        details = {
          by: field(f, 'by') || null, bytes_in: Number(byteCount(f.bin)), bytes_out: Number(byteCount(f.bout)),
          reason: field(f, 'reason'),
        };
        break;
      case RECORD.audit:
        id = field(f, 'rid');
        event = field(f, 'event');
        details = { ...detailsOf(field(f, 'details')), by: field(f, 'by') || null };
        break;
      default:
        continue;
    }
    out.push({
      tenant_id: r.tenant, id, event_type: event, ts: Number(field(f, 'at')), session_id: sid, mac_address: field(f, 'mac'),
      ip_address: field(f, 'ip'), username: field(f, 'user'), auth_method: method, ssid: field(f, 'ssid'), hotspot_id: field(f, 'hs'),
      details,
    });
  }
  return out;
}

function field(f: OutboxFields, name: string): string {
  return f[name] ?? '';
}

/** An operator event's details, storable; a details field that is not a JSON object is kept as text. */
function detailsOf(json: string): object {
  if (!json) return {};
  try {
    const v: unknown = JSON.parse(json, (_k, x: unknown) => (typeof x === 'string' ? storable(x) : x));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { unparsed: storable(json) };
  }
}

/**
 * A byte counter as the sessions row and the end record both store it: a
 * whole number from 0 to 2^53 - 1. Anything else a counter could hold after
 * a bug or a NAS's nonsense (a float in exponent form, a negative) is
 * clamped, so the session's end is recorded rather than refused.
 */
export function byteCount(text: string | undefined): string {
  if (text && /^\d{1,15}$/.test(text)) return text;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) return '0';
  return String(Math.min(Math.floor(n), Number.MAX_SAFE_INTEGER));
}

function iso(ms: string): string | null {
  return ms ? isoTime(Number(ms)) : null;
}
