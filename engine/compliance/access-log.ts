import type { Pool } from '../store/postgres.js';
import { csvCell } from '../util/csv-cell.js';

/** Rows per Postgres round trip: a page is a few hundred KB of CSV. */
export const PAGE_ROWS = 2000;
const DAY_MS = 86_400_000;

/** One session as the 5651 access log shows it. */
export interface AccessRow {
  id: string;
  hotspot_id: string;
  mac: string;
  ip: string | null;
  username: string | null;
  auth_method: string;
  started_at: Date;
  ends_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
}

const COLUMNS = 'id, hotspot_id, mac, ip, username, auth_method, started_at, ends_at, ended_at, end_reason';

/** The header of `logs/YYYY-MM-DD.csv` (docs/evidence-pack.md). */
export const ACCESS_LOG_HEADER = 'session_id,hotspot_id,hotspot_name,mac,ip,identity,auth_method,start,end,end_reason\r\n';

/**
 * A field: csvCell (RFC 4180 quoting, and a leading `'` on text a spreadsheet
 * would run as a formula). Values are otherwise never altered: this is the legal record.
 */
const field = csvCell;

/** One CSV line, CRLF-terminated (RFC 4180). The identity is unmasked: the log must name who was online. */
export function accessLogLine(r: AccessRow, hotspotName: string): string {
  return [
    field(r.id), field(r.hotspot_id), field(hotspotName), field(r.mac), field(r.ip), field(r.username), field(r.auth_method),
    r.started_at.toISOString(), r.ended_at ? r.ended_at.toISOString() : '', field(r.end_reason),
  ].join(',') + '\r\n';
}

/** When a session stops counting as online: its recorded end, or its planned end while none is recorded. */
export function effectiveEnd(r: AccessRow): number {
  return (r.ended_at ?? r.ends_at).getTime();
}

export function dayBounds(day: string): { start: Date; end: Date } {
  const start = new Date(`${day}T00:00:00.000Z`);
  return { start, end: new Date(start.getTime() + DAY_MS) };
}

/**
 * Reads a tenant's sessions by UTC day. A session belongs to every day it
 * overlaps: it started before the day's end and its effective end is after
 * the day's start (a session started within the day always belongs to it).
 *
 * Reading days in order, the sessions still running at the end of one day
 * are carried to the next instead of being searched for again: a stabbing
 * query per day would scan the tenant's history each time. The carry is
 * bounded by the sessions online at midnight. Sessions started in the day
 * come from a server-side cursor, a page at a time, so memory stays bounded
 * however busy the day was.
 */
export class AccessLog {
  private carry: AccessRow[] = [];
  private carryDay: string | null = null;

  constructor(private readonly pool: Pool, private readonly tenantId: string, private readonly pageRows = PAGE_ROWS) {}

  /** The day's sessions in (started_at, id) order, in pages. */
  async *day(day: string): AsyncGenerator<AccessRow[]> {
    const { start, end } = dayBounds(day);
    const carried = this.carryDay === day ? this.carry : await this.runningAt(start);
    const next: AccessRow[] = [];
    const keep = (rows: AccessRow[]): AccessRow[] => {
      for (const r of rows) if (effectiveEnd(r) > end.getTime()) next.push(r);
      return rows;
    };
    // Carried sessions all started before the day, so they precede the day's own in (started_at, id) order.
    for (let i = 0; i < carried.length; i += this.pageRows) yield keep(carried.slice(i, i + this.pageRows));
    for await (const page of this.startedIn(start, end)) yield keep(page);
    this.carry = next;
    this.carryDay = end.toISOString().slice(0, 10);
  }

  /** Sessions started before `at` and still running then. Few: those online at that instant. */
  private async runningAt(at: Date): Promise<AccessRow[]> {
    const { rows } = await this.pool.query<AccessRow>(
      `SELECT ${COLUMNS} FROM sessions
       WHERE tenant_id = $1 AND started_at < $2 AND coalesce(ended_at, ends_at) > $2
       ORDER BY started_at, id`, [this.tenantId, at]);
    return rows;
  }

  /**
   * A cursor rather than keyset pages: started_at has microseconds that a JS
   * Date cannot carry back into the next page's bound. The cursor's
   * read-only transaction lasts one day's file; leaving the loop early
   * (a cancelled export) closes it through `finally`.
   */
  private async *startedIn(start: Date, end: Date): AsyncGenerator<AccessRow[]> {
    const c = await this.pool.connect();
    let open = false;
    try {
      await c.query('BEGIN READ ONLY');
      open = true;
      await c.query(
        `DECLARE access_day NO SCROLL CURSOR FOR
         SELECT ${COLUMNS} FROM sessions WHERE tenant_id = $1 AND started_at >= $2 AND started_at < $3
         ORDER BY started_at, id`, [this.tenantId, start, end]);
      for (;;) {
        const { rows } = await c.query<AccessRow>(`FETCH ${this.pageRows} FROM access_day`);
        if (rows.length > 0) yield rows;
        if (rows.length < this.pageRows) break;
      }
      await c.query('COMMIT');
      open = false;
    } finally {
      if (open) await c.query('ROLLBACK').catch(() => undefined);
      c.release();
    }
  }
}
