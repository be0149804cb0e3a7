import { Redis } from 'ioredis';
import { AuditLog } from './audit/audit-log.js';
import { AuditService } from './audit/audit-service.js';
import { runRetention } from './audit/retention.js';
import { DailySummary } from './compliance/daily-summary.js';
import { EvidencePackService } from './compliance/evidence-pack-service.js';
import { TimestampStore } from './compliance/timestamp-store.js';
import { TsaClient } from './compliance/tsa-client.js';
import type { Config } from './config.js';
import { HotspotService } from './hotspots/hotspot-service.js';
import { NasRegistry } from './hotspots/nas-registry.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics.js';
import { keys } from './redis/keys.js';
import { createRedis } from './redis/scripts.js';
import { ActorPool } from './sessions/actor-pool.js';
import { RadiusGateway } from './sessions/radius-gateway.js';
import { SessionService } from './sessions/session-service.js';
import { SignInService } from './sessions/sign-in.js';
import { PortalState } from './signin/portal-state.js';
import { UamCredentials } from './signin/uam-credential.js';
import { deadLettersBetween } from './store/outbox-sink.js';
import { SinkWorker } from './store/sink-worker.js';
import { createPool, migrate, type Pool } from './store/postgres.js';
import { CredentialVerifier } from './tenants/credentials.js';
import { TenantService } from './tenants/tenant-service.js';
import { VoucherRedemption } from './vouchers/voucher-redemption.js';
import { VoucherService } from './vouchers/voucher-service.js';

export interface EngineOptions {
  /** The clock; tests move it to check expiry at the boundary. */
  now?: () => number;
  /** Run the outbox sink in this process (default true). */
  sink?: boolean;
  /** Start the actor threads (default true; the CLI needs none). */
  actors?: boolean;
}

/**
 * The engine: every service the HTTP and RADIUS layers use, wired once.
 * Start-up work (connections, migrations, script registration, threads)
 * happens here; nothing of it happens per request.
 */
export class Engine {
  readonly redis: Redis;
  readonly pool: Pool;
  readonly metrics = new Metrics();
  readonly tenants: TenantService;
  readonly credentials: CredentialVerifier;
  readonly hotspots: HotspotService;
  readonly nas: NasRegistry;
  readonly vouchers: VoucherService;
  readonly redemption: VoucherRedemption;
  /** The outbox sink, on its own worker thread (started by start() unless options.sink is false). */
  readonly sink: SinkWorker;
  readonly actors: ActorPool | null;
  readonly signIn: SignInService;
  readonly sessions: SessionService;
  readonly radius: RadiusGateway;
  readonly audit: AuditService;
  readonly auditLog: AuditLog;
  readonly evidencePacks: EvidencePackService;
  readonly dailySummary: DailySummary;
  /** Portal page (helper I): outcomes of form posts, gateway hand-back, the RFC 8908 view. */
  readonly uamCredentials: UamCredentials;
  readonly portal: PortalState;
  private readonly runSink: boolean;
  private retentionTimer: NodeJS.Timeout | undefined;

  constructor(readonly config: Config, readonly log: Logger, options: EngineOptions = {}) {
    const now = options.now ?? Date.now;
    this.runSink = options.sink ?? true;
    this.redis = createRedis(config.redisUrl, log);
    this.pool = createPool(config.databaseUrl, log);
    this.metrics.counter('voucher_verify_total', 'Portal voucher verifications by outcome', 'result');
    this.tenants = new TenantService(this.pool, this.redis);
    this.tenants.onCreated = () => this.sink.tenantsChanged();
    this.credentials = new CredentialVerifier(this.tenants, config.jwtSecret, config.jwtLeewaySec);
    this.hotspots = new HotspotService(this.pool);
    this.nas = new NasRegistry(this.pool, log.child({ component: 'nas-registry' }));
    this.hotspots.onNasChange = () => this.nas.refresh();
    this.vouchers = new VoucherService(this.pool, this.redis, now);
    this.redemption = new VoucherRedemption(this.redis, this.hotspots, this.vouchers, this.metrics,
      { sessionMinutes: config.defaultSessionMinutes, idleSec: config.defaultIdleTimeoutSec }, now);
    this.sink = new SinkWorker({ redisUrl: config.redisUrl, databaseUrl: config.databaseUrl, nodeId: config.nodeId, logLevel: config.logLevel },
      log.child({ component: 'outbox-sink' }), this.metrics);

    let gateway: RadiusGateway | undefined;
    this.actors = (options.actors ?? true)
      ? new ActorPool({
          threads: config.actorThreads, redisUrl: config.redisUrl, nodeId: config.nodeId, logLevel: config.logLevel,
          log: log.child({ component: 'actors' }), nas: (cmd) => gateway!.nasCommand(cmd),
        })
      : null;
    const actors = this.actors ?? disabledActors();
    this.signIn = new SignInService(this.redemption, actors);
    this.sessions = new SessionService(this.pool, this.redis, actors, this.hotspots, now);
    this.radius = gateway = new RadiusGateway(this.nas, actors, this.signIn, log.child({ component: 'radius-gateway' }));
    this.audit = new AuditService(this.pool);
    this.auditLog = new AuditLog(this.redis, now);
    this.evidencePacks = new EvidencePackService({
      databaseUrl: config.databaseUrl, tsaUrl: config.tsaUrl, logLevel: config.logLevel, log: log.child({ component: 'evidence-packs' }), now,
    });
    this.dailySummary = new DailySummary(this.pool, new TimestampStore(this.pool, config.tsaUrl ? new TsaClient(config.tsaUrl) : null), now,
      (tenant, from, to) => deadLettersBetween(this.redis, tenant, from, to));
    this.uamCredentials = new UamCredentials(this.redis);
    this.portal = new PortalState(this.redis, this.hotspots, this.uamCredentials, now);
    this.metrics.gauge('live_sessions_in_actors', 'Live sessions held by hotspot actors', () => this.actors?.liveSessions ?? 0);
    this.metrics.counterFrom('radius_auth_mirror_hits_total', 'Access-Requests answered on the main thread from an actor\'s published accept (no hop)', () => this.actors?.mirrorHits ?? 0);
  }

  /** Applies migrations and starts background work. */
  async start(): Promise<void> {
    await migrate(this.pool, this.log);
    for (const t of await this.tenants.list()) await this.tenants.ensureRedis(t.id);
    await this.nas.start();
    if (this.actors) await this.wakeLiveHotspots(this.actors);
    if (this.runSink) {
      this.sink.start();
      // Retention runs hourly; it drops a day's partition once the day is past the legal period.
      const retention = (): void => void runRetention(this.pool, this.log).catch((err: Error) => this.log.warn({ err: err.message }, 'retention run failed'));
      this.retentionTimer = setInterval(retention, 3_600_000);
      this.retentionTimer.unref();
      retention();
    }
  }

  /**
   * Hotspots with live sessions get their actors (and clocks) back at once
   * after a restart, so sessions that ran out meanwhile end (at their own
   * time) without waiting for the hotspot's next sign-in or packet. Redis's
   * live sets decide, not Postgres: a session started while the sink was
   * behind is live though Postgres has no row for it yet.
   */
  private async wakeLiveHotspots(actors: ActorPool): Promise<void> {
    const { rows } = await this.pool.query<{ tenant_id: string; id: string; timezone: string }>('SELECT tenant_id, id, timezone FROM hotspots');
    for (let i = 0; i < rows.length; i += 1000) {
      const chunk = rows.slice(i, i + 1000);
      const p = this.redis.pipeline();
      for (const h of chunk) p.zcard(keys.live(h.tenant_id, h.id));
      const counts = (await p.exec()) ?? [];
      chunk.forEach((h, k) => {
        if (Number(counts[k]?.[1] ?? 0) > 0) actors.wake(h.tenant_id, h.id, h.timezone);
      });
    }
  }

  /** Redis and Postgres both answer. */
  async ready(): Promise<{ redis: boolean; postgres: boolean }> {
    const within = <T>(p: Promise<T>): Promise<boolean> =>
      Promise.race([p.then(() => true, () => false), new Promise<boolean>((r) => setTimeout(() => r(false), 1000))]);
    const [redis, postgres] = await Promise.all([within(this.redis.ping()), within(this.pool.query('SELECT 1'))]);
    return { redis, postgres };
  }

  async close(): Promise<void> {
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    await this.actors?.close();
    await this.evidencePacks.close();
    this.nas.stop();
    await this.sink.stop();
    this.redis.disconnect();
    await this.pool.end();
  }
}

/** For processes without actor threads (the CLI): any session request fails clearly. */
function disabledActors(): ActorPool {
  return {
    request: () => Promise.reject(new Error('session engine not running in this process')),
    wake: () => undefined,
    emit: () => false,
    liveSessions: 0,
  } as unknown as ActorPool;
}
