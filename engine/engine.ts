// The composition root: every service is built and wired here, in one place a newcomer can read top to
// bottom, so it runs past 400 lines; it holds no rule of its own (those live in the folders it wires).
import { execPerSlot, type RedisClient as Redis } from './redis/redis-client.js';
import { AuditLog } from './audit/audit-log.js';
import { AuditIntentSweep } from './audit/intent-sweep.js';
import { AuditService } from './audit/audit-service.js';
import { runRetention } from './audit/retention.js';
import { EventFanout } from './events/event-fanout.js';
import { EventLog } from './events/event-log.js';
import { AuditPages } from './views/audit-pages.js';
import { IncidentService } from './incidents/incident-service.js';
import { GuessingDetector } from './incidents/guessing-detector.js';
import { IncidentWatch } from './incidents/incident-watch.js';
import { JitApprovals } from './views/jit-approvals.js';
import { NasPresence } from './nas/nas-presence.js';
import { NetworkView } from './views/network-view.js';
import { OpenIncidents } from './views/open-incidents.js';
import { PostureService } from './posture/posture-service.js';
import { ProviderFailureWindow } from './incidents/provider-failure-window.js';
import { DashboardReadModels } from './views/read-models.js';
import { SiteDirectory } from './views/site-directory.js';
import { InvalidationStreams } from './events/invalidation-streams.js';
import { DailySummary } from './compliance/daily-summary.js';
import { EvidencePackService } from './compliance/evidence-pack-service.js';
import { VoucherSheetService } from './vouchers/voucher-sheet-service.js';
import { TimestampStore } from './compliance/timestamp-store.js';
import { TsaClient } from './compliance/tsa-client.js';
import type { Config } from './config.js';
import { HotspotService } from './hotspots/hotspot-service.js';
import { NasRegistry } from './nas/nas-registry.js';
import type { Logger } from './logger.js';
import { Metrics } from './metrics.js';
import { keys } from './redis/keys.js';
import { ReplicaBarrier } from './redis/replica-barrier.js';
import { createRedis } from './redis/scripts.js';
import { ActorPool } from './sessions/actor-pool.js';
import { MIRROR_HITS_HELP, MIRROR_HITS_METRIC } from './sessions/mirror-view.js';
import { DisabledActors, type SessionActors } from './sessions/actor-ports.js';
import { BlockService } from './sessions/block-service.js';
import { NasCommandRelay, RadiusGateway } from './nas/radius-gateway.js';
import { SessionService } from './sessions/session-service.js';
import { DecisionReader } from './decisions/decision-reader.js';
import { ReportService } from './reports/report-service.js';
import { ConsoleReportService } from './reports/console-report.js';
import { SignInMover } from './reports/signin-mover.js';
import { ReportPdfService } from './reports/report-pdf-service.js';
import { DecisionRecorder } from './decisions/decision-recorder.js';
import { MetricsDecisionSink } from './signin/decision-sink.js';
import { OtpFallbackPoller } from './signin/otp/fallback-poller.js';
import { OtpHasher } from './signin/otp/otp-code.js';
import { OtpService } from './signin/otp/otp-service.js';
import type { OtpDecisionSink, SessionStarter } from './signin/otp/types.js';
import { OutboundHttp } from './net/outbound-http.js';
import { OutboundPolicy } from './net/outbound-target.js';
import { DeliveryCallbacks } from './signin/providers/delivery-callbacks.js';
import { SecretBox } from './secrets/secret-box.js';
import { SecretStore } from './secrets/secret-store.js';
import { MsgappProviderStore } from './signin/providers/msgapp-provider-store.js';
import { ProviderFailures } from './signin/providers/provider-failures.js';
import { ProviderRegistry } from './signin/providers/provider-registry.js';
import type { OtpSenders, SignInConfigSource } from './signin/providers/types.js';
import { SignInService } from './signin/sign-in-service.js';
import { SponsorService } from './signin/sponsor/sponsor-service.js';
import { SponsorStore } from './signin/sponsor/sponsor-store.js';
import { SettingsTerms } from './signin/settings-terms.js';
import { SignInSettingsService } from './signin/sign-in-settings.js';
import { deadLettersBetween } from './store/dead-letters.js';
import { PortalSignIn } from './signin/portal-sign-in.js';
import { PortalState } from './signin/portal-state.js';
import { UamCredentials } from './signin/uam-credential.js';
import { SinkWorker } from './store/sink-worker.js';
import { createPool, migrate, type Pool } from './store/postgres.js';
import { CredentialVerifier } from './tenants/credentials.js';
import { TenantService } from './tenants/tenant-service.js';
import { BandwidthProfileService } from './vouchers/bandwidth-profile-service.js';
import { VoucherLoader } from './vouchers/voucher-loader.js';
import { VoucherService } from './vouchers/voucher-service.js';
import { VoucherImport } from './vouchers/voucher-import.js';
import { EventTrimmer } from './events/event-trimmer.js';
import { WebhookDeliveries } from './webhooks/webhook-deliveries.js';
import { DispatcherWorker } from './webhooks/dispatcher-worker.js';
import { WebhookStore } from './webhooks/webhook-store.js';
import { PmsGuestStore } from './pms/pms-guest-store.js';
import { PmsLinkStore } from './pms/pms-link-store.js';
import { PmsLinks } from './pms/pms-links.js';
import { PmsMethod } from './pms/pms-method.js';
import { PmsService } from './pms/pms-service.js';
import { personalDataRetention } from './privacy/legal-holds.js';
import { PrivacyService } from './privacy/privacy-service.js';
import { ReportScheduler } from './schedules/report-scheduler.js';
import { ScheduleStore } from './schedules/schedule-store.js';

export interface EngineOptions {
  /** The clock; tests move it to check expiry at the boundary. */
  now?: () => number;
  /** Run the outbox sink in this process (default true). */
  sink?: boolean;
  /** Start the actor threads (default true; the CLI needs none). */
  actors?: boolean;
  /** OTP sign-in ports (tests inject fakes); unset ones: no sender configured, no session start. */
  otp?: { senders?: OtpSenders; sessions?: SessionStarter; decisions?: OtpDecisionSink; pollMs?: number };
  /** Send webhook deliveries and trim the events streams in this process (default: as `sink`; the CLI runs neither). */
  webhooks?: boolean;
}

/** How long a report waits for a connection to DATABASE_REPLICA_URL's replica (docs/scale.md). */
const REPLICA_CONNECT_TIMEOUT_MS = 5_000;

/**
 * The engine: every service the HTTP and RADIUS layers use, wired once.
 * Start-up work (connections, migrations, script registration, threads)
 * happens here; nothing of it happens per request.
 */
export class Engine {
  readonly redis: Redis;
  readonly pool: Pool;
  /** Where the reports read: DATABASE_REPLICA_URL's replica, else `pool`. */
  private readonly reportReads: Pool;
  readonly metrics = new Metrics({ processMetrics: true });
  readonly tenants: TenantService;
  readonly credentials: CredentialVerifier;
  readonly hotspots: HotspotService;
  readonly nas: NasRegistry;
  readonly vouchers: VoucherService;
  readonly voucherImport: VoucherImport;
  readonly bandwidthProfiles: BandwidthProfileService;
  readonly blocks: BlockService;
  /** The outbox sink, on its own worker thread (started by start() unless options.sink is false). */
  readonly sink: SinkWorker;
  readonly actors: ActorPool | null;
  readonly signIn: SignInService;
  readonly sessions: SessionService;
  readonly radius: RadiusGateway;
  readonly audit: AuditService;
  readonly auditLog: AuditLog;
  private readonly auditIntents: AuditIntentSweep;
  readonly evidencePacks: EvidencePackService;
  /** Printable voucher sheets (PDF with QR codes), drawn on a piscina thread. */
  readonly voucherSheets: VoucherSheetService;
  readonly dailySummary: DailySummary;
  /** Per-tenant sign-in settings: methods, senders (references only), OTP limits, per-method session terms. */
  readonly signInSettings: SignInSettingsService;
  readonly secrets: SecretStore;
  /** OTP codes by SMS, messaging app and e-mail: request, verify, status, delivery. */
  readonly otp: OtpService;
  private readonly otpPoller: OtpFallbackPoller;
  /** Platform table of per-tenant messaging-app providers (/admin/msgapp-providers). */
  readonly msgappProviders: MsgappProviderStore;
  /** The senders OTP codes go out with, per tenant and channel. */
  readonly otpSenders: ProviderRegistry;
  /** The outbound HTTP client of the main thread: providers' sends (keep-alive, deadlines, pinned addresses); webhook deliveries have one of the same on their thread. */
  readonly outboundHttp: OutboundHttp;
  /** Checks providers' delivery callbacks and tells the OTP service. */
  readonly otpDelivery: DeliveryCallbacks;
  /** Portal page: outcomes of form posts, gateway hand-back, the RFC 8908 view. */
  readonly uamCredentials: UamCredentials;
  readonly portal: PortalState;
  /** Every portal sign-in (voucher, OTP codes, ...) inside the portal's rules: terms, gateway, hand-back, the outcome kept for the page. */
  readonly portalSignIn: PortalSignIn;
  /** Appends domain events made outside Lua scripts to the tenant's event stream (engine/events/). */
  readonly events: EventLog;
  /** Dashboard activity: every sign-in decision (portal, OTP, RADIUS) counted, listed and emitted (engine/decisions/). */
  readonly decisions: DecisionRecorder;
  /** The dashboard's `decisions` call: the latest decisions and their aggregates. */
  readonly decisionReader: DecisionReader;
  // Dashboard operations (engine/incidents/, engine/posture/, engine/nas/, engine/views/): incidents and their detectors, posture, NAS presence,
  // switches and topology, audit paging, JIT approvals.
  readonly incidents: IncidentService;
  private readonly incidentWatch: IncidentWatch;
  readonly posture: PostureService;
  /** Which NAS clients speak and through which ports; fed by the RADIUS gateway on every packet. */
  readonly presence: NasPresence;
  readonly network: NetworkView;
  readonly auditPages: AuditPages;
  readonly jitApprovals: JitApprovals;
  /** Sponsor approval: guests' requests, the sponsors' links, the console's list (engine/signin/sponsor/). */
  readonly sponsor: SponsorService;
  /** Dashboard read models: overview, kpis-extra, sessions/active, sites, sites/metrics (engine/views/). */
  readonly readModels: DashboardReadModels;
  /** Streams: this process's one reader of the tenants' event streams, handing events to local listeners. */
  readonly fanout: EventFanout;
  /** Streams: the dashboard's coalesced invalidations per tenant and stream, over the fan-out (http/sse.ts serves them). */
  readonly streams: InvalidationStreams;
  /** Webhook subscriptions (engine/webhooks/): Postgres rows, sealed secrets, the Redis mirror the router reads. */
  readonly webhooks: WebhookStore;
  /** A subscription's recent attempts, its dead letters, redelivery. */
  readonly webhookDeliveries: WebhookDeliveries;
  /** The webhook dispatcher on a thread of its own (engine/webhooks/dispatcher-thread.ts); its stats for tests. */
  readonly webhookDispatcher: DispatcherWorker;
  /** The events streams' one trimmer (never past what the webhook router has not read). */
  private readonly eventTrimmer: EventTrimmer;
  private readonly runWebhooks: boolean;
  /** Room sign-in over the hotels' PMS links (engine/pms/): link settings, status, verify. */
  readonly pms: PmsService;
  /** Personal data (engine/privacy/): data-subject requests, access export, erasure under legal hold, deletions, summary. */
  readonly privacy: PrivacyService;
  /** Session report and analytics over the rollups the sink keeps (engine/reports/). */
  readonly reports: ReportService;
  /** The console's reports (presets, several venues) over the rollups of 023 and 025 (engine/reports/console-report.ts). */
  readonly consoleReports: ConsoleReportService;
  /** Sign-in attempts per hotspot, hour, method and outcome moved from Redis's hour buckets into report_signins (every minute, with the sink). */
  readonly signInMover: SignInMover;
  /** The PDF report (cover, KPIs, charts, tables, notes), drawn on a piscina thread; the routes and the scheduled e-mail call it. */
  readonly reportPdf: ReportPdfService;
  /** Scheduled report mail (engine/schedules/): the schedules and their runs; every process sends through its scheduler. */
  readonly reportSchedules: ScheduleStore;
  private readonly reportScheduler: ReportScheduler;
  private readonly runSink: boolean;
  private retentionTimer: NodeJS.Timeout | undefined;

  constructor(readonly config: Config, readonly log: Logger, options: EngineOptions = {}) {
    const now = options.now ?? Date.now;
    this.runSink = options.sink ?? true;
    this.redis = createRedis(config.redisUrl, log, {}, this.metrics);
    this.events = new EventLog(this.redis, now);
    // Streams: the reader connects on the first listener only, so a process serving no stream holds no blocked connection.
    this.fanout = new EventFanout(config.redisUrl, this.redis, log.child({ component: 'event-fanout' }));
    this.streams = new InvalidationStreams(this.fanout, config.streams.coalesceMs);
    this.metrics.gauge('event_fanout_tenants', 'Tenants whose event streams this process reads (they have stream listeners here)', () => this.fanout.tenantCount);
    this.metrics.counterFrom('event_fanout_events_total', 'Domain events the fan-out handed to listeners in this process', () => this.fanout.delivered);
    this.pool = createPool(config.databaseUrl, log);
    // A replica that is gone answers the reports 503 within REPLICA_CONNECT_TIMEOUT_MS, never a hang.
    this.reportReads = config.databaseReplicaUrl ? createPool(config.databaseReplicaUrl, log, 10, REPLICA_CONNECT_TIMEOUT_MS) : this.pool;
    // Built first: the services below tell them of changes through constructor callbacks.
    this.sink = new SinkWorker({ redisUrl: config.redisUrl, databaseUrl: config.databaseUrl, nodeId: config.nodeId, logLevel: config.logLevel },
      log.child({ component: 'outbox-sink' }), this.metrics);
    this.nas = new NasRegistry(this.pool, log.child({ component: 'nas-registry' }));
    this.tenants = new TenantService(this.pool, this.redis, () => this.sink.tenantsChanged());
    this.credentials = new CredentialVerifier(this.tenants, config.jwtSecret, config.jwtLeewaySec);
    this.hotspots = new HotspotService(this.pool, () => this.nas.refresh());
    this.blocks = new BlockService(this.pool, this.redis, now);
    this.bandwidthProfiles = new BandwidthProfileService(this.pool);
    this.vouchers = new VoucherService(this.pool, this.redis, now, this.bandwidthProfiles, new VoucherLoader(this.pool, this.redis, this.blocks));
    this.voucherImport = new VoucherImport(this.pool, this.redis, this.bandwidthProfiles, undefined, now);
    // Every URL a tenant names is checked at save and at every connection (engine/net/outbound-target.ts).
    const outbound = new OutboundPolicy({ allowPrivate: config.allowPrivateTargets });
    this.outboundHttp = new OutboundHttp({ outbound });
    // Tenant secrets given inline, sealed under SECRETS_KEY (engine/secrets/); env:// references need none.
    this.secrets = new SecretStore(this.pool, new SecretBox(config.secretsKeys.current, config.secretsKeys.old));
    this.signInSettings = new SignInSettingsService(this.pool, outbound, now, this.secrets);
    // Dashboard operations: built before the RADIUS gateway and the OTP senders, which report to them.
    const limits = config.incidents;
    this.incidents = new IncidentService(this.pool, this.events, this.metrics);
    this.posture = new PostureService(this.redis, this.hotspots, now);
    this.presence = new NasPresence(this.redis, log.child({ component: 'nas-presence' }), limits.nasSilentSec * 1000, now);
    // One directory of the tenants' sites and NAS clients (cached a few seconds) for every dashboard read.
    const sites = new SiteDirectory(this.pool, this.hotspots, now);
    this.network = new NetworkView(sites, this.redis, limits.nasSilentSec * 1000, now);
    this.auditPages = new AuditPages(this.pool);
    const providerFailures = new ProviderFailureWindow(this.redis, limits.providerFailures, limits.providerWindowSec * 1000,
      log.child({ component: 'provider-failures' }), now);
    this.incidentWatch = new IncidentWatch({
      tenants: this.tenants, nas: this.nas, incidents: this.incidents, events: this.events, providerFailures,
      redis: this.redis, pool: this.pool, thresholds: limits, log: log.child({ component: 'incident-watch' }), now,
      guessing: new GuessingDetector(this.redis, this.incidents, this.signInSettings),
    });

    // The actors reach the NAS through the relay; radius/ plugs its CoA client into it later (setNasControl).
    const relay = new NasCommandRelay(this.nas, log.child({ component: 'radius-gateway' }));
    this.actors = (options.actors ?? true)
      ? new ActorPool({
          threads: config.actorThreads, redisUrl: config.redisUrl, nodeId: config.nodeId, logLevel: config.logLevel, leaseMs: config.hotspotLeaseMs,
          log: log.child({ component: 'actors' }), nas: relay, metrics: this.metrics,
          redis: this.redis, // forwards what the hotspot's lease holder must handle (docs/scale.md, "Forwarding")
        })
      : null;
    const actors = this.actors ?? new DisabledActors();
    // Dashboard activity: decisions go to Redis (counts, the decisions list, auth.* events) and to the Prometheus counter.
    this.decisions = new DecisionRecorder(this.redis, log.child({ component: 'decisions' }), this.metrics, new MetricsDecisionSink(this.metrics));
    const decisions = this.decisions;
    this.decisionReader = new DecisionReader(this.redis, now);
    this.signIn = new SignInService({
      redis: this.redis, hotspots: this.hotspots, loader: this.vouchers, actors, decisions,
      metrics: this.metrics, terms: new SettingsTerms(this.signInSettings), guessing: this.signInSettings, now,
      defaults: { sessionMinutes: config.defaultSessionMinutes, idleSec: config.defaultIdleTimeoutSec },
      ...(config.redisWait.replicas > 0 ? { barrier: new ReplicaBarrier(this.redis, config.redisWait.replicas, config.redisWait.timeoutMs) } : {}),
    });
    this.sessions = new SessionService(this.pool, this.redis, actors, this.hotspots, this.blocks, now);
    this.uamCredentials = new UamCredentials(this.redis);
    this.radius = new RadiusGateway(this.nas, actors, this.signIn, relay, this.uamCredentials, decisions, this.presence, now);
    this.audit = new AuditService(this.pool);
    this.auditLog = new AuditLog(this.redis, now);
    this.auditIntents = new AuditIntentSweep(this.auditLog, this.tenants, log.child({ component: 'audit-intents' }));
    this.evidencePacks = new EvidencePackService({
      databaseUrl: config.databaseUrl, tsaUrl: config.tsaUrl, logLevel: config.logLevel, log: log.child({ component: 'evidence-packs' }), now,
    });
    this.voucherSheets = new VoucherSheetService({
      pool: this.pool, hotspots: this.hotspots, publicUrl: config.portalPublicUrl, log: log.child({ component: 'voucher-sheets' }),
    });
    this.dailySummary = new DailySummary(this.pool, new TimestampStore(this.pool, config.tsaUrl ? new TsaClient(config.tsaUrl) : null), now,
      (tenant, from, to) => deadLettersBetween(this.redis, tenant, from, to));
    // OTP sign-in (engine/signin/otp/, engine/signin/providers/): codes, limits and the delivery
    // fallback; a verified code starts its session through the same pipeline as a voucher, and its
    // decisions go to the same sink. Senders read the tenant's sign-in settings and the platform's
    // messaging-app provider record; either changing drops the tenant's cached senders.
    const senderConfig: SignInConfigSource = {
      smsConfig: async (tenantId) => (await this.signInSettings.get(tenantId)).sms,
      emailConfig: async (tenantId) => (await this.signInSettings.get(tenantId)).email,
    };
    this.msgappProviders = new MsgappProviderStore(this.pool, outbound, (tenantId) => this.otpSenders.invalidate(tenantId), this.secrets);
    this.otpSenders = new ProviderRegistry({
      config: senderConfig, msgapp: this.msgappProviders, redis: this.redis,
      failures: new ProviderFailures(log.child({ component: 'otp-providers' }), this.metrics,
        (tenantId, provider, code) => providerFailures.record(tenantId, provider, code)),
      outbound, http: this.outboundHttp, smtpUrl: config.smtpUrl, smtpFrom: config.smtpFrom, now, secrets: this.secrets,
    });
    this.signInSettings.onChange((tenantId) => this.otpSenders.invalidate(tenantId));
    this.otp = new OtpService(this.redis, this.hotspots, this.signInSettings, new OtpHasher(config.otpKey), {
      senders: options.otp?.senders ?? this.otpSenders,
      sessions: options.otp?.sessions ?? this.signIn,
      // A code's outcome is recorded by the pipeline its verify runs through; the service records only
      // what it refuses before that (limits, a send that failed, a malformed identity), all rejects.
      decisions: options.otp?.decisions ?? decisions,
    }, this.metrics, log.child({ component: 'otp' }), now);
    this.otpPoller = new OtpFallbackPoller(this.otp, log.child({ component: 'otp-fallback' }), now, options.otp?.pollMs);
    this.otpDelivery = new DeliveryCallbacks(this.msgappProviders, this.otpSenders, log.child({ component: 'otp-delivery' }), this.otp);
    // Room sign-in (engine/pms/): each hotel's FIAS link held by one process under a lease; a
    // check-out ends the reservation's sessions through the operator disconnect's path.
    const pmsGuests = new PmsGuestStore(this.redis);
    const endForPms = (tenantId: string, hotspotId: string, sid: string): Promise<boolean> =>
      this.sessions.endLive(tenantId, hotspotId, sid, 'pms_checkout', 'pms');
    const pmsLinkStore = new PmsLinkStore(this.pool, outbound);
    const pmsLinks = new PmsLinks(pmsLinkStore, pmsGuests, this.redis, outbound, endForPms, config.pms,
      config.nodeId, this.metrics, log.child({ component: 'pms' }), now);
    const pmsMethod = new PmsMethod(this.redis, pmsGuests, (hs) => pmsLinks.linkOf(hs), this.signInSettings, new SettingsTerms(this.signInSettings),
      { sessionMinutes: config.defaultSessionMinutes, idleSec: config.defaultIdleTimeoutSec }, config.pms.staleAfterMs, endForPms, this.metrics);
    this.pms = new PmsService(pmsLinkStore, pmsGuests, pmsLinks, pmsMethod, this.signIn, config.pms.staleAfterMs, now);
    this.reports = new ReportService(this.pool, now, this.reportReads);
    this.consoleReports = new ConsoleReportService(this.reportReads, now);
    this.signInMover = new SignInMover(this.pool, this.redis, log.child({ component: 'signin-mover' }), now);
    this.reportPdf = new ReportPdfService({ pool: this.reportReads, log: log.child({ component: 'report-pdf' }), now });
    this.portal = new PortalState(this.redis, this.hotspots, now);
    this.portalSignIn = new PortalSignIn(this.hotspots, this.uamCredentials, this.portal, log.child({ component: 'portal' }));
    // Sponsor approval: the e-mail goes through the tenant's e-mail sender; approval starts the session through the pipeline.
    this.sponsor = new SponsorService({
      store: new SponsorStore(this.redis), hotspots: this.hotspots, settings: this.signInSettings, senders: options.otp?.senders ?? this.otpSenders,
      starter: this.signIn, decisions, admit: (ref, req) => this.portalSignIn.admit(ref, req),
      handback: (ref, gw, sid, mac, url) => this.portalSignIn.handbackFor(ref, gw, sid, mac, url),
      publicUrl: config.portalPublicUrl, log: log.child({ component: 'sponsor' }), now,
    });
    this.jitApprovals = new JitApprovals(this.sponsor);
    // Dashboard read models: counters from Redis, open incidents from the incident service (cached a few seconds).
    this.readModels = new DashboardReadModels({
      redis: this.redis, sites, now, incidents: new OpenIncidents(this.incidents, now), nasOnlineMs: limits.nasSilentSec * 1000,
    });
    // Webhooks (engine/webhooks/, docs/webhooks.md): the same outbound policy as the providers, checked at save and pinned at connect.
    this.runWebhooks = options.webhooks ?? this.runSink;
    this.webhooks = new WebhookStore(this.pool, this.redis, this.secrets, outbound, now);
    this.webhookDeliveries = new WebhookDeliveries(this.redis, this.webhooks, now);
    // Sending runs on its own thread (its own Redis, pool and outbound client, the same policy): the main loop's
    // sign-ins and the deliveries' awaits do not queue behind each other.
    this.webhookDispatcher = new DispatcherWorker({
      redisUrl: config.redisUrl, databaseUrl: config.databaseUrl, logLevel: config.logLevel,
      allowPrivateTargets: config.allowPrivateTargets, secretsKeys: config.secretsKeys, settings: config.webhooks,
    }, log.child({ component: 'webhooks' }), this.metrics);
    this.eventTrimmer = new EventTrimmer(this.redis, () => this.tenants.list().then((ts) => ts.map((t) => t.id)), log.child({ component: 'event-trimmer' }));
    this.privacy = new PrivacyService(this.pool, this.redis, this.sessions, config.otpKey, now);
    this.reportSchedules = new ScheduleStore(this.pool, now);
    this.reportScheduler = new ReportScheduler({
      pool: this.pool, sources: { reports: this.reports, pdf: this.reportPdf, dailySummary: this.dailySummary, privacy: this.privacy },
      smtpUrl: config.smtpUrl, smtpFrom: config.smtpFrom, outbound, metrics: this.metrics, log: log.child({ component: 'report-schedules' }),
      nodeId: config.nodeId, now, settings: config.reportSchedules,
    });
    this.metrics.gauge('live_sessions_in_actors', 'Live sessions held by hotspot actors', () => this.actors?.liveSessions ?? 0);
    // RADIUS threads count their own hits under the same name: /metrics sums them (Metrics.absorb).
    this.metrics.counterFrom(MIRROR_HITS_METRIC, MIRROR_HITS_HELP, () => this.actors?.mirrorHits ?? 0);
  }

  /** Applies migrations and starts background work. */
  async start(): Promise<void> {
    await migrate(this.pool, this.log);
    await this.tenants.ensureRedisForAll();
    await this.nas.start();
    this.otpPoller.start(); // OTP sign-in: fallback watches survive restarts in Redis
    this.presence.start(); // dashboard operations
    this.incidentWatch.start();
    this.auditIntents.start();
    this.pms.links.start(); // room sign-in: take the PMS links nobody holds
    if (this.config.reportSchedules.run) this.reportScheduler.start(); // scheduled report mail: due periods survive restarts in Postgres
    if (this.actors) await this.wakeLiveHotspots(this.actors);
    if (this.runWebhooks) {
      this.webhookDispatcher.start(); // owed deliveries survive restarts in Redis
      this.eventTrimmer.start();
    }
    if (this.runSink) {
      this.sink.start();
      this.signInMover.start(); // the console's sign-in counts, Redis -> Postgres
      // Retention runs hourly; it drops a day's partition once the day is past the legal period.
      const retention = (): void => void runRetention(this.pool, this.log, Date.now(), (c, at) => personalDataRetention(c, this.log, at)).catch((err: Error) => this.log.warn({ err: err.message }, 'retention run failed'));
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
  private async wakeLiveHotspots(actors: SessionActors): Promise<void> {
    const { rows } = await this.pool.query<{ tenant_id: string; id: string; timezone: string }>('SELECT tenant_id, id, timezone FROM hotspots');
    for (let i = 0; i < rows.length; i += 1000) {
      const chunk = rows.slice(i, i + 1000);
      const counts = await execPerSlot(this.redis, chunk, (h) => keys.live(h.tenant_id, h.id), (p, h) => p.zcard(keys.live(h.tenant_id, h.id)));
      chunk.forEach((h, k) => {
        if (Number(counts[k]?.[0]?.[1] ?? 0) > 0) actors.wake(h.tenant_id, h.id, h.timezone);
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

  /** A webhook subscription changed through this process: the dispatcher reads the tenants again at once. */
  webhooksChanged(): void {
    this.webhookDispatcher.changed();
  }

  async close(): Promise<void> {
    this.streams.close(); // streams: their clients are ended first, then the reader goes
    await this.reportScheduler.stop(); // the mail being sent goes out; nothing more is claimed
    await this.webhookDispatcher.stop(); // attempts under way are settled, not left to their lease
    await this.eventTrimmer.stop();
    await this.fanout.close();
    if (this.retentionTimer) clearInterval(this.retentionTimer);
    await this.otpPoller.stop(); // OTP sign-in
    await this.incidentWatch.stop(); // dashboard operations
    await this.auditIntents.stop();
    await this.pms.links.close(); // LE sent, leases given back: another process takes the links at once
    await this.presence.close();
    await this.actors?.close();
    await this.evidencePacks.close();
    await this.voucherSheets.close();
    await this.reportPdf.close();
    this.nas.stop();
    this.outboundHttp.close();
    this.signInMover.stop();
    await this.sink.stop();
    await this.decisions.close(); // dashboard activity: the last decisions written
    this.redis.disconnect();
    if (this.reportReads !== this.pool) await this.reportReads.end();
    await this.pool.end();
  }
}
