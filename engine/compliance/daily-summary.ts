import { createHash } from 'node:crypto';
import { ChainVerifier, type ChainBreak } from '../audit/chain.js';
import type { DeadLetter } from '../store/outbox-sink.js';
import type { Pool } from '../store/postgres.js';
import { ACCESS_LOG_HEADER, AccessLog, accessLogLine, dayBounds } from './access-log.js';
import { chainPages, gapAfter, linkBefore } from './chain-day.js';
import type { StampStatus, TimestampStore } from './timestamp-store.js';

/**
 * How long past its planned end a session may still lack its end record
 * before that is a missing record. The hotspot actor's clock ends a session
 * within a second of its planned end and the outbox sink stores the end
 * within seconds; fifteen minutes leaves room for a Postgres or Redis outage.
 */
export const END_GRACE_MS = 15 * 60_000;

export type SummaryTsaStatus = StampStatus | 'day_open';

export interface SummaryWarning {
  code: 'session_without_end' | 'record_dead_lettered' | ChainBreak['problem'] | 'tsa_failed' | 'tsa_not_configured';
  message: string;
  /** The hotspot concerned; null for the tenant's chain or file as a whole. */
  hotspot_id: string | null;
  session_id?: string;
  seq?: number;
}

export interface HotspotDaySummary {
  hotspot_id: string;
  name: string;
  /** Audit records of the day for this hotspot. */
  record_count: number;
  /** Sessions overlapping the day (rows of the day's access log). */
  session_count: number;
  /** One chain per tenant: false when the tenant's chain breaks on this day. */
  chain_valid: boolean;
  /** One access log per tenant and day: the time-stamp of that file. */
  tsa_status: SummaryTsaStatus;
  warnings: SummaryWarning[];
}

/**
 * The daily 5651 log summary of one tenant and UTC day. The contract asks for
 * the record count, hash-chain integrity (valid/invalid), the time-stamp
 * authority's status and missing-record warnings.
 */
export interface DaySummary {
  tenant_id: string;
  date: string;
  generated_at: string;
  /** SHA-256 of the day's logs/YYYY-MM-DD.csv as an evidence pack would hold it now. */
  log_sha256: string;
  hotspots: HotspotDaySummary[];
  totals: {
    record_count: number;
    session_count: number;
    chain_valid: boolean;
    first_break: ChainBreak | null;
    tsa_status: SummaryTsaStatus;
    tsa_gen_time: string | null;
    /** Every warning of the day, those of the hotspots included. */
    warnings: SummaryWarning[];
  };
}

/**
 * Builds the daily summary from the same sources as the evidence pack: the
 * day's access log (hashed exactly as the pack writes it), the day's audit
 * records checked against the chain rule, and the time-stamp for the log's
 * current content. For a day that is over, a missing token is requested now
 * (and kept), so the summary run each morning is also the daily stamp.
 */
/** Records of a tenant that Postgres refused in [fromMs, toMs) (the outbox sink's dead letters). */
export type DeadLetterSource = (tenantId: string, fromMs: number, toMs: number) => Promise<DeadLetter[]>;

export class DailySummary {
  constructor(
    private readonly pool: Pool,
    private readonly stamps: TimestampStore,
    private readonly now: () => number,
    private readonly deadLetters: DeadLetterSource = async () => [],
  ) {}

  async day(tenantId: string, date: string): Promise<DaySummary> {
    const now = this.now();
    const hotspots = (await this.pool.query<{ id: string; name: string }>(
      'SELECT id, name FROM hotspots WHERE tenant_id = $1 ORDER BY created_at, id', [tenantId])).rows;
    const names = new Map(hotspots.map((h) => [h.id, h.name]));
    const per = new Map<string, HotspotDaySummary>();
    const of = (id: string): HotspotDaySummary => {
      let s = per.get(id);
      if (!s) {
        s = { hotspot_id: id, name: names.get(id) ?? '', record_count: 0, session_count: 0, chain_valid: true, tsa_status: 'not_configured', warnings: [] };
        per.set(id, s);
      }
      return s;
    };
    for (const h of hotspots) of(h.id);
    const warnings: SummaryWarning[] = [];

    // The access log: its digest, and sessions that started but never ended.
    const hash = createHash('sha256').update(ACCESS_LOG_HEADER, 'utf8');
    let sessions = 0;
    for await (const page of new AccessLog(this.pool, tenantId).day(date)) {
      for (const r of page) {
        hash.update(accessLogLine(r, names.get(r.hotspot_id) ?? ''), 'utf8');
        sessions++;
        of(r.hotspot_id).session_count++;
        if (!r.ended_at && r.ends_at.getTime() + END_GRACE_MS < now) {
          warnings.push({
            code: 'session_without_end', hotspot_id: r.hotspot_id, session_id: r.id,
            message: `session ${r.id} started ${r.started_at.toISOString()} and was to end by ${r.ends_at.toISOString()}, but no end is recorded`,
          });
        }
      }
    }
    const sha = hash.digest();

    // Records that never reached the chain: Postgres refused them, the sink kept them in Redis.
    const bounds = dayBounds(date);
    for (const d of await this.deadLetters(tenantId, bounds.start.getTime(), bounds.end.getTime())) {
      warnings.push({
        code: 'record_dead_lettered', hotspot_id: d.hotspotId || null, ...(d.sessionId ? { session_id: d.sessionId } : {}),
        message: `${d.type || 'a'} record (outbox id ${d.streamId}) was refused by Postgres and is not in the chain: ${d.error}; it is kept in Redis in the tenant's outbox:dead stream`,
      });
    }

    // The chain: records per hotspot, and the first break of the day.
    let v: ChainVerifier | null = null;
    let records = 0;
    let lastSeq: number | null = null;
    let breakHotspot: string | null = null;
    for await (const page of chainPages(this.pool, tenantId, date)) {
      v ??= new ChainVerifier(await linkBefore(this.pool, tenantId, page[0]!.seq));
      for (const r of page) {
        records++;
        lastSeq = r.seq;
        if (r.hotspot_id) of(r.hotspot_id).record_count++;
        if (!v.firstBreak && !v.push(r)) breakHotspot = r.hotspot_id || null;
      }
    }
    const firstBreak = v?.firstBreak ?? (lastSeq !== null ? await gapAfter(this.pool, tenantId, lastSeq) : null);
    if (firstBreak) {
      // A gap is a record that is not there: whose it was cannot be known, so it is the tenant's.
      warnings.push({
        code: firstBreak.problem, seq: firstBreak.seq, message: firstBreak.detail,
        hotspot_id: firstBreak.problem === 'sequence_gap' ? null : breakHotspot,
      });
    }

    // The time-stamp of the day's file, once the day is over.
    let tsaStatus: SummaryTsaStatus = 'day_open';
    let genTime: string | null = null;
    if (dayBounds(date).end.getTime() <= now) {
      const s = await this.stamps.stamp(tenantId, date, sha);
      tsaStatus = s.status;
      genTime = s.gen_time ?? null;
      if (s.status === 'failed') warnings.push({ code: 'tsa_failed', hotspot_id: null, message: `${s.error?.code}: ${s.error?.message}` });
      if (s.status === 'not_configured') warnings.push({ code: 'tsa_not_configured', hotspot_id: null, message: 'TSA_URL is not set: the day\'s log has no time-stamp' });
    }

    const list = [...per.values()];
    for (const h of list) {
      h.chain_valid = firstBreak === null;
      h.tsa_status = tsaStatus;
      h.warnings = warnings.filter((w) => w.hotspot_id === h.hotspot_id);
    }
    return {
      tenant_id: tenantId, date, generated_at: new Date(now).toISOString(), log_sha256: sha.toString('hex'),
      hotspots: list,
      totals: {
        record_count: records, session_count: sessions, chain_valid: firstBreak === null, first_break: firstBreak,
        tsa_status: tsaStatus, tsa_gen_time: genTime, warnings,
      },
    };
  }
}
