import { Redis } from 'ioredis';
import type { Config } from './config.js';
import { HotspotService } from './hotspots/hotspot-service.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics.js';
import { createRedis } from './redis/scripts.js';
import { OutboxSink } from './store/outbox-sink.js';
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
}

/**
 * The engine: every service the HTTP and RADIUS layers use, wired once.
 * Start-up work (connections, migrations, script registration) happens in
 * `start`; nothing of it happens per request.
 */
export class Engine {
  readonly redis: Redis;
  readonly pool: Pool;
  readonly metrics = new Metrics();
  readonly tenants: TenantService;
  readonly credentials: CredentialVerifier;
  readonly hotspots: HotspotService;
  readonly vouchers: VoucherService;
  readonly redemption: VoucherRedemption;
  readonly sink: OutboxSink;
  private readonly runSink: boolean;
  private tenantIdCache: { ids: string[]; at: number } = { ids: [], at: 0 };

  constructor(readonly config: Config, readonly log: Logger, options: EngineOptions = {}) {
    const now = options.now ?? Date.now;
    this.runSink = options.sink ?? true;
    this.redis = createRedis(config.redisUrl, log);
    this.pool = createPool(config.databaseUrl, log);
    this.metrics.counter('voucher_verify_total', 'Portal voucher verifications by outcome', 'result');
    this.tenants = new TenantService(this.pool, this.redis);
    this.credentials = new CredentialVerifier(this.tenants, config.jwtSecret, config.jwtLeewaySec);
    this.hotspots = new HotspotService(this.pool);
    this.vouchers = new VoucherService(this.pool, this.redis, now);
    this.redemption = new VoucherRedemption(this.redis, this.hotspots, this.vouchers, this.metrics, config.defaultSessionMinutes, now);
    this.sink = new OutboxSink(this.redis, this.pool, () => this.tenantIds(), config.nodeId, log.child({ component: 'outbox-sink' }), this.metrics);
  }

  /** Applies migrations and starts background work. */
  async start(): Promise<void> {
    await migrate(this.pool, this.log);
    for (const t of await this.tenants.list()) await this.tenants.ensureRedis(t.id);
    if (this.runSink) this.sink.start();
  }

  /** Redis and Postgres both answer. */
  async ready(): Promise<{ redis: boolean; postgres: boolean }> {
    const within = <T>(p: Promise<T>): Promise<boolean> =>
      Promise.race([p.then(() => true, () => false), new Promise<boolean>((r) => setTimeout(() => r(false), 1000))]);
    const [redis, postgres] = await Promise.all([within(this.redis.ping()), within(this.pool.query('SELECT 1'))]);
    return { redis, postgres };
  }

  async close(): Promise<void> {
    await this.sink.stop();
    this.redis.disconnect();
    await this.pool.end();
  }

  /** Tenant ids for the sink, refreshed every few seconds. */
  private async tenantIds(): Promise<string[]> {
    if (Date.now() - this.tenantIdCache.at > 2_000) {
      const { rows } = await this.pool.query<{ id: string }>('SELECT id FROM tenants');
      this.tenantIdCache = { ids: rows.map((r) => r.id), at: Date.now() };
    }
    return this.tenantIdCache.ids;
  }
}
