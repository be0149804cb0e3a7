import type { RedisClient as Redis } from '../redis/redis-client.js';
import { hourOf, stepOf } from '../events/activity-keys.js';
import { keys } from '../redis/keys.js';
import type { DecisionSource } from '../signin/decision-sink.js';

/** One decision as the dashboard lists it (docs/dashboard-api.md, `decisions`). */
export interface DecisionView {
  /** The decisions stream's entry id: ordered, newest first in a list. */
  id: string;
  at: string;
  outcome: 'accept' | 'reject';
  method: string;
  /** '' for an accept. */
  reason: string;
  hotspot_id: string;
  source: DecisionSource;
  /** Decisions the row stands for: 1 for a sign-in; a NAS's alike re-checks of one flush (mac_auth, uam_login) are one row. */
  count: number;
}

export interface DecisionsPage {
  data: DecisionView[];
  /** Decisions of the last minute (six 10-second steps, the current one included), tenant-wide. */
  decisions_1m: number;
  /** Rejects of the last 24 h (the current hour and the 23 before) by reason, most first, tenant-wide. */
  fail_reasons: { reason: string; count: number }[];
}

export interface DecisionQuery {
  limit: number;
  outcome?: 'accept' | 'reject';
  hotspotId?: string;
}

/** Entries read per XREVRANGE while a filter skips some. */
const PAGE = 500;
/**
 * The most entries one filtered request reads: a filter matching little (an
 * idle hotspot) costs this at most, whatever the traffic. The stream itself
 * holds about DECISIONS_MAXLEN.
 */
export const FILTER_SCAN_LIMIT = 5_000;
const RECENT_STEPS = 6;
const DAY_HOURS = 24;

/**
 * The `decisions` call: the latest decisions from the tenant's decisions
 * stream, and the aggregates from the counters the DecisionRecorder keeps.
 * A fixed number of keys per request, never a scan of sessions.
 */
export class DecisionReader {
  constructor(private readonly redis: Redis, private readonly now: () => number = Date.now) {}

  async list(tenantId: string, q: DecisionQuery): Promise<DecisionsPage> {
    const now = this.now();
    const [data, decisions1m, failReasons] = await Promise.all([this.latest(tenantId, q), this.recentCount(tenantId, now), this.failReasons(tenantId, now)]);
    return { data, decisions_1m: decisions1m, fail_reasons: failReasons };
  }

  private async latest(tenantId: string, q: DecisionQuery): Promise<DecisionView[]> {
    const out: DecisionView[] = [];
    const filtered = q.outcome !== undefined || q.hotspotId !== undefined;
    let end = '+';
    let read = 0;
    while (out.length < q.limit && read < FILTER_SCAN_LIMIT) {
      const count = filtered ? PAGE : q.limit - out.length;
      // After the first page, the exclusive start `(id` skips the entry the last page ended on.
      const entries = await this.redis.xrevrange(keys.decisions(tenantId), end, '-', 'COUNT', count);
      for (const [id, f] of entries) {
        const v = view(id, f);
        if ((q.outcome === undefined || v.outcome === q.outcome) && (q.hotspotId === undefined || v.hotspot_id === q.hotspotId)) {
          out.push(v);
          if (out.length === q.limit) break;
        }
      }
      read += entries.length;
      if (entries.length < count) break;
      end = `(${entries[entries.length - 1]![0]}`;
    }
    return out;
  }

  private async recentCount(tenantId: string, now: number): Promise<number> {
    const step = stepOf(now);
    const ks = Array.from({ length: RECENT_STEPS }, (_, i) => keys.decisionStep(tenantId, step - i));
    return (await this.redis.mget(ks)).reduce((sum, v) => sum + Number(v ?? 0), 0);
  }

  private async failReasons(tenantId: string, now: number): Promise<{ reason: string; count: number }[]> {
    const hour = hourOf(now);
    const p = this.redis.pipeline();
    for (let i = 0; i < DAY_HOURS; i++) p.hgetall(keys.activityHour(tenantId, hour - i));
    const totals = new Map<string, number>();
    for (const [err, h] of (await p.exec()) ?? []) {
      if (err) throw err;
      for (const [field, n] of Object.entries(h as Record<string, string>)) {
        // rejectReason(reason) = `r:<reason>` (engine/redis/records.ts).
        if (field.startsWith('r:')) totals.set(field.slice(2), (totals.get(field.slice(2)) ?? 0) + Number(n));
      }
    }
    return [...totals].map(([reason, count]) => ({ reason, count }))
      .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1));
  }
}

function view(id: string, f: string[]): DecisionView {
  const m: Record<string, string> = {};
  for (let i = 0; i + 1 < f.length; i += 2) m[f[i]!] = f[i + 1]!;
  return {
    id, at: new Date(Number(m.at)).toISOString(), outcome: m.outcome === 'accept' ? 'accept' : 'reject', method: m.method ?? '',
    reason: m.reason ?? '', hotspot_id: m.hotspot ?? '', source: (m.source ?? 'portal') as DecisionSource, count: Number(m.count ?? 1),
  };
}
