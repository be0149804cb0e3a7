import type { RedisClient as Redis } from '../redis/redis-client.js';
import { Errors } from '../errors.js';
import { retentionCutoff } from '../audit/retention-cutoff.js';
import type { Logger } from '../logger.js';
import { keys } from '../redis/keys.js';
import type { SessionService } from '../sessions/session-service.js';
import type { Pool } from '../store/postgres.js';
import { releaseHolds } from './legal-holds.js';
import { Erasure, macsOf, ownRows, usernamesOf, type ErasureResult } from './erasure.js';
import { PrivacyRequestStore, type PrivacyRequest, type RequestOutcome, type RequestType } from './privacy-request-store.js';
import { RedisPersonalData } from './redis-personal-data.js';
import { SubjectKeys, wholeValuePatterns, type Subject, type SubjectKind } from './subject.js';

/** Where a Redis key's data belongs, by the key's first segment after the tenant tag (engine/redis/keys.ts). */
const REDIS_CATEGORY: Record<string, string> = {
  g: 'live_sessions', sr: 'live_sessions', live: 'live_sessions', ldev: 'live_sessions', dq: 'usage', blk: 'blocks', kdev: 'known_devices',
  otp: 'otp', sp: 'sponsor_requests', pms: 'pms_guest_links', ev: 'events', dec: 'sign_in_decisions', wh: 'webhook_deliveries',
  vd: 'voucher_uses', v: 'vouchers', outbox: 'outbox', gl: 'guessing_limits', pos: 'posture', po: 'portal_outcomes', uam: 'gateway_credentials',
};
const categoryOf = (key: string): string => REDIS_CATEGORY[key.slice(key.indexOf('}:') + 2).split(':')[0] ?? ''] ?? 'other';

/**
 * `text` with every phone number and e-mail address that is not the subject's replaced: a Redis
 * entry about the subject's device (an event, a decision) may also name another guest who used it.
 */
const otherGuests = (text: string, own: Set<string>): string =>
  text.replace(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}|\+[0-9]{8,15}(?![0-9])/g, (m) => (own.has(m.toLowerCase()) || own.has(m) ? m : '(another guest)'));

export interface Deletion { at: string; kind: string; category: string; rows: number; ref: string | null }

/**
 * Personal data (docs/privacy.md): data-subject requests (access, erasure, correction), the access
 * export, erasure under legal hold, the log of deletions and the personal-data summary of the compliance package.
 */
export class PrivacyService {
  readonly requests: PrivacyRequestStore;
  private readonly keys: SubjectKeys;
  private readonly redisData: RedisPersonalData;
  private readonly erasure: Erasure;

  constructor(private readonly pool: Pool, private readonly redis: Redis, sessions: SessionService, otpKey: Uint8Array, private readonly now: () => number) {
    this.requests = new PrivacyRequestStore(pool, now);
    this.keys = new SubjectKeys(otpKey);
    this.redisData = new RedisPersonalData(redis);
    this.erasure = new Erasure(pool, redis, sessions, this.redisData, this.keys, now);
  }

  file(tenantId: string, type: RequestType, subject: { phone?: string; email?: string; mac?: string }, note: string | null): Promise<PrivacyRequest> {
    return this.requests.file(tenantId, type, this.keys.parse(tenantId, subject), note);
  }

  /**
   * Closes a request. `completed` on an erasure erases (Erasure); on a correction it applies the
   * correction: a sponsor request's guest name is the only thing a guest typed that we keep and
   * can put right (a phone, e-mail or MAC is what we verified or the network told us: it is erased,
   * not corrected; audit records are never rewritten). `rejected` changes nothing but the request.
   */
  async close(tenantId: string, id: string, outcome: RequestOutcome, note: string | null, by: string, correction?: { guest_name?: string }): Promise<PrivacyRequest> {
    const req = await this.requests.open(tenantId, id);
    const subject = this.keys.of(tenantId, req.kind, req.value);
    let result: Record<string, unknown> | null = null;
    if (outcome === 'completed' && req.view.type === 'erasure') {
      result = { ...(await this.erasure.erase(tenantId, subject, id, `privacy:${id}:${by}`)) } satisfies Record<string, unknown> & ErasureResult;
    } else if (outcome === 'completed' && req.view.type === 'correction' && correction?.guest_name !== undefined) {
      result = { sponsor_requests_corrected: await this.correctGuestName(tenantId, subject, correction.guest_name) };
    }
    return this.requests.close(tenantId, id, outcome, note, result);
  }

  /** Sponsor requests (kept a day in Redis) whose device or guest is the subject get the corrected guest name. */
  private async correctGuestName(tenantId: string, s: Subject, name: string): Promise<number> {
    let n = 0;
    for await (const f of this.redisData.find(tenantId, [s])) {
      // A sponsor request's hash (keys.sponsorRequest): `guest` is the name the guest typed on the portal.
      if (f.type !== 'hash' || !f.key.includes(':sp:r:') || !(await this.redis.hexists(f.key, 'guest'))) continue;
      await this.redis.hset(f.key, 'guest', name);
      n++;
    }
    return n;
  }

  /**
   * Everything held on the request's subject and the devices it used itself (never another guest's
   * rows on a shared device: Erasure.linked, ownRows), as one JSON document
   * written piece by piece: session rows (voucher uses among them), blocks, the audit chain's records
   * naming it, legal holds, and every Redis key, field or entry naming it, by category.
   */
  async export(tenantId: string, id: string): Promise<AsyncIterable<Buffer>> {
    const req = await this.requests.open(tenantId, id);
    const subjects = await this.erasure.linked(tenantId, this.keys.of(tenantId, req.kind, req.value));
    return this.exportStream(tenantId, req.view, subjects);
  }

  private async *exportStream(tenantId: string, view: PrivacyRequest, subjects: Subject[]): AsyncGenerator<Buffer> {
    const b = (s: string): Buffer => Buffer.from(s);
    const ids = (list: Subject[]): { kind: SubjectKind; value: string }[] => list.map((s) => ({ kind: s.kind, value: s.value }));
    yield b(`{"format":"guest-wifi-personal-data/1","request_id":${JSON.stringify(view.id)},"generated_at":"${new Date(this.now()).toISOString()}",`
      + `"subject":${JSON.stringify(ids(subjects.slice(0, 1))[0])},"linked":${JSON.stringify(ids(subjects.slice(1)))}`);
    const macs = macsOf(subjects);
    const users = usernamesOf(subjects);
    const patterns = wholeValuePatterns(subjects);
    const own = new Set(subjects.map((s) => s.value));
    const hide = (t: string): string => otherGuests(t, own);
    yield* this.section(b, hide, 'sessions', (after) => this.pool.query(
      `SELECT id, hotspot_id, mac, ip, username, auth_method, ssid, voucher_id, started_at, ends_at, ended_at, end_reason, status, bytes_in, bytes_out, legal_hold
       FROM sessions WHERE tenant_id = $1 AND ${ownRows(subjects, 'mac', 'username')} AND id > $4 ORDER BY id LIMIT 500`, [tenantId, macs, users, after]));
    yield* this.section(b, hide, 'blocks', (after) => this.pool.query(
      `SELECT mac AS id, until, duration, reason, created_by, created_at FROM blocks WHERE tenant_id = $1 AND mac = ANY($2) AND mac > $3 ORDER BY mac LIMIT 500`,
      [tenantId, macs, after]));
    yield* this.section(b, hide, 'audit_records', (after) => this.pool.query(
      `SELECT lpad(seq::text, 20, '0') AS id, seq, event_type, ts, session_id, mac_address, ip_address, username, auth_method, ssid, hotspot_id, details
       FROM audit_records WHERE tenant_id = $1 AND ${ownRows(subjects, 'mac_address', 'username', ' OR details::text ~ ANY($4)')} AND lpad(seq::text, 20, '0') > $5
       ORDER BY seq LIMIT 500`, [tenantId, macs, users, patterns, after]));
    yield* this.section(b, hide, 'legal_holds', (after) => this.pool.query(
      `SELECT id, request_id, reason, held, created_at, held_until, released_at FROM legal_holds
       WHERE tenant_id = $1 AND subject_ref = ANY($2) AND id > $3 ORDER BY id LIMIT 500`, [tenantId, subjects.map((s) => s.ref), after]));
    yield b(',"redis":[');
    let first = true;
    for await (const f of this.redisData.find(tenantId, subjects)) {
      yield b(`${first ? '' : ','}${JSON.stringify({ category: categoryOf(f.key), ...f, key: hide(f.key), entries: f.entries.map(hide) })}`);
      first = false;
    }
    yield b(']}\n');
  }

  /** One JSON array member of the export, read in pages by `id` (keyset) so that no page is held whole. */
  private async *section(b: (s: string) => Buffer, hide: (t: string) => string, name: string, page: (after: string) => Promise<{ rows: Record<string, unknown>[] }>): AsyncGenerator<Buffer> {
    yield b(`,${JSON.stringify(name)}:[`);
    let after = '';
    let first = true;
    for (;;) {
      const { rows } = await page(after);
      for (const r of rows) {
        const { id, ...rest } = r;
        yield b(`${first ? '' : ','}${hide(JSON.stringify(name === 'audit_records' ? rest : { id, ...rest }))}`);
        first = false;
      }
      if (rows.length < 500) break;
      after = String(rows[rows.length - 1]!.id);
    }
    yield b(']');
  }

  /** Automatic and requested deletions of the tenant's personal data in [from, to). */
  async deletions(tenantId: string, from: Date, to: Date): Promise<Deletion[]> {
    const { rows } = await this.pool.query<{ at: Date; kind: string; category: string; rows: string; ref: string | null }>(
      'SELECT at, kind, category, rows, ref FROM privacy_deletions WHERE tenant_id = $1 AND at >= $2 AND at < $3 ORDER BY at, id LIMIT 10000',
      [tenantId, from, to]);
    return rows.map((r) => ({ at: r.at.toISOString(), kind: r.kind, category: r.category, rows: Number(r.rows), ref: r.ref }));
  }

  /** Ends the holds whose time has come (the retention job does this hourly; the CLI and tests with a given time). */
  async releaseDueHolds(nowMs: number, log: Logger): Promise<number> {
    const c = await this.pool.connect();
    try { return await releaseHolds(c, log, nowMs); } finally { c.release(); }
  }

  /**
   * The data of the compliance package's personal-data audit summary: categories and volumes held, retention
   * compliance (oldest record per category against its retention), requests and deletions in [from, to).
   */
  async summary(tenantId: string, from: Date, to: Date): Promise<Record<string, unknown>> {
    if (!(from < to)) throw Errors.VALIDATION_FAILED('from must be before to', [{ field: 'from', message: 'must be before to' }]);
    const q = async (sql: string): Promise<{ n: number; oldest: Date | null }> =>
      (await this.pool.query<{ n: number; oldest: Date | null }>(sql, [tenantId])).rows[0] ?? { n: 0, oldest: null };
    const now = this.now();
    const cutoff = retentionCutoff(now);
    const cat = (name: string, where: string, r: { n: number; oldest: Date | null }, retention: string, dueBefore: string | null) => ({
      category: name, lives_in: where, records: r.n, oldest: r.oldest?.toISOString() ?? null, retention,
      compliant: dueBefore === null || r.oldest === null || r.oldest.toISOString().slice(0, 10) >= dueBefore,
    });
    const sessions = await q(`SELECT count(*)::int AS n, min(started_at) AS oldest FROM sessions WHERE tenant_id = $1 AND mac <> 'expired' AND mac NOT LIKE 'erased-%' AND legal_hold IS NULL`);
    const audit = await q('SELECT count(*)::int AS n, min(ts) AS oldest FROM audit_records WHERE tenant_id = $1');
    const blocks = await q('SELECT count(*)::int AS n, min(created_at) AS oldest FROM blocks WHERE tenant_id = $1');
    const holds = await q('SELECT count(*)::int AS n, min(created_at) AS oldest FROM legal_holds WHERE tenant_id = $1 AND released_at IS NULL');
    const overdueHolds = await this.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM legal_holds WHERE tenant_id = $1 AND released_at IS NULL AND held_until < $2', [tenantId, new Date(now)]);
    const p = this.redis.pipeline();
    p.hlen(keys.knownDevices(tenantId)); p.hlen(keys.liveDevices(tenantId)); p.zcard(keys.sponsorRecent(tenantId)); p.xlen(keys.events(tenantId)); p.hlen(keys.webhookBodies(tenantId));
    const [known, live, sponsor, events, bodies] = ((await p.exec()) ?? []).map(([, v]) => Number(v ?? 0));
    const redisCat = (name: string, n: number, retention: string) => ({ category: name, lives_in: 'redis', records: n, oldest: null, retention, compliant: true });
    const deletions = await this.pool.query<{ kind: string; category: string; rows: string; n: number }>(
      `SELECT kind, category, sum(rows)::bigint AS rows, count(*)::int AS n FROM privacy_deletions WHERE tenant_id = $1 AND at >= $2 AND at < $3 GROUP BY kind, category ORDER BY kind, category`,
      [tenantId, from, to]);
    return {
      period: { from: from.toISOString(), to: to.toISOString() }, generated_at: new Date(now).toISOString(), retention_cutoff: cutoff,
      categories: [
        cat('access_log_sessions', 'postgres.sessions', sessions, '730 days (Law 5651)', cutoff),
        cat('audit_chain', 'postgres.audit_records', audit, '730 days (Law 5651), by daily partition', cutoff),
        cat('blocks', 'postgres.blocks', blocks, 'until lifted or expired', null),
        { ...cat('legal_holds', 'postgres.legal_holds + sessions.legal_hold', holds, 'until held_until', null), compliant: (overdueHolds.rows[0]?.n ?? 0) === 0 },
        redisCat('known_devices', known ?? 0, 'until erased'), redisCat('live_devices', live ?? 0, 'while online'),
        redisCat('sponsor_requests', sponsor ?? 0, '1 day'), redisCat('events', events ?? 0, `about ${'200,000'} entries`),
        redisCat('webhook_bodies', bodies ?? 0, 'until delivered or dead, then WEBHOOK retention'),
      ],
      requests: await this.requests.counts(tenantId, from, to),
      deletions: deletions.rows.map((r) => ({ kind: r.kind, category: r.category, rows: Number(r.rows), runs: r.n })),
    };
  }
}
