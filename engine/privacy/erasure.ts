import type { RedisClient as Redis } from '../redis/redis-client.js';
import { AppError, Errors } from '../errors.js';
import { newId } from '../ids.js';
import { keys } from '../redis/keys.js';
import { publicSessionId, type SessionService } from '../sessions/session-service.js';
import { inTransaction, type Pool, type PoolClient } from '../store/postgres.js';
import { eraseVisitorKeys } from '../store/report-guests.js';
import { holdEnd } from './legal-holds.js';
import type { RedisPersonalData, RedisScrub } from './redis-personal-data.js';
import { namesAny, pseudonymise, wholeValuePatterns, type Subject, type SubjectKeys } from './subject.js';

/** What an erasure did, kept on the closed request: counts and the hold, never a value. */
export interface ErasureResult {
  identities: number;
  sessions_ended: number;
  hold: { id: string; held_until: string; sessions: number; audit_records: number } | null;
  blocks_lifted: number;
  incidents_rewritten: number;
  redis: RedisScrub;
}

/** How long an erasure waits for the subject's session records to reach Postgres before it gives up (503, nothing done). */
const SETTLE_MS = 20_000;
/** Outbox entries read per page while waiting for the subject's records to reach Postgres. */
const OUTBOX_PAGE = 1_000;
/** Identities one request covers at most: the subject and its own devices. */
const MAX_LINKED = 20;

/** The subject's identities as the stores hold them: a MAC's values, a phone's or e-mail's. */
export const macsOf = (subjects: Subject[]): string[] => subjects.filter((s) => s.kind === 'mac').map((s) => s.value);
export const usernamesOf = (subjects: Subject[]): string[] => subjects.filter((s) => s.kind !== 'mac').map((s) => s.value);

/**
 * The rows (sessions, audit records) that are the subject's own, as a condition on `$2` (the MACs)
 * and `$3` (the user names). When a MAC is the named subject, every row of that device (the device
 * is what the request is about; an export hides the other guests' identities in them). Otherwise the
 * rows whose user name is one of the subject's, and the rows on its own devices that name no other
 * guest (no user name, or one that is not a phone or e-mail: a voucher's, a room's): another guest
 * who signed in on a shared device keeps their rows, neither exported to nor erased for this subject.
 */
export const ownRows = (subjects: Subject[], mac: string, user: string, also = ''): string => (subjects[0]?.kind === 'mac'
  ? `(${mac} = ANY($2)${also} OR ${user} = ANY($3))`
  : `((${user} = ANY($3) OR ${mac} = ANY($2)${also}) AND (${user} IS NULL OR ${user} = ANY($3) OR (${user} NOT LIKE '%@%' AND ${user} !~ '^\\+?[0-9]{8,15}$')))`);

/**
 * Erasure of one data subject (docs/privacy.md). The subject's identities are the one named and,
 * for a phone or e-mail address, the devices it signed in from itself. Other guests' identities on
 * those devices are not followed: a shared phone or kiosk links no one else's data to the subject.
 *
 * 1. Live sessions end (admin_disconnect by the request): a guest who asks to be forgotten is not
 *    kept online under their identity; their end records are legal records like the rest.
 * 2. Once the subject's session records have all reached Postgres (the outbox holds none), the
 *    records Law 5651 requires are put under a legal hold: the session rows are marked with the
 *    hold's id; the audit chain's records stay as they are (a record cannot change without breaking
 *    the chain) and go with their day's partition; held_until is when the retention job no longer
 *    keeps the last of them, and it then pseudonymises the marked rows (each held row that reaches
 *    its own end of retention before that is expired as any other: the hold only stops early erasure).
 * 3. Everything else goes: blocks are lifted, incident details rewritten with the pseudonym, every
 *    Redis key, field and entry naming an identity (as a whole value) removed or rewritten.
 */
export class Erasure {
  constructor(
    private readonly pool: Pool, private readonly redis: Redis, private readonly sessions: SessionService,
    private readonly redisData: RedisPersonalData, private readonly subjectKeys: SubjectKeys, private readonly now: () => number,
  ) {}

  /**
   * The named subject and, for a phone or e-mail address, the devices (at most MAX_LINKED - 1) it
   * signed in from itself. A MAC is itself only: the guests who used the device are other subjects.
   */
  async linked(tenantId: string, s: Subject): Promise<Subject[]> {
    if (s.kind === 'mac') return [s];
    const { rows } = await this.pool.query<{ v: string }>(
      'SELECT DISTINCT mac AS v FROM sessions WHERE tenant_id = $1 AND username = $2 AND mac <> \'expired\' AND mac NOT LIKE \'erased-%\' ORDER BY mac LIMIT $3',
      [tenantId, s.value, MAX_LINKED - 1]);
    return [s, ...rows.map(({ v }) => this.subjectKeys.of(tenantId, 'mac', v))];
  }

  async erase(tenantId: string, subject: Subject, requestId: string, by: string): Promise<ErasureResult> {
    let subjects = await this.linked(tenantId, subject);
    await this.settle(tenantId, subjects, false);
    subjects = await this.linked(tenantId, subject);
    const sessionsEnded = await this.endLive(tenantId, subjects, by);
    await this.settle(tenantId, subjects, true);
    const pg = await inTransaction(this.pool, (c) => this.erasePostgres(c, tenantId, subjects, requestId));
    const redis: RedisScrub = await this.redisData.scrub(tenantId, subjects);
    await this.pool.query(`INSERT INTO privacy_deletions (tenant_id, at, kind, category, rows, ref) VALUES ($1, $2, 'erasure', 'redis', $3, $4)`,
      [tenantId, new Date(this.now()), redis.keys_deleted + redis.entries_removed + redis.values_pseudonymised, requestId]);
    return { identities: subjects.length, sessions_ended: sessionsEnded, ...pg, redis };
  }

  private async endLive(tenantId: string, subjects: Subject[], by: string): Promise<number> {
    const { rows } = await this.pool.query<{ id: string }>(
      `SELECT id FROM sessions WHERE tenant_id = $1 AND status = 'active' AND ${ownRows(subjects, 'mac', 'username')}`,
      [tenantId, macsOf(subjects), usernamesOf(subjects)]);
    let n = 0;
    for (const { id } of rows) {
      try {
        await this.sessions.disconnect(tenantId, publicSessionId(id), by);
        n++;
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'session_not_active')) throw err;
      }
    }
    return n;
  }

  /**
   * Waits until no record naming the subject waits in the tenant's outbox (and, after the live
   * sessions were ended, until Postgres no longer counts any of them active): the hold must see
   * every session row, and nothing may reach Postgres after the erasure with the identity in it.
   */
  private async settle(tenantId: string, subjects: Subject[], noneActive: boolean): Promise<void> {
    // Wall-clock time, not the engine's clock: this waits for other threads and processes, and a test's frozen clock would wait for ever.
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      const pending = await this.outboxNames(tenantId, subjects);
      const active = noneActive ? Number((await this.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM sessions WHERE tenant_id = $1 AND status = 'active' AND ${ownRows(subjects, 'mac', 'username')}`,
        [tenantId, macsOf(subjects), usernamesOf(subjects)])).rows[0]?.n ?? 0) : 0;
      if (!pending && active === 0) return;
      if (Date.now() > deadline) throw Errors.PRIVACY_ERASURE_BUSY();
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Whether any outbox entry names a subject: read to its end in pages (a long outbox hides nothing). */
  private async outboxNames(tenantId: string, subjects: Subject[]): Promise<boolean> {
    const names = namesAny(subjects);
    let start = '-';
    for (;;) {
      const page = await this.redis.xrange(keys.outbox(tenantId), start, '+', 'COUNT', OUTBOX_PAGE);
      if (page.some(([, fields]) => names(fields.join('\n')))) return true;
      if (page.length < OUTBOX_PAGE) return false;
      start = `(${page[page.length - 1]![0]}`;
    }
  }

  private async erasePostgres(c: PoolClient, tenantId: string, subjects: Subject[], requestId: string): Promise<Omit<ErasureResult, 'identities' | 'sessions_ended' | 'redis'>> {
    const macs = macsOf(subjects);
    const users = usernamesOf(subjects);
    const at = new Date(this.now());
    const holdId = newId('lgh_');
    const held = await c.query<{ last: Date }>(
      `UPDATE sessions SET legal_hold = $4 WHERE tenant_id = $1 AND ${ownRows(subjects, 'mac', 'username')} RETURNING started_at AS last`,
      [tenantId, macs, users, holdId]);
    const patterns = wholeValuePatterns(subjects);
    const audit = (await c.query<{ n: number; last: Date | null }>(
      `SELECT count(*)::int AS n, max(day)::timestamptz AS last FROM audit_records
       WHERE tenant_id = $1 AND ${ownRows(subjects, 'mac_address', 'username', ' OR details::text ~ ANY($4)')}`,
      [tenantId, macs, users, patterns])).rows[0]!;
    let hold: ErasureResult['hold'] = null;
    const lastMs = Math.max(0, ...held.rows.map((r) => r.last.getTime()), audit.last?.getTime() ?? 0);
    if (held.rowCount || audit.n > 0) {
      const until = holdEnd(lastMs);
      hold = { id: holdId, held_until: until.toISOString(), sessions: held.rowCount ?? 0, audit_records: audit.n };
      await c.query(
        `INSERT INTO legal_holds (tenant_id, id, request_id, subject_kind, subject_ref, reason, held, created_at, held_until)
         VALUES ($1, $2, $3, $4, $5, 'law_5651_access_log', $6, $7, $8)`,
        [tenantId, holdId, requestId, subjects[0]!.kind, subjects[0]!.ref,
          JSON.stringify({ sessions: hold.sessions, audit_records: hold.audit_records, identities: subjects.length, last_record_at: new Date(lastMs).toISOString() }), at, until]);
    }
    const blocks = await c.query('DELETE FROM blocks WHERE tenant_id = $1 AND mac = ANY($2)', [tenantId, macs]);
    const inc = await c.query<{ id: string; subject: string; details: unknown }>(
      'SELECT id, subject, details FROM incidents WHERE tenant_id = $1 AND (subject = ANY($2) OR details::text ~ ANY($3)) FOR UPDATE',
      [tenantId, [...macs, ...users], patterns]);
    for (const row of inc.rows) {
      let subject = row.subject;
      let details = JSON.stringify(row.details);
      for (const s of subjects) { subject = pseudonymise(subject, s); details = pseudonymise(details, s); }
      await c.query('UPDATE incidents SET subject = $3, details = $4 WHERE tenant_id = $1 AND id = $2', [tenantId, row.id, subject, details]);
    }
    // The console's returning-visitor keys (pseudonymous, but linkable to the subject by whoever holds the salt): gone.
    const visitors = await eraseVisitorKeys(c, tenantId, macs, users);
    for (const [category, n] of [['blocks', blocks.rowCount ?? 0], ['incidents', inc.rowCount ?? 0], ['report_visitors', visitors]] as const) {
      if (n > 0) {
        await c.query(`INSERT INTO privacy_deletions (tenant_id, at, kind, category, rows, ref) VALUES ($1, $2, 'erasure', $3, $4, $5)`,
          [tenantId, at, category, n, requestId]);
      }
    }
    return { hold, blocks_lifted: blocks.rowCount ?? 0, incidents_rewritten: inc.rowCount ?? 0 };
  }
}
