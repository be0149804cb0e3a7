import type { RedisClient as Redis } from '../redis/redis-client.js';
import type { IncidentThresholds } from '../config.js';
import type { EventLog } from '../events/event-log.js';
import type { Logger } from '../logger.js';
import { keys } from '../redis/keys.js';
import { ACTIVITY } from '../redis/records.js';
import type { Pool } from '../store/postgres.js';
import { uniqueDeadLetters } from '../store/dead-letters.js';
import { DASHBOARD_MODULES, type Tenant } from '../tenants/tenant-service.js';
import type { IncidentKind, IncidentService } from './incident-service.js';
import { AuditLag } from '../audit/audit-lag.js';
import type { ProviderFailureWindow } from './provider-failure-window.js';
import { isSurge, readSurgeWindow } from './surge-window.js';

export interface IncidentWatchPorts {
  tenants: { list(): Promise<Tenant[]> };
  /** The registered NAS by id (NasRegistry): which hotspot it serves, and that it still exists. */
  nas: { get(id: string): { tenantId: string; hotspotId: string } | null };
  incidents: IncidentService;
  events: EventLog;
  providerFailures: ProviderFailureWindow;
  redis: Redis;
  pool: Pool;
  thresholds: IncidentThresholds;
  log: Logger;
  now?: () => number;
  /** The signin_guessing detector (guessing-detector.ts); its own file, as it reads the guessing limits' counts. */
  guessing?: { check(tenantId: string, now: number): Promise<void> };
}

const MINUTE = 60_000;
/** Who resolves an incident the engine saw end by itself. */
export const ENGINE_ACTOR = 'engine';

/**
 * The engine's own incident detectors, run every `watchMs` in every engine
 * process for every tenant with the dashboard. Several processes noticing
 * the same problem is harmless: raising is idempotent (one open incident per
 * tenant, kind and subject; IncidentService). Each detector reads a fixed
 * handful of keys or one indexed query per tenant: counters from the
 * ACTIVITY buckets, NAS presence, the outbox, compliance time-stamps, and
 * this process's OTP provider failures.
 */
export class IncidentWatch {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | null = null;
  private readonly now: () => number;
  private readonly t: IncidentThresholds;
  /** The same measure of the audit backlog as the overview's audit_anchor_lag_min. */
  private readonly auditLag: AuditLag;

  constructor(private readonly ports: IncidentWatchPorts) {
    this.now = ports.now ?? Date.now;
    this.t = ports.thresholds;
    this.auditLag = new AuditLag(ports.redis);
  }

  start(): void {
    this.timer = setInterval(() => void this.runOnce(), this.t.watchMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One round over every dashboard tenant; a round still running is not started twice. */
  runOnce(): Promise<void> {
    this.running ??= this.round().finally(() => { this.running = null; });
    return this.running;
  }

  /** Every detector for one tenant (tests call this with their own tenant). */
  async check(tenantId: string): Promise<void> {
    const now = this.now();
    const detectors: [string, () => Promise<void>][] = [
      ['nas_silent', () => this.nasSilent(tenantId, now)],
      ['signin', () => this.signIns(tenantId, now)],
      ['audit_anchor_lag', () => this.anchorLag(tenantId, now)],
      ['audit_dead_letters', () => this.deadLetters(tenantId, now)],
      ['tsa_failure', () => this.tsaFailures(tenantId, now)],
      ['otp_provider_failing', () => this.providers(tenantId)],
      ['signin_guessing', () => this.ports.guessing?.check(tenantId, now) ?? Promise.resolve()],
    ];
    for (const [name, run] of detectors) {
      try {
        await run();
      } catch (err) {
        this.ports.log.warn({ err: (err as Error).message, tenant_id: tenantId, detector: name }, 'incident detector failed');
      }
    }
  }

  private async round(): Promise<void> {
    try {
      const tenants = (await this.ports.tenants.list()).filter((t) => DASHBOARD_MODULES.some((m) => t.modules.includes(m)));
      for (const t of tenants) await this.check(t.id);
    } catch (err) {
      this.ports.log.warn({ err: (err as Error).message }, 'incident watch round failed');
    }
  }

  /** A NAS heard from before and silent past the limit; resolved by the engine when it speaks again. */
  private async nasSilent(tenantId: string, now: number): Promise<void> {
    const { incidents, redis, events } = this.ports;
    const silentMs = this.t.nasSilentSec * 1000;
    const [seen, open] = await Promise.all([redis.hgetall(keys.nasSeen(tenantId)), incidents.openOfKind(tenantId, 'nas_silent')]);
    const openFor = new Set(open.map((i) => i.subject));
    for (const [nasId, raw] of Object.entries(seen)) {
      const nas = this.ports.nas.get(nasId);
      if (!nas || nas.tenantId !== tenantId) continue; // removed since: nothing to watch
      const last = Number(raw);
      if (now - last > silentMs) {
        if (openFor.has(nasId)) continue;
        const raised = await incidents.raise(tenantId, {
          kind: 'nas_silent', subject: nasId, siteId: nas.hotspotId, severity: 'warning',
          title: `NAS ${nasId} silent for ${Math.floor((now - last) / MINUTE)} min`,
          details: { nas_id: nasId, last_seen_at: new Date(last).toISOString() },
        });
        // Announced once, by the process whose raise opened the incident.
        if (raised) await events.append(tenantId, 'nas.offline', nas.hotspotId, { nas_id: nasId, last_seen_at: new Date(last).toISOString() });
      } else if (openFor.has(nasId)) {
        await incidents.resolveOpen(tenantId, 'nas_silent', nasId, ENGINE_ACTOR);
      }
    }
  }

  /** Rejected sign-ins surging (a sliding window against the hour before it), and errors on our side among the last 5 minutes' decisions. */
  private async signIns(tenantId: string, now: number): Promise<void> {
    const minute = Math.floor(now / MINUTE);
    const p = this.ports.redis.pipeline();
    for (let m = minute - 4; m <= minute; m++) p.hmget(keys.activityMinute(tenantId, m), ACTIVITY.accepts, ACTIVITY.rejects, ACTIVITY.errors);
    const buckets = ((await p.exec()) ?? []).map(([err, v]) => {
      if (err) throw err;
      const [acc, rej, errs] = (v as (string | null)[]).map((x) => Number(x ?? 0));
      return { acc: acc!, rej: rej!, err: errs! };
    });
    // A sliding window against the last hour's rate, not a calendar minute's share of all decisions: 150 unknown
    // codes in seconds beside 200 good sign-ins in the same minute are a surge (surge-window.ts).
    const w = await readSurgeWindow(this.ports.redis, tenantId, now, this.t.surgeWindowSec);
    if (isSurge(w, this.t)) {
      const secs = Math.round((w.windowEnd - w.windowStart) / 1000);
      await this.raise(tenantId, 'signin_failure_surge', 'signin', 'warning',
        `Failed sign-ins surging: ${w.rejects} rejected in ${secs} s (usually ${round1(w.baseline)}; ${pct(w.rejects, w.accepts + w.rejects)}% of decisions)`,
        { window_start: new Date(w.windowStart).toISOString(), window_sec: secs, rejects: w.rejects, accepts: w.accepts, baseline: round1(w.baseline) });
    }
    const sum = buckets.reduce((s, b) => ({ acc: s.acc + b.acc, rej: s.rej + b.rej, err: s.err + b.err }), { acc: 0, rej: 0, err: 0 });
    const decisions = sum.acc + sum.rej;
    if (decisions >= this.t.errorMinDecisions && sum.err * 100 > this.t.errorRatePct * decisions) {
      await this.raise(tenantId, 'error_rate_spike', 'signin', 'critical',
        `Sign-in errors on our side: ${sum.err} of ${decisions} decisions in 5 min (${pct(sum.err, decisions)}%)`,
        { errors: sum.err, decisions, window_min: 5 });
    }
  }

  /** The audit chain in Postgres behind its queue by more than the limit. */
  private async anchorLag(tenantId: string, now: number): Promise<void> {
    const oldest = await this.auditLag.oldestUnwritten(tenantId);
    const lag = oldest === null ? 0 : Math.max(0, now - oldest);
    if (lag <= this.t.anchorLagMin * MINUTE) return;
    await this.raise(tenantId, 'audit_anchor_lag', 'outbox', 'critical',
      `Audit chain ${Math.floor(lag / MINUTE)} min behind: records wait in Redis for Postgres`, { lag_min: Math.floor(lag / MINUTE) });
  }

  /** Outbox records Postgres refused (the dead-letter stream) since the window's start or the last resolve. */
  private async deadLetters(tenantId: string, now: number): Promise<void> {
    const { redis, incidents } = this.ports;
    const key = keys.outboxDead(tenantId);
    const newest = (await redis.xrevrange(key, '+', '-', 'COUNT', 1))[0]?.[0];
    const windowStart = now - this.t.recentSec * 1000;
    if (!newest || msOf(newest) <= windowStart) return;
    const since = Math.max(windowStart, (await incidents.lastResolved(tenantId, 'audit_dead_letters', 'outbox')) ?? 0);
    const entries = uniqueDeadLetters(await redis.xrange(key, String(since + 1), '+', 'COUNT', 1000));
    if (entries.length === 0) return;
    await this.raise(tenantId, 'audit_dead_letters', 'outbox', 'critical',
      `${entries.length === 1000 ? '1000 or more' : entries.length} audit records refused by Postgres (dead letters)`,
      { dead_letters: entries.length, first_id: entries[0]![0], last_id: entries[entries.length - 1]![0] });
  }

  /** Time-stamp authority failures (compliance_timestamps) since the window's start or the last resolve. */
  private async tsaFailures(tenantId: string, now: number): Promise<void> {
    const { rows } = await this.ports.pool.query<{ n: string; last_error: string | null }>(
      `SELECT count(*) AS n, (array_agg(error ORDER BY created_at DESC))[1] AS last_error
       FROM compliance_timestamps
       WHERE tenant_id = $1 AND status = 'failed' AND created_at > greatest(to_timestamp($2 / 1000.0), coalesce(
         (SELECT max(resolved_at) FROM incidents WHERE tenant_id = $1 AND kind = 'tsa_failure' AND subject = 'tsa' AND state = 'resolved'), '-infinity'))`,
      [tenantId, now - this.t.recentSec * 1000]);
    const n = Number(rows[0]?.n ?? 0);
    if (n === 0) return;
    await this.raise(tenantId, 'tsa_failure', 'tsa', 'warning', `Time-stamp authority failed ${n} time(s): daily logs left unstamped`,
      { failures: n, last_error: rows[0]?.last_error ?? null });
  }

  /** OTP providers failing repeatedly (every process's sends counted), since the last resolve of each. */
  private async providers(tenantId: string): Promise<void> {
    const { providerFailures, incidents } = this.ports;
    for (const f of await providerFailures.failing(tenantId)) {
      const resolved = await incidents.lastResolved(tenantId, 'otp_provider_failing', f.provider);
      const still = resolved === null ? f : (await providerFailures.failing(tenantId, resolved)).find((x) => x.provider === f.provider);
      if (!still) continue;
      await this.raise(tenantId, 'otp_provider_failing', f.provider, 'warning',
        `OTP provider ${f.provider} failing: ${still.failures} failed sends in ${Math.round(this.t.providerWindowSec / 60)} min (last: ${still.code})`,
        { provider: f.provider, failures: still.failures, code: still.code });
    }
  }

  private async raise(tenantId: string, kind: IncidentKind, subject: string, severity: 'critical' | 'warning', title: string,
    details: Record<string, unknown>): Promise<void> {
    await this.ports.incidents.raise(tenantId, { kind, subject, siteId: null, severity, title, details });
  }
}

const round1 = (n: number): number => Math.round(n * 10) / 10;
const pct = (part: number, whole: number): number => (whole === 0 ? 0 : Math.round((part / whole) * 1000) / 10);
const msOf = (streamId: string): number => Number(streamId.slice(0, streamId.indexOf('-')));
